#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run-tests.sh [TEST...] - run the fairq-nbd host tests (default: all
# tests/test-*.sh), one line per test, then "N passed, N failed, N skipped".
# Exit status 1 if any test failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here" || exit 1
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test-*.sh)
pass=0 failc=0 skipc=0
for t in "${tests[@]}"; do
	t=${t##*/}
	start=$(date +%s%N)
	out=$(timeout 120 bash "./$t" 2>&1)
	rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	case $rc in
	0) pass=$((pass + 1)); res=PASS ;;
	77) skipc=$((skipc + 1)); res=SKIP ;;
	*) failc=$((failc + 1)); res=FAIL ;;
	esac
	printf '%-4s %-28s %6d ms\n' "$res" "$t" "$ms"
	if [ "$res" != PASS ] || [ -n "${VERBOSE:-}" ]; then
		printf '%s\n' "$out" | sed 's/^/     | /'
	else
		# benchmark-style figures are always shown
		printf '%s\n' "$out" | grep -E '^(figure|measured):' | sed 's/^/     | /' || :
	fi
done
echo "$pass passed, $failc failed, $skipc skipped"
[ "$failc" -eq 0 ]
