// SPDX-License-Identifier: GPL-2.0
/*
 * fq_tunables.c - tunables by name: parse, range-check, apply, print.
 *
 * Numbers are plain decimal (no sign, no prefix, no suffix), one trailing
 * '\n' allowed.  Errors: unknown name, empty, not a number, trailing
 * garbage, not a power of two, unknown word -> -EINVAL; out of range or
 * too many digits -> -ERANGE; "max_flows" with requests in flight ->
 * -EBUSY; no memory -> -ENOMEM.  On every error nothing changes.
 */
#include "fq_internal.h"

enum fq_tun_id {
	FQ_T_POLICY,
	FQ_T_FAIRNESS,
	FQ_T_QUANTUM,
	FQ_T_QUANTUM_BYTES,
	FQ_T_BUCKETS,
	FQ_T_PERTURB_MS,
	FQ_T_DEPTH,
	FQ_T_IDLE_US,
	FQ_T_IDLE_GRACE_MS,
	FQ_T_EXPIRE_SYNC_MS,
	FQ_T_EXPIRE_ASYNC_MS,
	FQ_T_MAX_FLOWS,
	FQ_T_COUNT,
};

struct fq_tunable {
	const char *name;
	u32 min, max;		/* numeric range; both 0 for words */
	u32 def;		/* default (words: enum value) */
};

static const struct fq_tunable fq_tun[FQ_T_COUNT] = {
	[FQ_T_POLICY]		= { "policy", 0, 0, 0 },	/* fq_policies[0] */
	[FQ_T_FAIRNESS]		= { "fairness", 0, 0, FQ_FAIR_REQUESTS },
	[FQ_T_QUANTUM]		= { "quantum", 1, 1024, 8 },
	[FQ_T_QUANTUM_BYTES]	= { "quantum_bytes", 4096, 64u << 20, 512u << 10 },
	[FQ_T_BUCKETS]		= { "buckets", 1, 65536, 64 },
	[FQ_T_PERTURB_MS]	= { "perturb_ms", 0, 3600000, 5000 },
	[FQ_T_DEPTH]		= { "depth", 1, 4096, 32 },
	[FQ_T_IDLE_US]		= { "idle_us", 0, 100000, 0 },
	[FQ_T_IDLE_GRACE_MS]	= { "idle_grace_ms", 0, 60000, 200 },
	[FQ_T_EXPIRE_SYNC_MS]	= { "fifo_expire_sync_ms", 1, 60000, 250 },
	[FQ_T_EXPIRE_ASYNC_MS]	= { "fifo_expire_async_ms", 1, 60000, 1000 },
	[FQ_T_MAX_FLOWS]	= { "max_flows", 1, 65536, 4096 },
};

const char *const fq_sched_tunables[] = {
	"policy", "fairness", "quantum", "quantum_bytes", "buckets",
	"perturb_ms", "depth", "idle_us", "idle_grace_ms",
	"fifo_expire_sync_ms", "fifo_expire_async_ms", "max_flows", NULL,
};

static const char *const fq_fairness_names[2] = {
	[FQ_FAIR_REQUESTS] = "requests",
	[FQ_FAIR_BYTES] = "bytes",
};

static bool fq_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* @val equals @word, optionally followed by one '\n'. */
bool fq_word_eq(const char *val, const char *word)
{
	while (*word && *val == *word) {
		val++;
		word++;
	}
	if (*word)
		return false;
	return !*val || (val[0] == '\n' && !val[1]);
}

static int fq_word_parse(const char *val, const char *const *words, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fq_word_eq(val, words[i]))
			return i;
	return -EINVAL;
}

static int fq_parse_u32(const char *s, u32 *out)
{
	u64 v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (u64)(*s - '0');
		if (v > 0xffffffffull)
			return -ERANGE;
	}
	if (*s && !(s[0] == '\n' && !s[1]))
		return -EINVAL;
	*out = (u32)v;
	return 0;
}

static int fq_tun_find(const char *name)
{
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < FQ_T_COUNT; i++)
		if (fq_streq(name, fq_tun[i].name))
			return i;
	return -EINVAL;
}

void fq_tunables_default(struct fq_sched *fqs)
{
	fqs->pol = fq_policies[fq_tun[FQ_T_POLICY].def];
	fqs->fairness = fq_tun[FQ_T_FAIRNESS].def;
	fqs->quantum = fq_tun[FQ_T_QUANTUM].def;
	fqs->quantum_bytes = fq_tun[FQ_T_QUANTUM_BYTES].def;
	fqs->buckets = fq_tun[FQ_T_BUCKETS].def;
	fqs->perturb_ms = fq_tun[FQ_T_PERTURB_MS].def;
	fqs->depth = fq_tun[FQ_T_DEPTH].def;
	fqs->idle_us = fq_tun[FQ_T_IDLE_US].def;
	fqs->idle_grace_ms = fq_tun[FQ_T_IDLE_GRACE_MS].def;
	fqs->expire_ms[0] = fq_tun[FQ_T_EXPIRE_SYNC_MS].def;
	fqs->expire_ms[1] = fq_tun[FQ_T_EXPIRE_ASYNC_MS].def;
	fqs->max_flows = fq_tun[FQ_T_MAX_FLOWS].def;
}

