/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_tunables_table.h - every tunable of the core, one entry each.
 *
 * This is the only list of tunables.  From it come the core's parsing,
 * range checks, defaults, set and get (fq_tunables.c) and its name list
 * (fq_sched_tunables[]), fairq.ko's configfs and sysfs attributes,
 * fairqctl's fairqtab keys, the tunables table of docs/INTERFACE.md
 * (make -C sched doc), which tunables are for users and which for
 * experiments, and the property test's choice of tunable.
 * Plain preprocessor text: the driver, the host programs and tools/
 * include it.
 *
 * Define FQ_TUNABLE(name, field, kind, min, max, def, unit, words, set,
 * doc), include this file, undefine it: one expansion per tunable, in
 * the order of the attributes.  Without FQ_TUNABLE defined it gives only
 * enum fq_tun_kind.  fq_sched.h makes FQ_TUN_<name>, the index of a
 * tunable in every table made from the list, and FQ_TUN_COUNT.
 *
 *   name   the attribute and fq_sched_set() name, as an identifier
 *   field  the u32 member of struct fq_sched that holds the value
 *   kind   FQ_TK_NUMBER: decimal, min..max;
 *          FQ_TK_WORD: one of @words, kept as its index (min, max unused);
 *          FQ_TK_AUTO: decimal min..max (min >= 1) or the word "auto",
 *          kept as 0 (def 0 = auto);
 *          FQ_TK_ALLOC: a number that bounds the flows' memory;
 *          fq_sched_set() may free memory (fq_sched_set_needs_alloc()),
 *          and fairq.ko takes it in configfs while powered off,
 *          read-only in sysfs
 *   def    default (FQ_TK_WORD: the index of the word)
 *   unit   what a number counts, for the documentation ("" for words)
 *   words  FQ_TK_WORD: the words in value order, one space apart; else ""
 *   set    NULL: a valid value is stored as it is; else the function in
 *          fq_tunables.c that checks what a range cannot (a power of two,
 *          another tunable) and applies the side effects (rebuilds)
 *   doc    FQ_DOC(who, "one line for the documentation"), who one of
 *          users: a tunable a user may want to set (which policy, a
 *            fixed depth for a device that must not be probed, the
 *            interactive boost on or off);
 *          experiments: a knob of the mechanisms, for measuring and
 *            comparing them; the default is what every user should run.
 *          A user can leave every tunable at its default.  Only
 *          sched/tests/fq_tundoc.c expands this argument (the "for"
 *          column of docs/INTERFACE.md's table, which fairq(4)'s TUNABLES
 *          subsections must match: tests/host/doc-tables.sh); the other
 *          includers leave it unexpanded, so FQ_DOC is defined there only.
 *
 * Adding a tunable: one entry here, the u32 field it names in struct
 * fq_sched, the code that reads the field, and a set function if storing
 * the value is not all there is to it (sched/README.md, "Adding a tunable").
 */
#ifndef FQ_TUNABLES_KINDS
#define FQ_TUNABLES_KINDS
enum fq_tun_kind {
	FQ_TK_NUMBER,
	FQ_TK_WORD,
	FQ_TK_ALLOC,
	FQ_TK_AUTO,
};
#endif

#ifdef FQ_TUNABLE
FQ_TUNABLE(policy, policy, FQ_TK_WORD, 0, 0, 0, "", "cfq sfq fifo",
	   fq_set_policy,
	   FQ_DOC(users, "dispatch policy: a queue per flow, hashed buckets, or arrival order; a switch keeps every queued request"))
FQ_TUNABLE(fairness, fairness, FQ_TK_WORD, 0, 0, FQ_FAIR_TIME, "",
	   "requests bytes time", fq_set_rebuild,
	   FQ_DOC(experiments, "unit of a turn's credit: a request, a byte, or the device time the request is modelled to take (learnt online; bytes until the model exists)"))
FQ_TUNABLE(quantum, quantum, FQ_TK_NUMBER, 1, 1024, 8, "requests", "", NULL,
	   FQ_DOC(experiments, "requests per cfq turn at weight 100"))
FQ_TUNABLE(quantum_bytes, quantum_bytes, FQ_TK_NUMBER, 4096, 64u << 20,
	   512u << 10, "bytes", "", NULL,
	   FQ_DOC(experiments, "bytes per turn at weight 100 with fairness=bytes (cfq and sfq)"))
FQ_TUNABLE(quantum_us, quantum_us, FQ_TK_NUMBER, 10, 1000000, 1000, "us", "",
	   NULL,
	   FQ_DOC(experiments, "device time per turn at weight 100 with fairness=time (cfq and sfq); until the cost model exists a request is charged its bytes at quantum_bytes per quantum_us"))
