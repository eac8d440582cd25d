#!/bin/sh
# tests/run.sh BUILD - run the sched/ host test programs and add up their
# "name: N passed, N failed" lines (tests/lib.sh: tlib_add).  The last
# line is the total, "N passed, N failed, N skipped"; the exit status is
# non-zero when any case failed or any program died.  A check that cannot
# run here (no libFuzzer build, no valgrind) is a counted skip.
b=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"

suite() {
	name=$1
	shift
	"$@" >"$b/$name.log" 2>&1
	rc=$?
	cat "$b/$name.log"
	tlib_add "$name" "$rc" "$b/$name.log"
}

suite unit "$b/fq_unit"
suite prop "$b/fq_prop" --seeds 200 --ops 4000
suite depth "$b/fq_depth_test"
suite cost "$b/fq_cost_test"
if [ -x "$b/fq_fuzz" ]; then
	# libFuzzer for a few seconds from an empty corpus; one case
	if "$b/fq_fuzz" -max_total_time=10 -max_len=4096 \
		-print_final_stats=0 -artifact_prefix="$b/" >"$b/fuzz.log" 2>&1; then
		ok "fuzz: $(grep -Eo '#[0-9]+' "$b/fuzz.log" | tail -n 1 | tr -d '#') inputs, no failure"
	else
		tail -n 30 "$b/fuzz.log"
		fail "fuzz: see $b/fuzz.log and crash-* files"
	fi
else
	skip "fuzz: clang with libFuzzer not found (scripts/install-deps: clang libclang-rt-14-dev)"
fi
if command -v valgrind >/dev/null 2>&1; then
	suite unit-valgrind valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite "$b/fq_unit_vg"
else
	skip "unit under valgrind: valgrind not installed (scripts/install-deps)"
fi
summary
