/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_env.h - the only place where sched/ meets its environment.
 *
 * The fair-queueing core is compiled twice: into fairq.ko (Kbuild defines
 * __KERNEL__) and into host programs (unit tests, fuzzer, simulator, the
 * NBD server's --fair mode).  This header maps the few things the core
 * needs -- fixed-width types, errno values, zeroed allocation for setup
 * paths, a 64-bit hash, WARN_ON_ONCE and the trace hooks -- to the kernel
 * or to libc.  No algorithm file includes anything else, and no algorithm
 * file tests __KERNEL__ itself.
 *
 * Allocation that may sleep (fq_zalloc()) happens only in
 * fq_sched_create(), and when the caller grows the flow table
 * (fq_sched_table_alloc()), never under the caller's lock.  Flows are the
 * one thing allocated on the enqueue path, under that lock:
 * fq_env_flow_alloc() must not sleep, and may fail (the core then
 * reclaims a drained flow, or uses the overflow flow).
 *
 * Trace hooks: the core reports three kinds of decision to its
 * environment as it makes them, with the instance @fqs (for the
 * environment to tell its devices apart), under the caller's lock:
 *
 *   fq_env_trace_depth(fqs, from, to, why)   depth_now, the requests in
 *	flight below at most, was set from @from to @to for reason @why
 *	(enum fq_depth_why).  @from == @to when nothing changed, and @from
 *	is 0 while fq_sched_create() makes @fqs: the hook ignores both
 *	(comparing costs the core nothing while no one listens).
 *   fq_env_trace_boost_start(fqs, key)        the flow of @key was boosted
 *	(fq_boost.c)
 *   fq_env_trace_boost_end(fqs, key, why, served)   its boost ended for
 *	reason @why (enum fq_boost_end) after serving @served requests
 *   fq_env_trace_antic(fqs, key, wait_ns)     the flow of @key, the one
 *	anticipation waits for, drained: its turn is kept for at most
 *	@wait_ns (fq_antic.c).  0 when that window closed at once, which
 *	the hook ignores.
 *
 * fairq.ko maps them to its trace events (drivers/fairq_trace.h), static
 * keys that cost a no-op while the events are off; host programs to
 * nothing.  A hook must not sleep, fail or call back into the core.
 *
 * 64-bit division: a 32-bit kernel has no libgcc, so a plain '/' or '%'
 * on a u64 or s64 (other than by a power of two, which is a shift) does
 * not link.  The core divides through <linux/math64.h>'s helpers:
 * div_u64() and div_u64_rem() for a divisor that fits 32 bits,
 * div64_u64() and div64_u64_rem() for a 64-bit one, div_s64() and
 * div64_s64() for signed dividends.  Host programs get the same names as
 * plain division, with the same argument types (a divisor passed as u32
 * is truncated there too).  `make -C sched div32` compiles the core with
 * gcc -m32 and fails on any call to libgcc's division.
 */
#ifndef FQ_ENV_H
#define FQ_ENV_H

/*
 * Why depth_now changed (fq_env_trace_depth()): a number written to the
 * depth tunable (SET); depth=auto (re)started at its seed: at power-on,
 * "auto" written, a lower depth_max (START); and the controller's moves
 * (fq_depth.h): one it tries, a step of its search (TRY), or back to the
 * depth it holds (HOLD).
 */
enum fq_depth_why {
	FQ_DEPTH_WHY_SET,
	FQ_DEPTH_WHY_START,
	FQ_DEPTH_WHY_TRY,
	FQ_DEPTH_WHY_HOLD,
};

/*
 * Why a boost ended (fq_env_trace_boost_end()), one per stats counter
 * boost_end_*: boost_ms passed (TIME), FQ_BOOST_MAX_SERVED requests
 * served (BUDGET), an async request or a write (KIND), one larger than
 * 128 KiB (SIZE), more than 4 outstanding (DEPTH).
 */
enum fq_boost_end {
	FQ_BOOST_END_TIME,
	FQ_BOOST_END_BUDGET,
	FQ_BOOST_END_KIND,
	FQ_BOOST_END_SIZE,
	FQ_BOOST_END_DEPTH,
};

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/compiler.h>
#include <linux/bug.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/hash.h>
#include <linux/math64.h>

/* GFP_KERNEL: only called from process context without the device lock */
static inline void *fq_zalloc(size_t size)
{
	return kvzalloc(size, GFP_KERNEL);
}

static inline void fq_free(void *p)
{
	kvfree(p);
}

/*
 * One flow of @size == fq_sched_flow_size(), zeroed, from fairq.ko's own
 * cache (fairq_main.c): GFP_NOWAIT, so under a spinlock with interrupts
 * off; NULL under memory pressure.
 */
void *fq_env_flow_alloc(size_t size);
void fq_env_flow_free(void *flow);

/*
 * The trace hooks: fairq.ko's events.  Their arguments are loads from
 * the core's structs, read only while the event is on.
 */
#include "fairq_trace.h"

#define fq_env_trace_depth(fqs, from, to, why)			\
	do {							\
		if (trace_fairq_depth_enabled())		\
			trace_fairq_depth(fqs, from, to, why);	\
	} while (0)
#define fq_env_trace_boost_start(fqs, key)			\
	do {							\
		if (trace_fairq_boost_start_enabled())		\
			trace_fairq_boost_start(fqs, key);	\
	} while (0)
#define fq_env_trace_boost_end(fqs, key, why, served)		\
	do {							\
		if (trace_fairq_boost_end_enabled())		\
			trace_fairq_boost_end(fqs, key, why, served); \
	} while (0)
#define fq_env_trace_antic(fqs, key, wait_ns)			\
	do {							\
		if (trace_fairq_antic_enabled())		\
			trace_fairq_antic(fqs, key, wait_ns);	\
	} while (0)

#else /* host build */

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#endif

#ifndef WARN_ON_ONCE
#define WARN_ON_ONCE(cond) ({						\
	static int __fq_warned;						\
	int __fq_c = !!(cond);						\
	if (unlikely(__fq_c) && !__fq_warned) {				\
		__fq_warned = 1;					\
		fq_env_warn(__FILE__, __LINE__, #cond);			\
	}								\
	unlikely(__fq_c);						\
})
#endif