FQ_TUNABLE(buckets, buckets, FQ_TK_NUMBER, 1, 65536, 64, "buckets", "",
	   fq_set_buckets,
	   FQ_DOC(experiments, "sfq buckets; a power of two, at most max_flows"))
FQ_TUNABLE(perturb_ms, perturb_ms, FQ_TK_NUMBER, 0, 3600000, 5000, "ms", "",
	   fq_set_perturb,
	   FQ_DOC(experiments, "sfq re-hash period, 0 = never"))
FQ_TUNABLE(depth, depth, FQ_TK_AUTO, 1, 4096, 0, "requests", "",
	   fq_set_depth,
	   FQ_DOC(users, "requests in flight on the lower device at most, or auto: the fewest that keep the device saturated, learnt online, at most depth_max"))
FQ_TUNABLE(depth_max, depth_max, FQ_TK_NUMBER, 1, 4096, 256, "requests", "",
	   fq_set_depth_max,
	   FQ_DOC(experiments, "upper bound of depth=auto"))
FQ_TUNABLE(idle_us, idle_us, FQ_TK_NUMBER, 0, 100000, 2000, "us", "", NULL,
	   FQ_DOC(experiments, "anticipation cap: a sync flow that has just emptied keeps a slot for 2 x its think time when that is below this and its service time (a flow in its interactive boost: below 10 x this and 4 x its service time), 0 = off"))
FQ_TUNABLE(boost_ms, boost_ms, FQ_TK_NUMBER, 0, 60000, 3000, "ms", "", NULL,
	   FQ_DOC(users, "interactive boost: a new sync flow of the BE class goes ahead of the bulk flows, at most half of the class's service, for this long or until it turns greedy (more than 4 requests outstanding, one above 128 KiB, or async), 0 = off"))
FQ_TUNABLE(idle_grace_ms, grace_ms, FQ_TK_NUMBER, 0, 60000, 200, "ms", "", NULL,
	   FQ_DOC(experiments, "the IDLE class runs only after this long without other work"))
FQ_TUNABLE(fifo_expire_sync_ms, expire_ms[0], FQ_TK_NUMBER, 1, 60000, 250,
	   "ms", "", NULL,
	   FQ_DOC(experiments, "bounded wait of sync requests, counted from when a request is first in its flow's queue; with cfq and sfq only a flow that has not had its share this round (or that a higher class keeps waiting) expires"))
FQ_TUNABLE(fifo_expire_async_ms, expire_ms[1], FQ_TK_NUMBER, 1, 60000, 1000,
	   "ms", "", NULL,
	   FQ_DOC(experiments, "bounded wait of async requests (the same)"))
FQ_TUNABLE(max_flows, max_flows, FQ_TK_ALLOC, 1, 65536, 65536, "flows", "",
	   fq_set_max_flows,
	   FQ_DOC(experiments, "flows that may exist at once, at least buckets; memory is taken per flow as keys appear (a bound, not a size); beyond it new keys share one overflow flow"))
FQ_TUNABLE(max_queued, max_queued, FQ_TK_NUMBER, 1, 65536, 1024, "requests", "",
	   NULL,
	   FQ_DOC(experiments, "requests waiting in fairq at most (not in flight); beyond it, or beyond its flow's share once half are used (max_queued over the flows, at most half: a lone flow leaves room for a newcomer), a submitter waits (REQ_NOWAIT: EAGAIN)"))
FQ_TUNABLE(writeback, writeback, FQ_TK_WORD, 0, 0, FQ_WB_YIELD, "",
	   "fair yield", NULL,
	   FQ_DOC(experiments, "yield (default): a flow queues at most two turns' worth of async writes (what its turns serve, so heavier flows queue more), and while no sync I/O is active at least depth_now of them (its submitter waits beyond); while sync I/O is active (a sync request queued or in flight, or queued within fifo_expire_async_ms) fairq.ko cuts them into pieces the cost model prices at about two 4 KiB writes (before a model exists, of one to eight pages); fair: async writes are scheduled like any other request"))
FQ_TUNABLE(fastpath, fastpath, FQ_TK_WORD, 0, 0, 1, "", "off on", NULL,
	   FQ_DOC(experiments, "on: while nothing is queued and fewer than the depth are in flight, a request may bypass the scheduler (fairq.ko only: no lock, no clock; not in any flow's figures; fairq-nbd schedules every request either way); off: every request is scheduled"))
#endif
