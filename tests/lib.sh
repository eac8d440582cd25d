# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# tests/lib.sh - the one test library of fairq: ok / fail / skip, the
# closing "N passed, N failed, N skipped" line, and the one parser of that
# line.  POSIX sh (dash, busybox ash, bash): sourced by every host runner
# (tests/host/*.sh, tests/dkms/host.sh, tools/tests/run.sh,
# userspace-backend/tests/, sched/tests/run.sh), by tests/run and
# vm/run-split, and in the guest by tests/vm/rc.
#
#   . "$top/tests/lib.sh"
#
# Verdicts (each prints one line and is counted; DESC says what was
# checked, a skip's DESC says why):
#
#   ok DESC          a check passed
#   fail DESC        a check failed: counted, and the suite goes on
#   skip DESC        a check could not run: counted with its reason
#   check DESC CMD.. ok DESC when CMD exits 0, else fail DESC
#   fatal DESC       a failure after which nothing else can be checked:
#                    counted, then the suite stops (summary, exit 1)
#   skip_all WHY     the suite cannot run at all (a missing tool, no such
#                    kernel, not root): one counted skip, then it stops
#                    (summary, exit 0)
#   summary          prints "N passed, N failed, N skipped" and returns
#                    1 when anything failed: end a suite with
#                    `summary; exit`, or `summary` as its last command
#
# There is one meaning of fail: count and go on.  A suite that cannot go
# on after a failure says so with fatal.
#
# One test per process (TLIB_CASE=1, set by tests/vm/rc and
# userspace-backend/tests/functions.sh): the exit status is the verdict
# (0 pass, 1 fail, 77 skip) and no summary line is printed.  fatal exits
# 1, skip_all exits 77, fail counts and tlib_case_status (called from the
# test's EXIT trap) turns a counted failure into exit status 1.  The
# first fail/fatal/skip_all message goes to $TLIB_REASON_FILE when set
# (vm/init shows it on the test's result line).
#
# Adding up suites (tests/run, sched/tests/run.sh, vm/run-split):
#
#   tlib_summary_of FILE   prints "P F S" from FILE's last summary line
#                          ("N passed, N failed[, N skipped]", optionally
#                          after one "word: "); status 1 when it has none
#   tlib_add NAME RC FILE  adds the counts of FILE's summary line to this
#                          script's; a suite with no summary line, or that
#                          exited non-zero without counting a failure,
#                          adds one failure (a crash is never a pass)

TLIB_PASSED=${TLIB_PASSED:-0}
TLIB_FAILED=${TLIB_FAILED:-0}
TLIB_SKIPPED=${TLIB_SKIPPED:-0}
TLIB_CASE=${TLIB_CASE:-0}

# _tlib_reason MSG: the first message of a test for its result line
_tlib_reason() {
	if [ -n "${TLIB_REASON_FILE:-}" ] && [ ! -s "$TLIB_REASON_FILE" ]; then
		echo "$*" >"$TLIB_REASON_FILE"
	fi
	return 0
}

ok() {
	TLIB_PASSED=$((TLIB_PASSED + 1))
	echo "ok   $*"
}

fail() {
	TLIB_FAILED=$((TLIB_FAILED + 1))
	echo "FAIL $*"
	_tlib_reason "$*"
	return 0
}

skip() {
	TLIB_SKIPPED=$((TLIB_SKIPPED + 1))
	echo "skip $*"
	return 0
}

check() {
	_tlib_what=$1
	shift
	if "$@"; then ok "$_tlib_what"; else fail "$_tlib_what"; fi
}

summary() {
	echo "$TLIB_PASSED passed, $TLIB_FAILED failed, $TLIB_SKIPPED skipped"
	[ "$TLIB_FAILED" = 0 ]
}

fatal() {
	if [ "$TLIB_CASE" = 1 ]; then
		echo "FAIL: $*" >&2
		_tlib_reason "$*"
		exit 1
	fi
	fail "$* (fatal: the suite stops here)"
	summary
	exit 1
}

skip_all() {
	if [ "$TLIB_CASE" = 1 ]; then
		echo "SKIP: $*" >&2
		_tlib_reason "$*"
		exit 77
	fi
	skip "$* (the whole suite)"
	summary
	exit
}

# tlib_case_status RC: the exit status of a one-test process that ends
# with RC: 1 when it counted a failure and would have passed
tlib_case_status() {
	if [ "$1" = 0 ] && [ "$TLIB_FAILED" != 0 ]; then
		echo "FAIL: $TLIB_FAILED check(s) failed" >&2
		echo 1
	else
		echo "$1"
	fi
}

tlib_summary_of() {
	sed -n 's/^\([A-Za-z0-9_-]*: \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed\(, \([0-9][0-9]*\) skipped\)\{0,1\}$/\2 \3 \5/p' "$1" |
		tail -n 1 | awk 'NF { print $1, $2, ($3 == "" ? 0 : $3); found = 1 } END { exit !found }'
}

tlib_add() {
	_tlib_name=$1 _tlib_rc=$2
	if ! _tlib_line=$(tlib_summary_of "$3"); then
		echo "=== $_tlib_name: no summary line (exit $_tlib_rc): counted as 1 failed"
		TLIB_FAILED=$((TLIB_FAILED + 1))
		return 1
	fi
	# shellcheck disable=SC2086 # "P F S": three numbers, split on purpose
	set -- $_tlib_line
	TLIB_PASSED=$((TLIB_PASSED + $1))
	TLIB_FAILED=$((TLIB_FAILED + $2))
	TLIB_SKIPPED=$((TLIB_SKIPPED + $3))
	if [ "$_tlib_rc" != 0 ] && [ "$2" = 0 ]; then
		echo "=== $_tlib_name: exit $_tlib_rc with no failure counted: counted as 1 failed"
		TLIB_FAILED=$((TLIB_FAILED + 1))
		return 1
	fi
	echo "=== $_tlib_name: $1 passed, $2 failed, $3 skipped (exit $_tlib_rc)"
	[ "$2" = 0 ]
}
