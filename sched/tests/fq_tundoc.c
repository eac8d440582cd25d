// SPDX-License-Identifier: GPL-2.0
/*
 * fq_tundoc.c - the tunables table (fq_tunables_table.h) as documentation.
 *
 *   fq_tundoc markdown   the table of docs/INTERFACE.md, "Tunables"
 *   fq_tundoc list       one line per tunable, tab-separated:
 *                        name kind min max default unit words for
 *                        (kind: number, word, alloc or auto; words:
 *                        space-separated; an empty unit or words: "-";
 *                        for: users or experiments)
 *
 * Names, ranges, units, who a tunable is for and the descriptions come
 * from the table itself (FQ_DOC(who, line) is expanded here and nowhere
 * else); the defaults from a fresh instance (fq_sched_get()), so they are
 * what the core really starts with.  make -C sched doc rewrites the table in
 * docs/INTERFACE.md; tests/host/doc-tables.sh fails when it differs.
 */
#include <stdio.h>
#include <string.h>
#include "fq_sched.h"

/* who a tunable is for: FQ_DOC(users, ...) or FQ_DOC(experiments, ...) */
enum fq_for {
	FQ_FOR_users,
	FQ_FOR_experiments,
};

static const char *const fors[] = {
	[FQ_FOR_users] = "users",
	[FQ_FOR_experiments] = "experiments",
};

struct doc {
	const char *name, *unit, *words;
	enum fq_tun_kind kind;
	unsigned int min, max;
	enum fq_for who;	/* } from FQ_DOC(who, desc): any other */
	const char *desc;	/* } word than the two does not compile */
};

#define FQ_DOC(_who, _desc)	FQ_FOR_##_who, _desc
#define FQ_TUNABLE(_name, _field, _kind, _min, _max, _def, _unit, _words, _set, _doc) \
	{ #_name, _unit, _words, _kind, _min, _max, _doc },
static const struct doc docs[FQ_TUN_COUNT] = {
#include "fq_tunables_table.h"
};
#undef FQ_TUNABLE
#undef FQ_DOC

static const char *const kinds[] = {
	[FQ_TK_NUMBER] = "number",
	[FQ_TK_WORD] = "word",
	[FQ_TK_ALLOC] = "alloc",
	[FQ_TK_AUTO] = "auto",
};

/* the words as `a` `b` `c` */
static void print_words(const char *w)
{
	size_t n;

	while (*w) {
		n = strcspn(w, " ");
		printf("`%.*s`", (int)n, w);
		w += n;
		w += strspn(w, " ");
		if (*w)
			putchar(' ');
	}
}

static void markdown(const char def[][64])
{
	const struct doc *d;
	int i;

	printf("| name | for | range | default | unit | meaning |\n");
	printf("|---|---|---|---|---|---|\n");
	for (i = 0; i < FQ_TUN_COUNT; i++) {
		d = &docs[i];
		printf("| `%s` | %s | ", d->name, fors[d->who]);
		if (d->kind == FQ_TK_WORD) {
			print_words(d->words);
			printf(" | `%s` | | %s", def[i], d->desc);
		} else {
			printf("%u..%u%s | %s | %s | %s", d->min, d->max,
			       d->kind == FQ_TK_AUTO ? " or `auto`" : "", def[i],
			       d->unit, d->desc);
		}
		if (d->kind == FQ_TK_ALLOC)
			printf("; bounds the flows' memory: set in configfs while powered off (`EBUSY` while powered), read-only in sysfs");
		printf(" |\n");
	}
}

static void list(const char def[][64])
{
	const struct doc *d;
	int i;

	for (i = 0; i < FQ_TUN_COUNT; i++) {
		d = &docs[i];
		printf("%s\t%s\t%u\t%u\t%s\t%s\t%s\t%s\n", d->name,
		       kinds[d->kind], d->min, d->max, def[i],
		       *d->unit ? d->unit : "-", *d->words ? d->words : "-",
		       fors[d->who]);
	}
}

int main(int argc, char **argv)
{
	static char def[FQ_TUN_COUNT][64];
	struct fq_sched *s = fq_sched_create(NULL, 1);
	int i;

	if (!s)
		return 1;
	for (i = 0; i < FQ_TUN_COUNT; i++) {
		if (strcmp(fq_sched_tunables[i], docs[i].name) ||
		    fq_sched_get(s, docs[i].name, def[i], sizeof(def[i])) < 0) {
			fprintf(stderr, "fq_tundoc: %s: no such tunable in the core\n",
				docs[i].name);
			return 1;
		}
		def[i][strcspn(def[i], "\n")] = '\0';
	}
	fq_sched_destroy(s);
	if (argc == 2 && !strcmp(argv[1], "markdown"))
		markdown(def);
	else if (argc == 2 && !strcmp(argv[1], "list"))
		list(def);
	else {
		fprintf(stderr, "usage: fq_tundoc markdown|list\n");
		return 2;
	}
	return 0;
}
