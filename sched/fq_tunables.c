// SPDX-License-Identifier: GPL-2.0
/*
 * fq_tunables.c - tunables by name: parse, range-check, apply, print.
 *
 * Every table here is made from the entries of fq_tunables_table.h; the
 * set functions below are the behaviour a range and a store cannot say.
 *
 * Numbers are plain decimal (no sign, no prefix, no suffix), one trailing
 * '\n' allowed; a tunable of kind FQ_TK_AUTO also takes the word "auto",
 * kept as 0 and printed as "auto".  Errors: unknown name, empty, not a number, trailing
 * garbage, not a power of two, unknown word -> -EINVAL; out of range or
 * too many digits -> -ERANGE.  On every error nothing changes.
 */
#include "fq_internal.h"

static int fq_set_policy(struct fq_sched *fqs, u32 *field, u32 v);
static int fq_set_rebuild(struct fq_sched *fqs, u32 *field, u32 v);
static int fq_set_buckets(struct fq_sched *fqs, u32 *field, u32 v);
static int fq_set_perturb(struct fq_sched *fqs, u32 *field, u32 v);
static int fq_set_max_flows(struct fq_sched *fqs, u32 *field, u32 v);
static int fq_set_depth(struct fq_sched *fqs, u32 *field, u32 v);
static int fq_set_depth_max(struct fq_sched *fqs, u32 *field, u32 v);

/* every tunable lives in a u32 of struct fq_sched */
#define FQ_TUN_OFFSET(field)							\
	(offsetof(struct fq_sched, field) +					\
	 BUILD_BUG_ON_ZERO(!__builtin_types_compatible_p(typeof(((struct fq_sched *)0)->field), u32)))

#define FQ_TUNABLE(_name, _field, _kind, _min, _max, _def, _unit, _words, _set, _desc) \
	[FQ_TUN_##_name] = {							\
		.name = #_name,							\
		.words = _words,						\
		.set = _set,							\
		.offset = FQ_TUN_OFFSET(_field),				\
		.kind = _kind,							\
		.min = _min,							\
		.max = _max,							\
		.def = _def,							\
	},
const struct fq_tunable fq_tunables[FQ_TUN_COUNT] = {
#include "fq_tunables_table.h"
};
#undef FQ_TUNABLE

