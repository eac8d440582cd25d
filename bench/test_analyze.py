#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of bench/analyze.py's arithmetic: a small fixture of BENCH
lines (two runs) with hand-computed expected totals, slowdowns, G and
Jain. Python 3 standard library only.

usage: bench/test_analyze.py        (ends with "N passed, N failed")
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402

PASSED, FAILED = 0, 0


def check(what, got, want, tol=1e-6):
    global PASSED, FAILED
    ok = (got == want) if (want is None or isinstance(want, (str, bool, tuple, list))) \
        else (got is not None and abs(got - want) <= tol * max(1.0, abs(want)))
    if ok:
        PASSED += 1
    else:
        FAILED += 1
        print(f"FAIL {what}: got {got!r}, want {want!r}")


def job(name, bw_bytes, iops, bs="4k", p99_ns=None):
    clat = {"mean": 1e6}
    if p99_ns is not None:
        clat["percentile"] = {"50.000000": p99_ns // 2, "99.000000": p99_ns}
    return {"jobname": name, "job options": {"name": name, "bs": bs},
            "read": {"io_bytes": bw_bytes * 3, "bw_bytes": bw_bytes, "iops": iops,
                     "runtime": 3000, "total_ios": int(iops * 3), "clat_ns": clat},
            "write": {}}


def bench(dev, wl, cfg, rep, ms, reads, rsect, specs, jobs, procio=None,
          cgprocs="", fairq0=None, fairq=None, fios=None):
    o = {"dev": dev, "cfg": cfg, "wl": wl, "rep": rep, "rc": 0, "wall_s": 5.0,
         "lower": "x", "target": "/dev/x", "args": "", "specs": specs,
         "win": {"ms": ms, "cpu_ms": 100, "reads": reads, "rsect": rsect,
                 "writes": 0, "wsect": 0},
         "fairq0": fairq0 or {}, "fairq": fairq or {}, "slab": "",
         "procio": procio or ["", ""], "cgprocs": cgprocs, "err": "",
         "fio": fios if fios is not None else [{"jobs": jobs}]}
    return "BENCH " + json.dumps(o) + "\n"


def pio(entries):
    """[(pid, tid, bytes at start, bytes at end)] -> procio pair"""
    return [" ".join(f"{p}:{t}:{a}:0" for p, t, a, _ in entries),
            " ".join(f"{p}:{t}:{b}:0" for p, t, _, b in entries)]


K4 = 4096
MB = 1 << 20


def wjob(name, bs, io_bytes, sync_p99_ns=None):
    """A fio write job (json+); with sync_p99_ns, fio's "sync" section
    (fdatasync=1): N syncs, their latency percentiles in ns."""
    j = {"jobname": name, "job options": {"name": name, "bs": bs},
         "read": {}, "write": {"io_bytes": io_bytes, "bw_bytes": io_bytes // 8,
                               "iops": 1.0, "runtime": 8000, "total_ios": 8,
                               "clat_ns": {"mean": 1e4}}}
    if sync_p99_ns == 0:      # no fdatasync completed after fio's ramp
        j["sync"] = {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0}}
    elif sync_p99_ns is not None:
        j["sync"] = {"total_ios": 0, "lat_ns": {
            "min": 1000, "max": sync_p99_ns * 2, "mean": sync_p99_ns / 4, "N": 100,
            "percentile": {"50.000000": sync_p99_ns // 10, "99.000000": sync_p99_ns}}}
    return j


def wbench(dev, wl, cfg, jobs, cg, wsect, rsect=0, commit_ops=0, fairq0=None,
           fairq=None, flow_names=""):
    """A write-family BENCH line, 8 s window: jobs [(name, spec, fio job)];
    cg {name: bytes of its data that reached the disk over the window}:
    each copy's cgroup dirtied 8 MiB more, of which its dirty pages grew by
    6 and its writeback pages by 2 MiB; the commit's cgroup dirtied
    commit_ops x 4 KiB; io.stat counted 3 x that submitted (not a rate);
    the tasks' /proc/TID/io say each copy dirtied 1 GiB (procio, not its
    rate either)."""
    specs = " ".join(f"{n}:{sp}" for n, sp, _ in jobs)
    pa, pb, cgp = [], [], []
    for i, (n, sp, _) in enumerate(jobs):
        pid = 100 + 2 * i
        wb = commit_ops * K4 if n == "commit" else (1 << 30)
        pa += [f"{pid}:{pid}:0:0", f"{pid + 1}:{pid + 1}:0:0"]
        pb += [f"{pid}:{pid}:0:0", f"{pid + 1}:{pid + 1}:0:{wb}"]
        cgp.append(f"{n}:{pid},{pid + 1},")
    c0 = " ".join(f"{n}:0:1000:{100 * MB}:{50 * MB}:0:0" for n, _, _ in jobs)
    c1 = " ".join(
        f"{n}:0:{1000 + cg.get(n, 0) + (8 * MB if sp == 'wcopy' else 0)}:"
        f"{100 * MB + (6 * MB if sp == 'wcopy' else 0)}:"
        f"{50 * MB + (2 * MB if sp == 'wcopy' else 0)}:0:{3 * cg.get(n, 0)}"
        for n, sp, _ in jobs)
    o = {"dev": dev, "cfg": cfg, "wl": wl, "rep": 1, "rc": 0, "wall_s": 30.0,
         "lower": "vdc", "target": "/dev/x", "args": "", "specs": specs,
         "win": {"ms": 8000, "cpu_ms": 100, "reads": 0, "rsect": rsect,
                 "writes": 10, "wsect": wsect},
         "fairq0": fairq0 or {}, "fairq": fairq or {}, "slab": "",
         "procio": [" ".join(pa), " ".join(pb)], "cgprocs": " ".join(cgp),
         "err": "", "wf": {"fs": "ext4", "dirty": "default", "sysctl": "dirty_ratio=20",
                           "queue": "wbt_lat_usec=2000", "start_ms": 5000, "rm_ms": 10,
                           "drain_ms": 900, "cgio": [c0, c1],
                           "vm": ["1000 10 5000 2500", "1100 12 5000 2500"],
                           "cgids": "copy=11 commit=12 bulk1=14 bulk4=15",
                           "flow_names": flow_names},
         "fio": [{"jobs": [j]} for _, _, j in jobs]}
    return "BENCH " + json.dumps(o) + "\n"


def write_fixture(dirname):
    """The write family on disk "vd" (8 s windows). Alone, per
    configuration: the copy writes 32 MiB (4 MiB/s) and the lower device
    writes 32 MiB, except where the copy-alone target says otherwise
    (none 3.9, bfq 3.5, kyber 3.95, fairq-cfq 3.6, fairq-cfq@cgroup 3.9
    MiB/s of lower writes); the commit 800 appends (100/s), fsync p99 10 ms."""
    L = ['BENCH_INFO {"kernel":"k"}\n']
    lw = {"none": 3.9, "mq-deadline": 4.0, "bfq": 3.5, "kyber": 3.95,
          "fairq-cfq": 3.6, "fairq-cfq@cgroup": 3.9}
    for cfg, mibs in lw.items():
        L.append(wbench("vd", "alone-wcopy", cfg, [("copy", "wcopy", wjob("copy", "1M", 1 << 30))],
                        {"copy": 32 * MB}, int(mibs * 8 * MB / 512)))
        if cfg in ("mq-deadline", "bfq", "fairq-cfq", "fairq-cfq@cgroup"):
            L.append(wbench("vd", "alone-wsync4k", cfg,
                            [("commit", "wsync4k", wjob("commit", "4k", 800 * K4, 10_000_000))],
                            {"commit": 800 * K4}, 2 * 800 * 8, commit_ops=800))

    def wa(cfg, copy_mib, ops, p99_ms, **kw):
        """the lower device writes the copy's copy_mib MiB and the commit's
        appends; the copy's cgroup completed page writeback of copy_mib
        MiB too (it is not its rate: the disk's writes are)"""
        return wbench("vd", "wa", cfg,
                      [("copy", "wcopy", wjob("copy", "1M", 1 << 30)),
                       ("commit", "wsync4k", wjob("commit", "4k", ops * K4,
                                                  int(p99_ms * 1e6)))],
                      {"copy": int(copy_mib * MB), "commit": ops * K4},
                      (int(copy_mib * MB) + ops * K4) // 512, commit_ops=ops, **kw)
    # The copies' rates alone: their lower device's writes (none 3.9,
    # mq-deadline 4.0, bfq 3.5, kyber 3.95, fairq-cfq 3.6,
    # fairq-cfq@cgroup 3.9 MiB/s).
    # mq-deadline: copy 24 MiB (3 MiB/s, s 0.75), commit 400 (50/s, s
    # 0.5): G 1.0; p99 60 ms; the lower device 24 MiB + 400 x 4 KiB.
    L.append(wa("mq-deadline", 24, 400, 60))
    # bfq: copy 2.5 MiB/s (s 2.5 / 3.5), commit 80/s (s 0.8): G 1.43; p99 30 ms.
    L.append(wa("bfq", 20, 640, 30))
    # fairq-cfq: copy 3.75 MiB/s (s 3.75 / 3.6), commit 4/s (s 0.04): G
    # 0.08; p99 900 ms; the lower device 30 MiB + 32 x 4 KiB (118% of
    # mq-deadline's).
    # Its flows: the flusher (key 300) moved 30 MiB in 30 requests over
    # the window, waiting 3 s in all (100 ms each); the journal (key 400)
    # is a flow new in the window.
    f0 = {"done_reqs": 1, "done_bytes": 1, "flow_lines": [
        "key=300 class=be level=4 weight=100 queued=9 inflight=1 reqs=100 "
        "bytes=104857600 wait_ns_sum=1000000000 wait_ns_max=50000000"]}
    f1 = {"done_reqs": 2, "done_bytes": 2, "flow_lines": [
        "key=300 class=be level=4 weight=100 queued=9 inflight=1 reqs=130 "
        "bytes=136314880 wait_ns_sum=4000000000 wait_ns_max=900000000",
        "key=400 class=be level=4 weight=100 queued=0 inflight=0 reqs=8 "
        "bytes=65536 wait_ns_sum=8000000000 wait_ns_max=2000000000"]}
    L.append(wa("fairq-cfq", 30, 32, 900, fairq0=f0, fairq=f1,
                flow_names="300=kworker/u4:1+flush-253:32;400=jbd2/bq0-8;"))
    # fairq-cfq@cgroup: copy 2 MiB/s (s 2 / 3.9), commit 90/s (s 0.9): G
    # 1.03; p99 8 ms (<= 60/3 and <= 30/3); the lower device 16 MiB +
    # 720 x 4 KiB (74% of mq-deadline's).
    L.append(wa("fairq-cfq@cgroup", 16, 720, 8))
    # none: the commit completed no fdatasync in the window: its p99 is
    # at least the window, 8 s.
    L.append(wa("none", 32, 0, 0))
    # wd, weights 1:4: bulk1 8 MiB (1 MiB/s, s 0.25), bulk4 24 MiB (3
    # MiB/s, s 0.75): shares 0.25 and 0.75, +25% and -6.25% of 0.2 and
    # 0.8; G = min(0.25 / 0.2, 0.75 / 0.8) = 0.9375.
    L.append(wbench("vd", "wd", "fairq-cfq@cgroup",
                    [("bulk1", "wcopy", wjob("bulk1", "1M", 1 << 30)),
                     ("bulk4", "wcopy", wjob("bulk4", "1M", 1 << 30))],
                    {"bulk1": 8 * MB, "bulk4": 24 * MB}, 32 * MB // 512))
    # The same under kyber, where neither copy completed any page
    # writeback in the window: the lower device's 32 MiB split by what
    # each dirtied (8 MiB more than it completed: equal).
    L.append(wbench("vd", "wd", "kyber",
                    [("bulk1", "wcopy", wjob("bulk1", "1M", 1 << 30)),
                     ("bulk4", "wcopy", wjob("bulk4", "1M", 1 << 30))],
                    {}, 32 * MB // 512))
    # wc (BENCH_STARTUP "wl":"wc"): mq-deadline 500 -> 1000 ms (s 0.5),
    # the lower device wrote 3 MiB in the 1 s read (the copy: 3 MiB/s, s
    # 0.75): G 1.0, its total 1 + 3 MiB in 1 s; fairq-cfq 500 -> 5000 ms
    # (s 0.1), the lower device wrote 19.5 MiB in 5 s (3.9 MiB/s, s 3.9 /
    # 3.6): G 0.2, its total 20 MiB in 5 s (4.0 MiB/s, 125% of
    # mq-deadline's); a failed read (rc 1) left out.
    for cfg, lo, ms, cb, rs, ws, rc in (
            ("mq-deadline", 1000, 1000, 3 * MB, 2048, 6144, 0),
            ("fairq-cfq", 5000, 5000, 19 * MB, 1024, 39936, 0),
            ("fairq-cfq", 9000, 9000, 1 * MB, 1024, 39936, 1)):
        L.append("BENCH_STARTUP " + json.dumps(
            {"dev": "vd", "wl": "wc", "cfg": cfg, "rep": 1, "rc": rc, "files": 100,
             "readers": 0, "alone_ms": 500, "loaded_ms": lo,
             "win": {"ms": ms, "reads": 1, "rsect": rs, "writes": 1, "wsect": ws},
             "fairq0": {}, "fairq": {},
             "wf": {"fs": "ext4", "start_ms": 4000, "drain_ms": 100,
                    "cgio": ["copy:0:1000:0:0:0:0",
                             f"copy:0:{1000 + cb + 4 * MB}:{3 * MB}:{MB}:0:0"]}}) + "\n")
    # kyber: the timed read was cut at WC_MAX_S (a lower bound), and the
    # copy had exited before it ended (its counters are gone: no figure).
    L.append("BENCH_STARTUP " + json.dumps(
        {"dev": "vd", "wl": "wc", "cfg": "kyber", "rep": 1, "rc": 0, "files": 100,
         "readers": 0, "alone_ms": 500, "loaded_ms": 300000, "cut": 1,
         "win": {"ms": 300000, "reads": 1, "rsect": 8, "writes": 1, "wsect": 8},
         "wf": {"cgio": ["copy:0:5000:100:100:0:0", "copy:0:0:0:0:0:0"]}}) + "\n")
    L.append('BENCH_DONE {"measurements":20,"failed":0}\n')
    L.append('BENCH_HOST {"run":"w1","mode":"writes","only":"","vm_rc":0}\n')
    p = os.path.join(dirname, "writes.raw")
    with open(p, "w") as f:
        f.writelines(L)
    return p


def fixture(dirname):
    run1 = ['BENCH_INFO {"kernel":"k","fairq_rec":"depth=2","nr_requests":256}\n']
    # Workload 2 on disk d under mq-deadline: 2 s window, 1,000 reads of
    # 4 KiB at the lower device; light read 100 I/Os, heavy 900 in it;
    # fio's own rates (each over its own runtime) sum to 580 IOPS.
    run1.append(bench("d", "w2", "mq-deadline", 1, 2000, 1000, 8000,
                      "light:r4k-psync heavy:r4k-qd32",
                      [job("light", 60 * K4, 60, p99_ns=80_000_000),
                       job("heavy", 520 * K4, 520)],
                      pio([(10, 10, 0, 0), (10, 11, 0, 0), (12, 12, 0, 100 * K4),
                           (13, 13, 0, 900 * K4)])))
    # The same under fairq-cfq, with fairq's stats: 1,000 done in the window.
    run1.append(bench("d", "w2", "fairq-cfq", 1, 2000, 1000, 8000,
                      "light:r4k-psync heavy:r4k-qd32",
                      [job("light", 250 * K4, 250), job("heavy", 250 * K4, 250)],
                      pio([(10, 10, 0, 0), (12, 12, 0, 500 * K4), (13, 13, 0, 500 * K4)]),
                      fairq0={"done_reqs": 100, "done_bytes": 100 * K4},
                      fairq={"done_reqs": 1100, "done_bytes": 1100 * K4}))
    # The depth sweep at depths 2 and 8 (at 8: light 50, heavy 950 I/Os
    # in the window); no alone runs of its own (fairq-cfq's are its
    # reference).
    run1.append(bench("d", "w2", "fairq-cfq:depth=2", 1, 2000, 1000, 8000,
                      "light:r4k-psync heavy:r4k-qd32",
                      [job("light", 75 * K4, 75), job("heavy", 425 * K4, 425)],
                      pio([(12, 12, 0, 150 * K4), (13, 13, 0, 850 * K4)])))
    run1.append(bench("d", "w2", "fairq-cfq:depth=8", 1, 2000, 1000, 8000,
                      "light:r4k-psync heavy:r4k-qd32",
                      [job("light", 25 * K4, 25), job("heavy", 475 * K4, 475)],
                      pio([(12, 12, 0, 50 * K4), (13, 13, 0, 950 * K4)])))
    # Alone: light's spec 200 IOPS, heavy's 500 (fio's figures).
    for cfg in ("mq-deadline", "fairq-cfq"):
        run1.append(bench("d", "alone", cfg, 1, 0, 0, 0,
                          "r4k-psync:r4k-psync r4k-qd32:r4k-qd32",
                          [job("r4k-psync", 200 * K4, 200),
                           job("r4k-qd32", 500 * K4, 500)]))
    # Workload 4 (I/O priorities) under bfq: 1 s window; be0 200, be4 100,
    # be7 25 I/Os, idle none; fio measured idle later, alone: 300 IOPS.
    run1.append(bench("d", "w4", "bfq", 1, 1000, 325, 2600,
                      "be0:r4k-qd8 be4:r4k-qd8 be7:r4k-qd8 idle:r4k-qd8",
                      [job("be0", 200 * K4, 200), job("be4", 100 * K4, 100),
                       job("be7", 25 * K4, 25), job("idle", 300 * K4, 300)],
                      pio([(20, 20, 0, 0), (20, 21, 0, 0), (22, 22, 0, 200 * K4),
                           (23, 23, 0, 100 * K4), (24, 24, 0, 25 * K4),
                           (25, 25, 0, 0)])))
    run1.append(bench("d", "alone", "bfq", 1, 0, 0, 0, "r4k-qd8:r4k-qd8",
                      [job("r4k-qd8", 400 * K4, 400)]))
    # Start-up on disk d: fairq 100 -> 120 ms and 100 -> 140 ms (median
    # ratio 1.3), mq-deadline 100 -> 400 ms; one failed read (rc 1) left out.
    for rep, (a, lo) in enumerate(((100, 120), (100, 140), (100, 130)), 1):
        run1.append('BENCH_STARTUP {"dev":"d","cfg":"fairq-cfq","rep":%d,"rc":0,'
                    '"files":300,"readers":10,"alone_ms":%d,"loaded_ms":%d}\n' % (rep, a, lo))
    run1.append('BENCH_STARTUP {"dev":"d","cfg":"mq-deadline","rep":1,"rc":0,'
                '"files":300,"readers":10,"alone_ms":100,"loaded_ms":400}\n')
    run1.append('BENCH_STARTUP {"dev":"d","cfg":"mq-deadline","rep":2,"rc":1,'
                '"files":300,"readers":10,"alone_ms":100,"loaded_ms":9000}\n')
    # The flip measurement (guest.sh flip()): depth auto and 32 in turn,
    # A B B A; groups 2000/2000 = 1.0, 1880/2000 = 0.94, 2000/1980 =
    # 1.0101 (median 1.0); over all windows 5890 / 5990.  A failed one
    # (rc 1) on another disk is left out.
    wins = []
    for g in ((1000, 1000, 1010, 1010), (900, 1000, 1000, 980),
              (1000, 990, 990, 1000)):
        for d, n in zip(("auto", "32", "32", "auto"), g):
            wins.append({"depth": d, "ios": n, "us": 1000000})
    run1.append("BENCH_FLIP " + json.dumps(
        {"dev": "nullb-fast", "wl": "w6qd32", "cfg": "fairq-cfq", "rc": 0,
         "a": "auto", "b": "32", "win_s": 1, "windows": wins,
         "fairq": {"fastpath_stops": 0, "fastpath_reqs": 10, "enq_reqs": 10}}) + "\n")
    run1.append("BENCH_FLIP " + json.dumps(
        {"dev": "e", "wl": "w6qd32", "cfg": "fairq-cfq", "rc": 1,
         "a": "auto", "b": "32", "win_s": 1, "windows": wins, "fairq": {}}) + "\n")
    run1.append('BENCH_DONE {"measurements":6,"failed":0}\n')
    run1.append('BENCH_HOST {"run":"r1","mode":"full","only":"","vm_rc":0,"loadavg":[1.0,2.0]}\n')

    # Run 2 (a later, partial run): workload 4 as cgroups under iocost,
    # one fio per job, jobs told apart by their cgroup's processes; and a
    # new w2 table under mq-deadline that replaces run 1's.
    run2 = ['BENCH_INFO {"kernel":"k"}\n']
    run2.append(bench("d", "w4cg", "iocost", 1, 1000, 326, 2608,
                      "be0:r4k-qd8 be4:r4k-qd8 be7:r4k-qd8 idle:r4k-qd8", None,
                      pio([(30, 30, 0, 0), (31, 31, 0, 200 * K4), (32, 32, 0, 0),
                           (33, 33, 0, 100 * K4), (34, 34, 0, 0), (35, 35, 0, 25 * K4),
                           (36, 36, 0, 0), (37, 37, 0, 1 * K4)]),
                      cgprocs="be0:30,31, be4:32,33, be7:34,35, idle:36,37,",
                      fios=[{"jobs": [job("be0", 1, 1)]}, {"jobs": [job("be4", 1, 1)]},
                            {"jobs": [job("be7", 1, 1)]}, {"jobs": [job("idle", 1, 1)]}]))
    run2.append(bench("d", "alone", "iocost", 1, 0, 0, 0, "r4k-qd8:r4k-qd8",
                      [job("r4k-qd8", 400 * K4, 400)]))
    run2.append(bench("d", "w2", "mq-deadline", 1, 1000, 400, 3200,
                      "light:r4k-psync heavy:r4k-qd32",
                      [job("light", 100 * K4, 100), job("heavy", 300 * K4, 300)],
                      pio([(12, 12, 0, 100 * K4), (13, 13, 0, 300 * K4)])))
    run2.append('BENCH_DONE {"measurements":3,"failed":0}\n')
    run2.append('BENCH_HOST {"run":"r2","mode":"full","only":"d/","vm_rc":0}\n')
    paths = []
    for i, lines in enumerate((run1, run2)):
        p = os.path.join(dirname, f"run{i + 1}.raw")
        with open(p, "w") as f:
            f.writelines(lines)
        paths.append(p)
    return paths


def main():
    with tempfile.TemporaryDirectory() as tmp:
        r1, r2 = fixture(tmp)

        # One run.
        runs, meas, agg, tg, errs = analyze.analyze([r1], tmp)
        sw = agg[("d", "w2", "fairq-cfq:depth=8")]
        check("sweep: s light against fairq-cfq's alone = 25 / 200",
              sw["jobs"]["light"]["s"], 0.125)
        check("sweep: G = min(0.125, 0.95) / (1/2)", sw["G"], 0.25)
        sec = analyze.section_sweep(agg, runs, "d")
        check("sweep table row: depth, total, total / best, G, light (s)",
              "| 8 | 500 | 1.00 | 0.25 | 25 (0.12) |" in sec, True)
        check("one fixed depth is no sweep (W6's depth=32)",
              analyze.section_sweep({k: v for k, v in agg.items()
                                     if k[2] != "fairq-cfq:depth=2"}, runs, "d"), "")
        a = agg[("d", "w2", "mq-deadline")]
        check("w2 total from the lower device", a["lower_iops"], 500.0)
        check("w2 fio sum (never the total)", a["fio_sum_iops"], 580.0)
        check("w2 lower vs fio > 5% apart", analyze.disagrees(a, "w2"), True)
        check("w2 light window throughput (B/s)", a["jobs"]["light"]["tput"], 100 * K4 / 2)
        check("w2 s light = 50 / 200", a["jobs"]["light"]["s"], 0.25)
        check("w2 s heavy = 450 / 500", a["jobs"]["heavy"]["s"], 0.9)
        check("w2 G = min(2 x 0.25, 2 x 0.9)", a["G"], 0.5)
        check("w2 Jain over s", a["jain_s"], 2.3 ** 2 / (2 * (0.5 ** 2 + 1.8 ** 2)))
        check("w2 Jain over bytes 1:9", a["jain"], 100 / 164)
        check("w2 light share", a["light_share"], 0.1)
        check("w2 light p99 us", a["light_p99_us"], 80_000.0)
        f = agg[("d", "w2", "fairq-cfq")]
        check("fairq done IOPS from its stats", f["fq_iops"], 500.0)
        check("fairq G = 2 x min(250/200, 250/500)", f["G"], 1.0)
        check("fairq w2 fio sum agrees", analyze.disagrees(f, "w2"), False)
        w4 = agg[("d", "w4", "bfq")]
        check("w4 total from the lower device", w4["lower_iops"], 325.0)
        check("w4 fio sum counts idle's later run", w4["fio_sum_iops"], 625.0)
        check("w4 G weighted 200:100:25, idle left out", w4["G"], 0.8125)
        check("w4 Jain over s/w", w4["jain_s"], 1.0)
        check("w4 Jain over bytes/w", w4["jain"], 1.0)
        check("w4 idle slowdown reported", w4["jobs"]["idle"]["s"], 0.0)
        check("w4 shares on weight", max(abs(v) for v in w4["w4_dev"].values()), 0.0)
        check("tuning set marks nullb-lat w2 -rec",
              analyze.tuning("nullb-lat", "w2", "fairq-cfq-rec"), True)
        check("tuning set leaves virtio alone",
              analyze.tuning("virtio", "w2", "fairq-cfq-rec"), False)
        check("best competitor by G names it",
              analyze.best(agg, "d", "w2", analyze.competitors(agg, "d", "w2"),
                           lambda x: x["G"]), ("mq-deadline", 0.5))
        check("competitors exclude fairq",
              sorted(analyze.competitors(agg, "d", "w2")), ["mq-deadline"])

        st = analyze.startup_agg(runs)
        check("start-up median ratio", st[("d", "fairq-cfq")]["ratio"], 1.3)
        check("start-up failed read left out", st[("d", "mq-deadline")]["n"], 1)
        stt = analyze.startup_targets(st)
        check("start-up target PASS at 1.3x, competitor named",
              (stt[0][3], "mq-deadline 4.00x" in stt[0][2]), ("PASS", True))
        st[("d", analyze.STARTUP_CONTROL)] = dict(st[("d", "fairq-cfq")], ratio=1.2)
        stt = analyze.startup_targets(st)
        check("start-up control shown, never the best competitor",
              ("another disk (their CPU cost alone): 1.20x" in stt[0][2],
               "mq-deadline 4.00x" in stt[0][2]), (True, True))

        # Targets on a device-bound disk: the fixture's disk as "virtio".
        va = {("virtio",) + k[1:]: v for k, v in agg.items()}
        tgt = {(t[0], t[1]): t for t in analyze.targets(va)}
        check("target W2 G >= 0.9 for the defaults",
              tgt[("W2 G >= 0.9 (virtio)", "fairq-cfq")][3], "PASS")
        check("target W2 total counts the lower device",
              tgt[("W2 total >= 95% of none/mq-deadline's (virtio)", "fairq-cfq")][3],
              "PASS")
        check("no Jain-over-s target on W2 (a QD1 reader cannot fill the disk)",
              [k for k in tgt if k[0].startswith("W2 Jain")], [])
        va[("virtio", "w2", "fairq-cfq")] = dict(va[("virtio", "w2", "fairq-cfq")],
                                                 G=0.89, lower_iops=470.0)
        tgt = {(t[0], t[1]): t for t in analyze.targets(va)}
        check("target W2 G 0.89 misses",
              tgt[("W2 G >= 0.9 (virtio)", "fairq-cfq")][3], "MISS")
        check("target W2 total 94% misses",
              tgt[("W2 total >= 95% of none/mq-deadline's (virtio)", "fairq-cfq")][3],
              "MISS")

        # A measurement whose fio output lost a job its specs name (seen
        # once: w4cg, one fio per job, be0's JSON missing) is left out
        # and listed, not analysed half (that crashed on the W4 shares).
        lost = os.path.join(tmp, "lost.lines")
        with open(lost, "w") as f:
            f.write(bench("d", "w4cg", "iocost", 1, 1000, 300, 2400,
                          "be0:r4k-qd8 be4:r4k-qd8",
                          [job("be4", 100 * K4, 100)]))
        _, lm, lerrs = analyze.parse([lost])
        check("a measurement missing a job is left out", len(lm), 0)
        check("... and listed with why",
              [e.get("why") for e in lerrs], ["no fio output for job(s) be0"])

        # W6QD32 auto against fixed 32: judged within each repetition;
        # medians 28,000 vs 31,000 (-10 %), but the ratios per repetition
        # 0.79, 0.90, 1.31: median 0.90.  Every bio on the fast path in
        # both: the row says the gap is noise.
        va[("nullb-fast", "w6qd32", "fairq-cfq")] = {
            "lower_iops": 28000.0, "fast_only": True,
            "by_rep": {1: 26000.0, 2: 28000.0, 3: 38000.0}}
        va[("nullb-fast", "w6qd32", "fairq-cfq:depth=32")] = {
            "lower_iops": 31000.0, "fast_only": True,
            "by_rep": {1: 33000.0, 2: 31000.0, 3: 29000.0}}
        w6 = {(t[0], t[1]): t for t in analyze.targets(va)}[
            ("W6QD32 auto depth within 1% of fixed depth 32", "fairq-cfq")]
        check("W6 auto vs fixed: median of per-repetition ratios",
              ("-9.7% (median of 0.79, 0.90, 1.31)" in w6[2], w6[3]), (True, "MISS"))
        check("W6 auto vs fixed: the same code ran, said so",
              "both ran the same code" in w6[2], True)
        va[("nullb-fast", "w6qd32", "fairq-cfq")]["by_rep"] = {
            1: 33000.0, 2: 31000.0, 3: 29100.0}
        va[("nullb-fast", "w6qd32", "fairq-cfq:depth=32")]["fast_only"] = False
        w6 = {(t[0], t[1]): t for t in analyze.targets(va)}[
            ("W6QD32 auto depth within 1% of fixed depth 32", "fairq-cfq")]
        check("W6 auto vs fixed: equal within each repetition passes",
              (w6[3], "same code" in w6[2]), ("PASS", False))

        # The flip measurement judges the row when there is one.
        fl = analyze.flip_agg(runs)
        check("flip: a failed run left out", sorted(fl), [("nullb-fast", "w6qd32", "fairq-cfq")])
        f = fl[("nullb-fast", "w6qd32", "fairq-cfq")]
        check("flip: median over the A B B A groups", f["ratio"], 1.0)
        check("flip: groups", [round(x, 4) for x in f["groups"]], [1.0, 0.94, 1.0101])
        check("flip: over all windows", f["overall"], 5890 / 5990)
        check("flip: fast path carried every bio", f["fast_only"], True)
        w6 = {(t[0], t[1]): t for t in analyze.targets(va, fl)}[
            ("W6QD32 auto depth within 1% of fixed depth 32", "fairq-cfq")]
        check("W6 judged by the flip, the separate runs shown beside",
              (w6[3], "one fio run" in w6[2], "separate runs: 28,000 vs 31,000" in w6[2]),
              ("PASS", True, True))
        fl2 = {k: dict(v, ratio=0.985) for k, v in fl.items()}
        w6 = {(t[0], t[1]): t for t in analyze.targets(va, fl2)}[
            ("W6QD32 auto depth within 1% of fixed depth 32", "fairq-cfq")]
        check("W6 by the flip: -1.5% misses", w6[3], "MISS")

        # Workload 8: fairq's CPU per I/O against mq-deadline's (<= 1x)
        # and bfq's (<= ENGAGED_BFQ_MAX); 64 flows: 30 vs 30 and 40 us.
        w8 = {("nullb-fast", "w8-64", c): {"cpu_us_per_io": v, "lower_iops": 9000.0}
              for c, v in (("fairq-cfq@pid:fastpath=off", 30.0), ("mq-deadline", 30.0),
                           ("bfq", 40.0))}
        t8 = {(t[0], t[1]): t for t in analyze.targets(w8)}
        check("W8 at mq-deadline's CPU per I/O passes",
              t8[("W8 64 flows: CPU per I/O <= mq-deadline's", "fairq-cfq@pid:fastpath=off")][3], "PASS")
        check("W8 at 0.75 of bfq's passes",
              t8[("W8 64 flows: CPU per I/O <= 0.8 x bfq's", "fairq-cfq@pid:fastpath=off")][3], "PASS")
        w8[("nullb-fast", "w8-64", "fairq-cfq@pid:fastpath=off")]["cpu_us_per_io"] = 33.0
        t8 = {(t[0], t[1]): t for t in analyze.targets(w8)}
        check("W8 at 1.1x mq-deadline's misses",
              t8[("W8 64 flows: CPU per I/O <= mq-deadline's", "fairq-cfq@pid:fastpath=off")][3], "MISS")
        check("W8 at 0.825 of bfq's misses",
              t8[("W8 64 flows: CPU per I/O <= 0.8 x bfq's", "fairq-cfq@pid:fastpath=off")][3], "MISS")
        check("W8 sorts after W7", analyze.wl_key("w8-4") > analyze.wl_key("w7-1024"), True)

        # The fair ceiling of a W3-like pair: alone 46 MiB/s (1 MiB) and
        # 1.4 MiB/s (4 KiB); half the disk's time each: 23 + 0.7 = 23.7.
        w3 = {"jobs": {"rand4k": {"alone": 1.4 * analyze.MIB, "bs": K4},
                       "seq1m": {"alone": 46 * analyze.MIB, "bs": 1 << 20}}}
        check("fair ceiling of W3 (MiB/s)", analyze.fair_ceiling(w3, "w3"), 23.7)
        check("fair ceiling where the disk gave 1.2 of its time in all",
              analyze.fair_ceiling(dict(w3, s_sum=1.2), "w3"), 23.7 * 1.2)
        check("no fair ceiling on W2 (its light reader cannot fill the disk)",
              analyze.fair_ceiling(w3, "w2"), None)
        check("fair ceiling of equal 4 KiB jobs is their alone IOPS",
              analyze.fair_ceiling({"jobs": {"a": {"alone": 400.0 * K4, "bs": K4},
                                             "b": {"alone": 400.0 * K4, "bs": K4}}},
                                   "w1"), 400.0)
        check("no fair ceiling without an alone figure",
              analyze.fair_ceiling({"jobs": {"a": {"alone": None, "bs": K4},
                                             "b": {"alone": 1.0, "bs": K4}}}, "w1"),
              None)

        # Two runs merged: run 2's w2 table replaces run 1's; the alone
        # runs of each configuration come from the run that has them.
        runs, meas, agg, tg, errs = analyze.analyze([r1, r2], tmp)
        a = agg[("d", "w2", "mq-deadline")]
        check("merge: w2 from run 2", runs[a["run"]]["label"], "r2")
        check("merge: w2 total from run 2", a["lower_iops"], 400.0)
        check("merge: s light with run 1's alone", a["jobs"]["light"]["s"], 0.5)
        check("merge: other tables kept from run 1",
              runs[agg[("d", "w4", "bfq")]["run"]]["label"], "r1")
        c = agg[("d", "w4cg", "iocost")]
        check("cgroup jobs by their processes", c["jobs"]["be4"]["tput"], 100.0 * K4)
        check("w4cg G with idle weight 1", c["G"], 0.5 * 326 / 200)
        check("w4cg Jain over s/w", c["jain_s"], 1.0)

        # The write family.
        wr = write_fixture(tmp)
        runs, meas, agg, tg, errs = analyze.analyze([wr], tmp)
        a = agg[("vd", "wa", "mq-deadline")]
        check("wa copy's rate: the lower device's writes less the commit's",
              a["jobs"]["copy"]["tput"], 3.0 * MB)
        check("wa copy's writeback ended, submitted (io.stat), dirtied MiB/s: "
              "diagnostics", (a["wf"]["written_mib_s"]["copy"],
                              a["wf"]["submitted_mib_s"]["copy"],
                              a["wf"]["dirtied_mib_s"]["copy"]), (3.0, 9.0, 4.0))
        check("wa dirty + writeback change over the window (MiB, global)",
              a["wf"]["pool_delta_mib"], (1100 + 12 - 1000 - 10) * 4096 / MB)
        check("wa commit's rate: its fdatasync'd appends (4 KiB each) per s",
              a["jobs"]["commit"]["tput"] / K4, 50.0)
        check("wa s copy = 3 / 4", a["jobs"]["copy"]["s"], 0.75)
        check("wa s commit = 50 / 100", a["jobs"]["commit"]["s"], 0.5)
        check("wa G = 2 x min(0.75, 0.5)", a["G"], 1.0)
        check("wa commit fsync p99 from fio's sync section (us)",
              a["jobs"]["commit"]["sync_p99_us"], 60_000.0)
        check("wa commit fsync p50", a["jobs"]["commit"]["sync_p50_us"], 6_000.0)
        check("wa total from the lower device", a["lower_mib_s"], (24 + 400 * K4 / MB) / 8)
        c = agg[("vd", "wa", "none")]["jobs"]["commit"]
        check("wa commit with no fdatasync in the window: p99 >= the window",
              (c["sync_p99_us"], c["sync_censored"]), (8e6, True))
        f = agg[("vd", "wa", "fairq-cfq")]
        check("wa fairq G = 2 x min(3.75 / 3.6, 0.04)", f["G"], 0.08)
        check("wa bfq G = 2 x min(2.5 / 3.5, 0.8)", agg[("vd", "wa", "bfq")]["G"], 10 / 7)
        fl = f["wf"]["flows"]
        check("fairq flows named, the busiest first",
              [(x["who"], x["key"]) for x in fl],
              [("kworker/u4:1+flush-253:32", 300), ("jbd2/bq0-8", 400)])
        check("fairq flow over the window: 30 MiB, 30 requests",
              (fl[0]["bytes"], fl[0]["reqs"], fl[0]["since_window"]),
              (30 * MB, 30, True))
        check("fairq flow's mean wait over the window (ms)", fl[0]["wait_ms_mean"], 100.0)
        check("a flow new in the window: its counts since it began",
              (fl[1]["reqs"], fl[1]["since_window"], fl[1]["wait_ms_mean"]), (8, False, 1000.0))
        check("alone-SPEC runs are the alone table (copy, by spec)",
              analyze.alone_table(meas)[("vd", "fairq-cfq", "wcopy")], 3.6 * MB, tol=1e-4)
        check("alone-SPEC: the fsync p99 alone",
              analyze.alone_table(meas, "sync_p99_us")[("vd", "bfq", "wsync4k")], 10_000.0)
        check("alone-SPEC: the lower device's writes alone",
              analyze.alone_table(meas, "lower_write_mib_s")[("vd", "kyber", "wcopy")], 3.95,
              tol=1e-4)
        d = agg[("vd", "wd", "fairq-cfq@cgroup")]
        check("wd shares from the cgroups' writes", d["win_share"]["bulk4"], 0.75)
        check("wd share deviations from 1:4", (round(d["wd_dev"]["bulk1"], 6),
                                               round(d["wd_dev"]["bulk4"], 6)), (0.25, -0.0625))
        check("wd G weighted 1:4: min(1 / 3.9 / 0.2, 3 / 3.9 / 0.8)", d["G"], 3 / 3.9 / 0.8,
              tol=1e-4)
        check("wd split by dirtied bytes when no page writeback ended",
              agg[("vd", "wd", "kyber")]["win_share"]["bulk1"], 0.5)
        wc = analyze.wc_agg(runs, analyze.alone_table(meas))
        check("wc: a failed read left out", wc[("vd", "fairq-cfq")]["n"], 1)
        check("wc mq-deadline: s start-up, s copy, G",
              (wc[("vd", "mq-deadline")]["s_startup"], wc[("vd", "mq-deadline")]["s_copy"],
               wc[("vd", "mq-deadline")]["G"]), (0.5, 0.75, 1.0))
        check("wc fairq-cfq: the copy's rate, the lower device's writes: 19.5 MiB in 5 s",
              wc[("vd", "fairq-cfq")]["copy_mib_s"], 3.9)
        check("wc fairq-cfq: G = 2 x min(0.1, 3.9 / 3.6)", wc[("vd", "fairq-cfq")]["G"], 0.2)
        check("wc fairq-cfq: lower MiB/s over the timed read",
              wc[("vd", "fairq-cfq")]["lower_mib_s"], 4.0)
        check("wc: a cut read is a lower bound; a copy whose processes exited has no rate",
              (wc[("vd", "kyber")]["cut"], wc[("vd", "kyber")]["copy_mib_s"],
               wc[("vd", "kyber")]["G"]), (True, None, None))
        check("wc lines are not start-up lines",
              [k for k in analyze.startup_agg(runs) if k[0] == "vd"], [])
        t = {(x[0], x[1]): x[3] for x in tg}
        tx = {(x[0], x[1]): x[2] for x in tg}
        check("WA G misses for fairq-cfq", t[("WA G >= 0.9 (vd)", "fairq-cfq")], "MISS")
        check("WA G names the best competitor",
              "best competitor bfq 1.43" in tx[("WA G >= 0.9 (vd)", "fairq-cfq")], True)
        check("WA G passes for fairq-cfq@cgroup", t[("WA G >= 0.9 (vd)", "fairq-cfq@cgroup")],
              "PASS")
        check("WA total 97% of mq-deadline's passes",
              t[("WA total >= 95% of mq-deadline's (vd)", "fairq-cfq")], "PASS")
        check("WA total 94% misses",
              t[("WA total >= 95% of mq-deadline's (vd)", "fairq-cfq@cgroup")], "MISS")
        check("WA p99 900 vs 60 ms misses",
              (t[("WA commit fsync p99 <= 1/3 of mq-deadline's (vd)", "fairq-cfq")],
               "900.0 vs 60.0 ms (ratio 15.00)"
               in tx[("WA commit fsync p99 <= 1/3 of mq-deadline's (vd)", "fairq-cfq")]),
              ("MISS", True))
        check("WA p99 8 ms passes against mq-deadline's 60 and bfq's 30",
              (t[("WA commit fsync p99 <= 1/3 of mq-deadline's (vd)", "fairq-cfq@cgroup")],
               t[("WA commit fsync p99 <= 1/3 of bfq's (vd)", "fairq-cfq@cgroup")]),
              ("PASS", "PASS"))
        check("WD shares +25% misses",
              t[("WD shares within 10% of 1:4 (vd)", "fairq-cfq@cgroup")], "MISS")
        check("WC G 0.2 misses, total 100% passes",
              (t[("WC G >= 0.9 (vd)", "fairq-cfq")],
               t[("WC total >= 95% of mq-deadline's (vd)", "fairq-cfq")]), ("MISS", "PASS"))
        check("copy alone: 3.6 vs the best raw (mq-deadline 4.0) misses",
              (t[("wcopy alone: writes >= 95% of the best raw scheduler's (vd)", "fairq-cfq")],
               "vs mq-deadline 4.00" in
               tx[("wcopy alone: writes >= 95% of the best raw scheduler's (vd)", "fairq-cfq")]),
              ("MISS", True))
        check("copy alone: 3.9 of 4.0 passes",
              t[("wcopy alone: writes >= 95% of the best raw scheduler's (vd)",
                 "fairq-cfq@cgroup")], "PASS")
        dd = dict(d, wd_dev={"bulk1": 0.08, "bulk4": -0.02})
        t2 = {(x[0], x[1]): x[3] for x in analyze.write_targets(
            {("vd", "wd", "fairq-cfq@cgroup"): dd}, {}, {})}
        check("WD shares within 10% pass", t2[("WD shares within 10% of 1:4 (vd)",
                                                 "fairq-cfq@cgroup")], "PASS")
        out = os.path.join(tmp, "wout")
        sys.argv = ["analyze.py", "--out", out, wr]
        with open(os.devnull, "w") as null:
            old, sys.stderr = sys.stderr, null
            try:
                rc = analyze.main()
            finally:
                sys.stderr = old
        md = open(os.path.join(out, "results.md")).read()
        check("results.md: the wa table row of mq-deadline",
              "| mq-deadline | 4.00 | 3.00 (0.75) | 100 | 50 (0.50) | 1.00 | 3.20 | 3.20 | "
              "4.00 / 0.20 | 3.00 / 0.20 | 9.00 / 0.59 | 0.4 | 6.0 | 60.0 | 10.0 | 5.0 | 0.9 | 1 |"
              in md, True)
        check("results.md: a censored p99 marked", "| >= 8,000.0 | >= 8,000.0 |" in md, True)
        check("results.md: the wc table", "workload wc: application start-up" in md, True)
        check("results.md: a cut read marked", "| kyber | 500 | >= 300,000 | >= 600.00 |" in md,
              True)
        check("results.md: the flows", "kworker/u4:1+flush-253:32 (key 300): 30.0 MiB" in md,
              True)

        # The whole pipeline writes its files.
        out = os.path.join(tmp, "out")
        sys.argv = ["analyze.py", "--out", out, r1, r2]
        with open(os.devnull, "w") as null:
            old, sys.stderr = sys.stderr, null
            try:
                rc = analyze.main()
            finally:
                sys.stderr = old
        check("main exits 0", rc, 0)
        md = open(os.path.join(out, "results.md")).read()
        check("results.md names the run of a merged table", "(from run r2)" in md, True)
        check("results.md flags fio's sum", "fio sum IOPS" in md, True)
        check("results.md has the start-up table", "## Interactive start-up" in md, True)
        res = json.load(open(os.path.join(out, "results.json")))
        check("results.json run labels", ",".join(r["label"] for r in res["runs"]), "r1,r2")
    print(f"{PASSED} passed, {FAILED} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