/* Host programs may count warnings; tests fail when any fired. */
extern unsigned long fq_env_warnings;
void fq_env_warn(const char *file, int line, const char *cond);

static inline void *fq_zalloc(size_t size)
{
	return calloc(1, size);
}

static inline void fq_free(void *p)
{
	free(p);
}

static inline void *fq_env_flow_alloc(size_t size)
{
	return calloc(1, size);
}

static inline void fq_env_flow_free(void *flow)
{
	free(flow);
}

/* the trace hooks: nothing to report to */
#define fq_env_trace_depth(fqs, from, to, why)			\
	((void)(fqs), (void)(from), (void)(to), (void)(why))
#define fq_env_trace_boost_start(fqs, key)			\
	((void)(fqs), (void)(key))
#define fq_env_trace_boost_end(fqs, key, why, served)		\
	((void)(fqs), (void)(key), (void)(why), (void)(served))
#define fq_env_trace_antic(fqs, key, wait_ns)			\
	((void)(fqs), (void)(key), (void)(wait_ns))

#ifdef FQ_ENV_DIV32_CHECK
/*
 * `make div32`: the helpers left undefined, so that the objects' only
 * calls to libgcc's __udivdi3 and kin are plain divisions in the core.
 */
u64 div_u64(u64 dividend, u32 divisor);
u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder);
u64 div64_u64(u64 dividend, u64 divisor);
u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder);
s64 div_s64(s64 dividend, s32 divisor);
s64 div64_s64(s64 dividend, s64 divisor);
#else
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64_rem(u64 dividend, u32 divisor, u32 *remainder)
{
	*remainder = (u32)(dividend % divisor);
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

static inline s64 div_s64(s64 dividend, s32 divisor)
{
	return dividend / divisor;
}

static inline s64 div64_s64(s64 dividend, s64 divisor)
{
	return dividend / divisor;
}
#endif /* FQ_ENV_DIV32_CHECK */

/* 0, or a compile error when @e is true (the kernel's, <linux/build_bug.h>) */
#define BUILD_BUG_ON_ZERO(e)	((int)(sizeof(struct { int:(-!!(e)); })))

#define GOLDEN_RATIO_64 0x61C8864680B583EBull

static inline u64 hash_64(u64 val, unsigned int bits)
{
	return bits ? (val * GOLDEN_RATIO_64) >> (64 - bits) : 0;
}

#endif /* __KERNEL__ */

/*
 * fq_hash64 - mix a flow key with a seed (the SFQ perturbation).
 * A finaliser in the style of splitmix64: every input bit reaches every
 * output bit, so hash(key, seed) & (buckets - 1) spreads keys that differ
 * only in their low bits (consecutive pids).
 */
static inline u64 fq_hash64(u64 key, u64 seed)
{
	u64 x = key ^ (seed * 0x9E3779B97F4A7C15ull);

	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 31;
	return x;
}

#endif /* FQ_ENV_H */