#define FQ_TUNABLE(name, ...)						\
	[FQ_TUN_##name] = #name,
const char *const fq_sched_tunables[FQ_TUN_COUNT + 1] = {
#include "fq_tunables_table.h"
};
#undef FQ_TUNABLE

static u32 *fq_tun_field(struct fq_sched *fqs, const struct fq_tunable *t)
{
	return (u32 *)((char *)fqs + t->offset);
}

static bool fq_streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/*
 * The index of @val in @words (words one space apart), @val optionally
 * followed by one '\n'; -EINVAL when it is none of them.
 */
static int fq_word_parse(const char *val, const char *words)
{
	const char *v;
	int i = 0;

	while (*words) {
		for (v = val; *words && *words != ' ' && *v == *words; v++)
			words++;
		if ((!*words || *words == ' ') &&
		    (!*v || (v[0] == '\n' && !v[1])))
			return i;
		while (*words && *words != ' ')
			words++;
		while (*words == ' ')
			words++;
		i++;
	}
	return -EINVAL;
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

static const struct fq_tunable *fq_tun_find(const char *name)
{
	int i;

	if (!name)
		return NULL;
	for (i = 0; i < FQ_TUN_COUNT; i++)
		if (fq_streq(name, fq_tunables[i].name))
			return &fq_tunables[i];
	return NULL;
}

void fq_tunables_default(struct fq_sched *fqs)
{
	int i;

	for (i = 0; i < FQ_TUN_COUNT; i++)
		*fq_tun_field(fqs, &fq_tunables[i]) = fq_tunables[i].def;
	fqs->pol = fq_policies[fqs->policy];
}

/* A change re-files every queued request (the credits change unit). */
static int fq_set_rebuild(struct fq_sched *fqs, u32 *field, u32 v)
{
	if (v == *field)
		return 0;
	*field = v;
	fq_sched_rebuild(fqs);
	return 0;
}

/* @v indexes fq_policies[], whose order the table's words follow */
static int fq_set_policy(struct fq_sched *fqs, u32 *field, u32 v)
{
	if (v == *field)
		return 0;
	*field = v;
	fq_sched_switch(fqs, fq_policies[v]);
	fqs->st.policy_switches++;
	return 0;
}

static int fq_set_buckets(struct fq_sched *fqs, u32 *field, u32 v)
{
	if (v & (v - 1))
		return -EINVAL;
	if (v > fqs->max_flows)
		return -ERANGE;
	if (v == *field)
		return 0;
	*field = v;
	if (fqs->pol->uses_buckets)
		fq_sched_rebuild(fqs);
	return 0;
}

static int fq_set_perturb(struct fq_sched *fqs, u32 *field, u32 v)
{
	*field = v;
	fqs->perturb_next = 0;
	return 0;
}

/*
 * A number fixes the limit; "auto" (0) hands it to the controller, which
 * starts again from the limit in force (what the device was just given).
 */
static int fq_set_depth(struct fq_sched *fqs, u32 *field, u32 v)
{
	if (v == *field)
		return 0;
	*field = v;
	if (v) {
		fq_env_trace_depth(fqs, fqs->depth_now, v,
				   FQ_DEPTH_WHY_SET);
		fqs->depth_now = v;
		return 0;
	}
	fq_sched_depth_restart(fqs, fqs->depth_now, fqs->depth_max);
	return 0;
}

/* A lower bound of depth=auto restarts the controller below it. */
static int fq_set_depth_max(struct fq_sched *fqs, u32 *field, u32 v)
{
	if (v == *field)
		return 0;
	*field = v;
	if (fqs->depth)
		return 0;
	fq_sched_depth_restart(fqs, fqs->depth_now < v ? fqs->depth_now : v, v);
	return 0;
}

/*
 * A bound, not a size: flows beyond a lowered bound stay until they
 * drain, new keys share the overflow flow until fewer exist; the spares
 * go back at once.
 */
static int fq_set_max_flows(struct fq_sched *fqs, u32 *field, u32 v)
{
	if (v < fqs->buckets)
		return -ERANGE;
	*field = v;
	fq_flows_trim(fqs);
	return 0;
}

int fq_sched_set(struct fq_sched *fqs, const char *name, const char *val)
{
	const struct fq_tunable *t = fq_tun_find(name);
	u32 v;
	int ret;

	if (!t || !val)
		return -EINVAL;
	if (t->kind == FQ_TK_WORD) {
		ret = fq_word_parse(val, t->words);
		if (ret < 0)
			return ret;
		v = (u32)ret;
	} else if (t->kind == FQ_TK_AUTO && fq_word_eq(val, "auto")) {
		v = 0;
	} else {
		ret = fq_parse_u32(val, &v);
		if (ret)
			return ret;
		if (v < t->min || v > t->max)
			return -ERANGE;
	}
	if (t->set)
		return t->set(fqs, fq_tun_field(fqs, t), v);
	*fq_tun_field(fqs, t) = v;
	return 0;
}

/* Copy @n bytes of @s and '\n' into @buf; the length or -ERANGE if it does not fit. */
static int fq_emit(char *buf, size_t len, const char *s, size_t n)
{
	size_t i;

	if (n + 2 > len)
		return -ERANGE;
	for (i = 0; i < n; i++)
		buf[i] = s[i];
	buf[n] = '\n';
	buf[n + 1] = '\0';
	return (int)(n + 1);
}

static int fq_emit_u32(char *buf, size_t len, u32 v)
{
	char tmp[12];
	int i = (int)sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return fq_emit(buf, len, &tmp[i], sizeof(tmp) - (size_t)i);
}

/* Word number @idx of @words. */
static int fq_emit_word(char *buf, size_t len, const char *words, u32 idx)
{
	size_t n;

	for (; idx; idx--) {
		while (*words && *words != ' ')
			words++;
		while (*words == ' ')
			words++;
	}
	for (n = 0; words[n] && words[n] != ' '; n++)
		;
	return fq_emit(buf, len, words, n);
}

int fq_sched_get(struct fq_sched *fqs, const char *name, char *buf,
		 size_t len)
{
	const struct fq_tunable *t = fq_tun_find(name);
	u32 v;

	if (!t || !buf)
		return -EINVAL;
	v = *fq_tun_field(fqs, t);
	if (t->kind == FQ_TK_WORD)
		return fq_emit_word(buf, len, t->words, v);
	if (t->kind == FQ_TK_AUTO && !v)
		return fq_emit(buf, len, "auto", 4);
	return fq_emit_u32(buf, len, v);
}

bool fq_sched_set_needs_alloc(const char *name)
{
	const struct fq_tunable *t = fq_tun_find(name);

	return t && t->kind == FQ_TK_ALLOC;
}
