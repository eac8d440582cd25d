#!/bin/bash
# tests/host/shellcheck.sh - every tracked shell script under shellcheck
# (host suite "shellcheck").
#
# The scripts are the files git tracks that end in .sh, start with a
# sh/bash shebang, or say "# shellcheck shell=..." (the sourced libraries:
# tests/lib.sh, tests/vm/rc, tests/vm/faultrc).  Each is one check, clean
# at shellcheck's default severity (style and up); an exception is one
# "# shellcheck disable=SCnnnn # reason" line above the code it excuses.
# No shellcheck, or no git checkout to list the files: one counted skip.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"

command -v shellcheck >/dev/null || skip_all "shellcheck is not installed (scripts/install-deps)"
files=$(git -C "$top" ls-files 2>/dev/null) || skip_all "$top is not a git checkout: no list of tracked files"

# is_shell FILE: a shell script by its name, shebang or shellcheck directive
is_shell() {
	local first
	case $1 in *.sh) return 0 ;; esac
	read -r first <"$1" 2>/dev/null || return 1
	case $first in
	'#!/bin/sh'* | '#!/bin/bash'* | '#!/usr/bin/env bash'* | '#!/usr/bin/env sh'*) return 0 ;;
	esac
	head -n 5 "$1" | grep -q '^# shellcheck shell='
}

cd "$top" || fatal "cd $top"
n=0
while read -r f; do
	[ -f "$f" ] && is_shell "$f" || continue
	n=$((n + 1))
	if out=$(shellcheck -x -P SCRIPTDIR "$f" 2>&1); then
		ok "$f"
	else
		fail "$f:"
		printf '%s\n' "$out" | sed 's/^/    /'
	fi
done <<<"$files"
[ "$n" -ge 40 ] || fail "only $n shell scripts found (is_shell is stale?)"
summary
