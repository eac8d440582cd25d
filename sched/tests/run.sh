#!/bin/sh
# tests/run.sh BUILD - run the sched/ host test programs and add up their
# "name: N passed, N failed" lines.  The last line is the total; the exit
# status is non-zero when any case failed or any program died.
b=${1:-build}
passed=0
failed=0

suite() {
	name=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E "^$name: [0-9]+ passed, [0-9]+ failed$" | tail -n 1)
	if [ -z "$line" ]; then
		echo "$name: exit $rc without a summary: 1 failure"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed 's/.*: \([0-9]*\) passed.*/\1/')
	f=$(echo "$line" | sed 's/.* \([0-9]*\) failed$/\1/')
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

suite unit "$b/fq_unit"
suite prop "$b/fq_prop" --seeds 200 --ops 4000
suite depth "$b/fq_depth_test"
suite cost "$b/fq_cost_test"
if [ -x "$b/fq_fuzz" ]; then
	# libFuzzer for a few seconds from an empty corpus; one case
	if "$b/fq_fuzz" -max_total_time=10 -max_len=4096 \
		-print_final_stats=0 -artifact_prefix="$b/" >"$b/fuzz.log" 2>&1; then
		echo "fuzz: $(grep -Eo '#[0-9]+' "$b/fuzz.log" | tail -n 1 | tr -d '#') inputs, no failure"
		passed=$((passed + 1))
	else
		tail -n 30 "$b/fuzz.log"
		echo "fuzz: FAILED (see $b/fuzz.log and crash-* files)"
		failed=$((failed + 1))
	fi
fi
if command -v valgrind >/dev/null 2>&1; then
	suite unit valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite "$b/fq_unit_vg"
else
	echo "valgrind: not installed: 1 failure"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
