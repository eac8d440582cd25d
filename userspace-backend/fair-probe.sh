#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# fair-probe.sh CC CFLAGS SRC... - exit 0 if the sched/ sources compile
# and link with a caller of the fq_sched API (used by FAIR=auto).
set -e
here=$(cd "$(dirname "$0")" && pwd)
if [ "$1" = --list ]; then
	# the sched/ sources that are library code (no main())
	for f in "$here"/../sched/*.c; do
		[ -f "$f" ] || continue
		grep -qE '^(int|static int)?[[:space:]]*main[[:space:]]*[(]' "$f" ||
			echo "../sched/${f##*/}"
	done
	exit 0
fi
cc=$1; cflags=$2; shift 2
[ $# -gt 0 ] || exit 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/probe.c" <<'PROBE'
#include "fq_sched.h"
unsigned long fq_env_warnings;
void fq_env_warn(const char *f, int l, const char *c) { (void)f; (void)l; (void)c; fq_env_warnings++; }
int main(void)
{
	struct fq_sched *s = fq_sched_create("sfq", 1);
	struct fq_req rq = { .sector = 0, .bytes = 4096, .key = 1 };
	struct fq_req *d;

	if (!s)
		return 1;
	fq_sched_enqueue(s, &rq, 1);
	d = fq_sched_dispatch(s, 2);
	if (d != &rq)
		return 1;
	fq_sched_complete(s, d, 0, 3);
	fq_sched_destroy(s);
	return fq_env_warnings ? 1 : 0;
}
PROBE
# shellcheck disable=SC2086
$cc $cflags -I"$here/../sched" -o "$dir/probe" "$dir/probe.c" "$@"
"$dir/probe"
