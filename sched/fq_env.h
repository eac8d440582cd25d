/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fq_env.h - the only place where sched/ meets its environment.
 *
 * The fair-queueing core is compiled twice: into fairq.ko (Kbuild defines
 * __KERNEL__) and into host programs (unit tests, fuzzer, simulator, the
 * NBD server's --fair mode).  This header maps the few things the core
 * needs -- fixed-width types, errno values, zeroed allocation for setup
 * paths, a 64-bit hash and WARN_ON_ONCE -- to the kernel or to libc.  No
 * algorithm file includes anything else, and no algorithm file tests
 * __KERNEL__ itself.
 *
 * Allocation that may sleep (fq_zalloc()) happens only in
 * fq_sched_create(), and when the caller grows the flow table
 * (fq_sched_table_alloc()), never under the caller's lock.  Flows are the
 * one thing allocated on the enqueue path, under that lock:
 * fq_env_flow_alloc() must not sleep, and may fail (the core then
 * reclaims a drained flow, or uses the overflow flow).
 */
#ifndef FQ_ENV_H
#define FQ_ENV_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#include <linux/compiler.h>
#include <linux/bug.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/hash.h>

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