static int fq_set_policy(struct fq_sched *fqs, const char *val)
{
	const struct fq_policy *pol = fq_policy_find(val);

	if (!pol)
		return -EINVAL;
	if (pol == fqs->pol)
		return 0;
	fq_sched_switch(fqs, pol);
	fqs->st.policy_switches++;
	return 0;
}

static int fq_set_fairness(struct fq_sched *fqs, const char *val)
{
	int f = fq_word_parse(val, fq_fairness_names, 2);

	if (f < 0)
		return f;
	if ((u32)f == fqs->fairness)
		return 0;
	fqs->fairness = (u32)f;
	fq_sched_rebuild(fqs, fqs->max_flows);	/* credits change unit */
	return 0;
}

static int fq_set_number(struct fq_sched *fqs, int id, u32 v)
{
	switch (id) {
	case FQ_T_QUANTUM:
		fqs->quantum = v;
		break;
	case FQ_T_QUANTUM_BYTES:
		fqs->quantum_bytes = v;
		break;
	case FQ_T_BUCKETS:
		if (v & (v - 1))
			return -EINVAL;
		if (v > fqs->max_flows)
			return -ERANGE;
		if (v == fqs->buckets)
			break;
		fqs->buckets = v;
		if (fqs->pol->uses_buckets)
			fq_sched_rebuild(fqs, fqs->max_flows);
		break;
	case FQ_T_PERTURB_MS:
		fqs->perturb_ms = v;
		fqs->perturb_next = 0;
		break;
	case FQ_T_DEPTH:
		fqs->depth = v;
		break;
	case FQ_T_IDLE_US:
		fqs->idle_us = v;
		break;
	case FQ_T_IDLE_GRACE_MS:
		fqs->idle_grace_ms = v;
		break;
	case FQ_T_EXPIRE_SYNC_MS:
		fqs->expire_ms[0] = v;
		break;
	case FQ_T_EXPIRE_ASYNC_MS:
		fqs->expire_ms[1] = v;
		break;
	case FQ_T_MAX_FLOWS:
		if (v < fqs->buckets)
			return -ERANGE;
		if (v == fqs->max_flows)
			break;
		return fq_sched_rebuild(fqs, v);
	}
	return 0;
}

int fq_sched_set(struct fq_sched *fqs, const char *name, const char *val)
{
	int id = fq_tun_find(name);
	u32 v;
	int ret;

	if (id < 0 || !val)
		return -EINVAL;
	if (id == FQ_T_POLICY)
		return fq_set_policy(fqs, val);
	if (id == FQ_T_FAIRNESS)
		return fq_set_fairness(fqs, val);
	ret = fq_parse_u32(val, &v);
	if (ret)
		return ret;
	if (v < fq_tun[id].min || v > fq_tun[id].max)
		return -ERANGE;
	return fq_set_number(fqs, id, v);
}

static u32 fq_get_number(const struct fq_sched *fqs, int id)
{
	switch (id) {
	case FQ_T_QUANTUM:
		return fqs->quantum;
	case FQ_T_QUANTUM_BYTES:
		return fqs->quantum_bytes;
	case FQ_T_BUCKETS:
		return fqs->buckets;
	case FQ_T_PERTURB_MS:
		return fqs->perturb_ms;
	case FQ_T_DEPTH:
		return fqs->depth;
	case FQ_T_IDLE_US:
		return fqs->idle_us;
	case FQ_T_IDLE_GRACE_MS:
		return fqs->idle_grace_ms;
	case FQ_T_EXPIRE_SYNC_MS:
		return fqs->expire_ms[0];
	case FQ_T_EXPIRE_ASYNC_MS:
		return fqs->expire_ms[1];
	case FQ_T_MAX_FLOWS:
		return fqs->max_flows;
	}
	return 0;
}

/* Copy @s and '\n' into @buf; the length or -ERANGE if it does not fit. */
static int fq_emit(char *buf, size_t len, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	if (n + 2 > len)
		return -ERANGE;
	for (len = 0; len < n; len++)
		buf[len] = s[len];
	buf[n] = '\n';
	buf[n + 1] = '\0';
	return (int)(n + 1);
}

static int fq_emit_u32(char *buf, size_t len, u32 v)
{
	char tmp[12];
	int i = (int)sizeof(tmp) - 1;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return fq_emit(buf, len, &tmp[i]);
}

int fq_sched_get(struct fq_sched *fqs, const char *name, char *buf,
		 size_t len)
{
	int id = fq_tun_find(name);

	if (id < 0 || !buf)
		return -EINVAL;
	if (id == FQ_T_POLICY)
		return fq_emit(buf, len, fqs->pol->name);
	if (id == FQ_T_FAIRNESS)
		return fq_emit(buf, len, fq_fairness_names[fqs->fairness]);
	return fq_emit_u32(buf, len, fq_get_number(fqs, id));
}

bool fq_sched_set_needs_alloc(const char *name)
{
	return name && fq_tun_find(name) == FQ_T_MAX_FLOWS;
}
