#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-tests.sh [TEST...] - run the fairq-nbd host tests (default: all
# tests/test-*.sh), one verdict line per test (tests/lib.sh: exit 0 pass,
# 77 skip with the reason the test gave, anything else fail), then
# "N passed, N failed, N skipped".  Exit status 1 if any test failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tests/lib.sh
. "$here/../../tests/lib.sh"
cd "$here" || exit 1
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test-*.sh)
for t in "${tests[@]}"; do
	t=${t##*/}
	start=$(date +%s%N)
	out=$(timeout 120 bash "./$t" 2>&1)
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	why=$(printf '%s\n' "$out" | sed -n 's/^\(SKIP\|FAIL\):\{0,1\} //p' | head -n 1)
	case $rc in
	0) ok "$(printf '%-28s %6d ms' "$t" "$ms")" ;;
	77) skip "$t: ${why:-no reason given}" ;;
	124) fail "$t: timed out after 120 s" ;;
	*) fail "$t: ${why:-exit $rc} ($ms ms)" ;;
	esac
	if [ "$rc" != 0 ] || [ -n "${VERBOSE:-}" ]; then
		printf '%s\n' "$out" | sed 's/^/     | /'
	else
		# benchmark-style figures are always shown
		printf '%s\n' "$out" | grep -E '^(figure|measured):' | sed 's/^/     | /' || :
	fi
done
summary
