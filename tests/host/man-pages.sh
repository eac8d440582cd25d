#!/bin/bash
# tests/host/man-pages.sh - the man pages in man/ (host suite "man").
#
# 1. every man/*.[0-9] formats without a single warning, under
#    `man --warnings -l` (man-db, groff -ww) and `groff -ww -z -man`, and
#    its .TH names the section its file name says;
# 2. fairq(4) documents every configfs and sysfs attribute the driver
#    defines (drivers/*.c, and one per tunable of the core's table,
#    sched/fq_tunables_table.h) as a tag of its own (the ranges and
#    defaults: tests/host/doc-tables.sh);
# 3. fairqctl(8) documents every command and long option of
#    tools/fairqctl.c, fairq-nbd(8) every long option of
#    userspace-backend/main.c;
# 4. every page fairqctl --help points at (NAME(N) in usage() of
#    tools/fairqctl.c) is a page of man/, which the package installs, and
#    the help points at no file of the source tree (docs/).
# The checker is first shown to catch a page that does warn.
# Ends with "N passed, N failed, N skipped" (tests/lib.sh).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
man="$top/man"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tests/lib.sh"

# Every warning either formatter prints for PAGE, on stdout.
page_warnings() {
	# stderr (the warnings) to stdout, the formatted page away
	# shellcheck disable=SC2069
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$1" 2>&1 >/dev/null
	groff -ww -z -man -t "$1" 2>&1
}

# --- the checker itself ----------------------------------------------------
printf '.TH BAD 1\n.SH NAME\nbad \\- a page that warns\n.BOGUS\n\\fQtext\n' >"$tmp/bad.1"
if [ -n "$(page_warnings "$tmp/bad.1")" ]; then
	ok "checker: a page with an undefined macro and font warns"
else
	fail "checker: no warning for an undefined macro and font"
fi

# --- 1. every page, no warnings ---------------------------------------------
pages=("$man"/*.[0-9])
[ -e "${pages[0]}" ] || pages=()
for want in fairq.4 fairqctl.8 fairq-nbd.8; do
	if [ -f "$man/$want" ]; then ok "$want exists"; else fail "$want missing"; fi
done
for p in "${pages[@]}"; do
	name=$(basename "$p")
	w=$(page_warnings "$p")
	if [ -z "$w" ]; then
		ok "$name: no warnings"
	else
		fail "$name: warnings:"
		printf '%s\n' "$w" | sed 's/^/    /'
	fi
	sec=$(sed -n 's/^\.TH  *[^ ]*  *\([0-9]\).*/\1/p' "$p" | head -n 1)
	if [ "$sec" = "${name##*.}" ] && grep -q '^\.SH NAME' "$p"; then
		ok "$name: .TH section $sec, NAME section"
	else
		fail "$name: .TH section '$sec' does not match the file name, or no NAME"
	fi
done

# The names a page has as .TP tags: the first word of the line after .TP,
# with roff quoting, fonts and \- taken off.
tags() {
	awk 'tp { sub(/^\.(B|BI|BR|I|IR)[ \t]+/, ""); gsub(/"/, ""); gsub(/\\-/, "-");
		  gsub(/\\f[BIRP]/, ""); print $1; tp = 0; next }
	     /^\.TP/ { tp = 1 }' "$1"
}

# The text of the .TP paragraph whose tag is NAME, as one line.
paragraph() {
	awk -v want="$2" 'tp { t = $0; sub(/^\.(B|BI|BR)[ \t]+/, "", t); split(t, w, /[ \t]/);
			       grab = (w[1] == want); tp = 0; next }
		/^\.(TP|SH|SS|PP)/ { if (/^\.TP/) tp = 1; grab = 0; next }
		grab { gsub(/^\.[A-Z]+[ \t]+/, ""); printf "%s ", $0 }' "$1"
}

# --- 2. fairq(4): every attribute of the driver ------------------------------
f4="$man/fairq.4"
if [ -f "$f4" ]; then
	tags "$f4" | sort -u >"$tmp/f4.tags"
	# FAIRQ_CFS_ATTR(x), CONFIGFS_ATTR[_RO|_WO](fairq_cfs_, x),
	# FAIRQ_SYSFS_RW/RO(x), __ATTR(x, ...)
	sed -n -e 's/^FAIRQ_CFS_ATTR(\([a-z0-9_]*\)).*/\1/p' \
	       -e 's/^CONFIGFS_ATTR[A-Z_]*(fairq_cfs_, *\([a-z0-9_]*\)).*/\1/p' \
	       -e 's/^FAIRQ_SYSFS_R[OW](\([a-z0-9_]*\)).*/\1/p' \
	       -e 's/.*__ATTR(\([a-z0-9_]*\),.*/\1/p' \
	       "$top"/drivers/*.c | grep -v '^_' >"$tmp/attrs"
	# one attribute per tunable of the core's table
	if make -s -C "$top/sched" build/fq_tundoc >"$tmp/tundoc.log" 2>&1; then
		"$top/sched/build/fq_tundoc" list | cut -f1 >>"$tmp/attrs"
	else
		cat "$tmp/tundoc.log"
		fail "sched/build/fq_tundoc does not build: no tunable names"
	fi
	sort -u -o "$tmp/attrs" "$tmp/attrs"
	n=$(wc -l <"$tmp/attrs")
	if [ "$n" -ge 16 ]; then
		ok "driver defines $n attribute names"
	else
		fail "found only $n attribute names in drivers/*.c (the patterns are stale?)"
	fi
	missing=$(comm -23 "$tmp/attrs" "$tmp/f4.tags" | tr '\n' ' ')
	if [ -z "$missing" ]; then
		ok "fairq.4: every attribute has its own entry ($(tr '\n' ' ' <"$tmp/attrs"))"
	else
		fail "fairq.4: no entry for: $missing"
	fi

fi

# --- 3. the tools' pages: every command and option ----------------------------
longopts() {
	# { "opt", required_argument|no_argument, ... } inside longopts[]
	sed -n '/longopts\[\] = {/,/};/s/^[ \t]*{ *"\([a-z-]*\)",.*/\1/p' "$1"
}

check_opts() {
	page=$1 src=$2
	[ -f "$page" ] || return
	opts=$(longopts "$src")
	[ -n "$opts" ] || fail "$(basename "$src"): no long options parsed"
	for o in $opts; do
		if sed 's/\\-/-/g' "$page" | grep -q -- "--$o\b"; then
			ok "$(basename "$page"): --$o"
		else
			fail "$(basename "$page"): --$o is not documented"
		fi
	done
}

check_opts "$man/fairqctl.8" "$top/tools/fairqctl.c"
check_opts "$man/fairq-nbd.8" "$top/userspace-backend/main.c"

if [ -f "$man/fairqctl.8" ]; then
	tags "$man/fairqctl.8" | sort -u >"$tmp/c8.tags"
	cmds=$(sed -n 's/^[ \t]*\.name = "\([a-z-]*\)",.*/\1/p' "$top/tools/fairqctl.c")
	[ -n "$cmds" ] || fail "fairqctl.c: no commands parsed"
	for c in $cmds; do
		if grep -qx "$c" "$tmp/c8.tags" &&
		   grep -q "^\.B $c\$" <(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$man/fairqctl.8"); then
			ok "fairqctl.8: command $c (synopsis and entry)"
		else
			fail "fairqctl.8: command $c is not in the synopsis and COMMANDS"
		fi
	done
fi

# --- 4. what fairqctl --help points at ----------------------------------------
usage_text() {
	sed -n '/^static void .*usage(void)$/,/^}/p' "$1"
}
check_help_pages() {
	local src=$1 refs page bad=0
	refs=$(usage_text "$src" | grep -oE '[a-z][a-z-]*\([0-9]\)' | sort -u)
	if [ -z "$refs" ]; then
		fail "$(basename "$src"): usage() names no man page"
		return
	fi
	for page in $refs; do
		if [ -f "$man/${page%(*}.${page//[^0-9]/}" ]; then
			ok "fairqctl --help: $page is man/${page%(*}.${page//[^0-9]/}"
		else
			fail "fairqctl --help: $page is not a page of man/"
			bad=1
		fi
	done
	if usage_text "$src" | grep -qE 'docs/|INTERFACE\.md'; then
		fail "fairqctl --help points at a file the package does not install (docs/)"
	elif [ "$bad" = 0 ]; then
		ok "fairqctl --help points only at installed pages"
	fi
}
# the checker itself: a usage() pointing at a page that does not exist
printf 'static void usage(void)\n{\n\tputs("see fairq(9), docs/INTERFACE.md");\n}\n' >"$tmp/bad.c"
before=$TLIB_FAILED before_ok=$TLIB_PASSED
check_help_pages "$tmp/bad.c" >/dev/null
caught=$((TLIB_FAILED - before))
TLIB_FAILED=$before TLIB_PASSED=$before_ok
if [ "$caught" -ge 2 ]; then
	ok "checker: a help naming a missing page and docs/ fails twice"
else
	fail "checker: a help naming fairq(9) and docs/INTERFACE.md failed $caught times, not 2"
fi
check_help_pages "$top/tools/fairqctl.c"

summary
