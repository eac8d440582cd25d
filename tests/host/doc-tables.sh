#!/bin/bash
# tests/host/doc-tables.sh - every document that lists the tunables agrees
# with the one table, sched/fq_tunables_table.h (host suite "doc").
#
# The table is read through sched/build/fq_tundoc (built here): names,
# kinds, ranges, words, units, the defaults a fresh core reports, and who
# each tunable is for (users or experiments).
#
# 1. docs/INTERFACE.md: the lines between the "tunables" markers are
#    exactly what `make -C sched doc` writes (fq_tundoc markdown), the
#    "for" column included;
# 2. man/fairq.4, TUNABLES: a tagged paragraph per tunable with "MIN to
#    MAX" and "default DEF" (numbers) or every word and "DEF (default"
#    (words) (man-pages.sh checks that every attribute has a tag), in the
#    subsection ".SS For users" or ".SS For experiments" the table says;
# 3. man/fairqtab.5: every tunable as a key, ".BI NAME= N" for numbers,
#    ".BR NAME = w1 | w2" for words with the table's words, in order;
# 4. every other Markdown table of the tree that has a "default" column
#    and names a tunable in its first column (README.md's, for one) has a
#    row for every tunable and none for a name that is neither a tunable
#    nor one of the driver's attributes, each default equal to the table's
#    (512 KiB counts as 524288) and, in a "range" column, the table's range
#    first.
# 5. tests/vm/tunablesrc, which the guest tests use to read the table,
#    reads the same names, kinds, ranges and words as fq_tundoc lists.
# The checks are first shown to fail on a doctored copy of each input.
# Ends with "N passed, N failed, N skipped" (tests/lib.sh).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$top/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! make -s -C "$top/sched" build/fq_tundoc >"$tmp/build.log" 2>&1; then
	cat "$tmp/build.log"
	fatal "sched/build/fq_tundoc does not build"
fi
tundoc=$top/sched/build/fq_tundoc
"$tundoc" list >"$tmp/list" && "$tundoc" markdown >"$tmp/markdown"
n=$(wc -l <"$tmp/list")
if [ "$n" -ge 12 ]; then
	ok "the table has $n tunables"
else
	fail "fq_tundoc list gave $n tunables"
fi

# --- 1. docs/INTERFACE.md ----------------------------------------------------
begin='<!-- tunables: generated from sched/fq_tunables_table.h by make -C sched doc -->'
end='<!-- end of tunables -->'

# the generated block of FILE, between the markers
block() {
	awk -v b="$begin" -v e="$end" '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$1"
}

check_interface() {
	local file=$1 what=$2
	if ! grep -qxF "$begin" "$file" || ! grep -qxF "$end" "$file"; then
		fail "$what: no tunables markers"
		return
	fi
	if block "$file" | diff -u - "$tmp/markdown" >"$tmp/diff"; then
		ok "$what: the tunables table is the generated one"
	else
		fail "$what: the tunables table differs from the table (run make -C sched doc):"
		sed 's/^/    /' "$tmp/diff"
	fi
}

# --- 2. man/fairq.4 ----------------------------------------------------------
# The text of every .TP paragraph whose tag is NAME in SECTION, one line.
paragraph() {
	awk -v want="$2" -v sect="$3" '
		/^\.SH/ { insect = ($0 ~ ("^\\.SH \"?" sect)); grab = 0; tp = 0; next }
		!insect { next }
		tp { t = $0; sub(/^\.(B|BI|BR)[ \t]+/, "", t); split(t, w, /[ \t]/);
		     grab = (w[1] == want); tp = 0; next }
		/^\.(TP|SS|PP)/ { if (/^\.TP/) tp = 1; grab = 0; next }
		grab { gsub(/^\.[A-Z]+[ \t]+/, ""); gsub(/\\-/, "-"); printf "%s ", $0 }' "$1"
}

# The title of the .SS subsection of SECTION that holds the .TP paragraph
# tagged NAME.
subsection() {
	awk -v want="$2" -v sect="$3" '
		/^\.SH/ { insect = ($0 ~ ("^\\.SH \"?" sect)); ss = ""; tp = 0; next }
		!insect { next }
		/^\.SS/ { ss = $0; sub(/^\.SS[ \t]+/, "", ss); gsub(/"/, "", ss); next }
		tp { t = $0; sub(/^\.(B|BI|BR)[ \t]+/, "", t); split(t, w, /[ \t]/);
		     if (w[1] == want) { print ss; exit } tp = 0; next }
		/^\.TP/ { tp = 1 }' "$1"
}

check_fairq4() {
	local f4=$1 what=$2 name kind lo hi def words who text w bad sub
	while IFS=$'\t' read -r name kind lo hi def _ words who; do
		text=$(paragraph "$f4" "$name" TUNABLES)
		sub=$(subsection "$f4" "$name" TUNABLES)
		if [ "$sub" = "For $who" ]; then
			ok "$what: $name: under 'For $who'"
		else
			fail "$what: $name: under '${sub:-no subsection}', the table says 'For $who'"
		fi
		bad=0
		if [ "$kind" = word ]; then
			for w in $words; do
				[[ " $text" == *" $w"* ]] || { fail "$what: $name: word '$w' missing in: ${text:0:100}"; bad=1; }
			done
			[[ $text == *"$def (default"* ]] ||
				{ fail "$what: $name: no '$def (default' in: ${text:0:100}"; bad=1; }
			[ "$bad" = 1 ] || ok "$what: $name: $words, default $def"
		else
			# max_flows: "See CONFIGFS" here, the range in CONFIGFS
			[[ $text == *"See CONFIGFS"* ]] && text="$text $(paragraph "$f4" "$name" CONFIGFS)"
			if [[ $text == *"$lo to $hi"* && $text == *"default $def"* ]]; then
				ok "$what: $name: $lo to $hi, default $def"
			else
				fail "$what: $name: want '$lo to $hi' and 'default $def' in: ${text:0:100}"
			fi
		fi
	done <"$tmp/list"
}

# --- 3. man/fairqtab.5 ---------------------------------------------------------
check_fairqtab5() {
	local f5=$1 what=$2 name kind lo hi def words want bad=0
	while IFS=$'\t' read -r name kind lo hi def _ words _; do
		if [ "$kind" = word ]; then
			want=".BR $name = ${words// / | }"
		else
			want=".BI $name= N"
		fi
		grep -qxF -e "$want" -e "$want\\c" "$f5" ||
			{ fail "$what: no line '$want'"; bad=1; }
	done <"$tmp/list"
	[ "$bad" = 1 ] || ok "$what: every tunable is a key, with the table's words"
}

# --- 4. other Markdown tables ------------------------------------------------
# attributes of fairq.ko that are not the core's tunables
DRIVER_ATTRS="backing power classify cgroup_weights"

# "512 KiB" -> 524288, "`cfq`" -> cfq
norm() {
	local v=${1//\`/}
	v=$(echo "$v" | sed 's/^ *//; s/ *$//')
	case $v in
	*" KiB"|*K) v=${v% KiB}; v=${v%K}; echo $((v * 1024)) ;;
	*" MiB"|*M) v=${v% MiB}; v=${v%M}; echo $((v * 1048576)) ;;
	*) echo "$v" ;;
	esac
}

# For each Markdown table in FILE with a "default" column whose rows name
# tunables: one line per named tunable, "name<TAB>default<TAB>range".
md_rows() {
	awk -F'|' '
		function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
		!/^\|/ { intable = 0; next }
		!intable {			# the header row
			intable = 1; dc = 0; rc = 0
			for (i = 2; i < NF; i++) {
				h = tolower(trim($i))
				if (h == "default") dc = i
				if (h == "range") rc = i
			}
			next
		}
		/^\|[-| :]+$/ || !dc { next }
		{
			n = split(trim($2), names, /[ \t]*\/[ \t]*/)
			m = split(trim($dc), defs, /[ \t]*\/[ \t]*/)
			for (k = 1; k <= n; k++) {
				if (names[k] !~ /^`[a-z0-9_]+`$/) continue
				gsub(/`/, "", names[k])
				print names[k] "\t" (n == m ? defs[k] : trim($dc)) "\t" (rc ? trim($rc) : "")
			}
		}' "$1"
}

check_markdown() {
	local file=$1 what=$2 name kind lo hi def words got range seen=0 bad=0 want w
	md_rows "$file" >"$tmp/rows"
	cut -f1 "$tmp/rows" | sort >"$tmp/names"
	cut -f1 "$tmp/list" | sort >"$tmp/tnames"
	# a table of this file that names no tunable is not a tunables table
	[ -n "$(comm -12 "$tmp/names" "$tmp/tnames")" ] || return 0
	while IFS=$'\t' read -r name kind lo hi def _ words _; do
		if ! grep -q "^$name	" "$tmp/rows"; then
			fail "$what: no row for $name"
			bad=1
			continue
		fi
		seen=$((seen + 1))
		got=$(grep "^$name	" "$tmp/rows" | head -n 1 | cut -f2)
		range=$(grep "^$name	" "$tmp/rows" | head -n 1 | cut -f3)
		[ "$(norm "$got")" = "$def" ] ||
			{ fail "$what: $name: default '$got', the table says '$def'"; bad=1; }
		if [ -n "$range" ]; then
			if [ "$kind" = word ]; then
				want=
				for w in $words; do want="$want${want:+ }\`$w\`"; done
			else
				want="$lo..$hi"
			fi
			[[ $range == "$want"* ]] ||
				{ fail "$what: $name: range '$range', the table says '$want'"; bad=1; }
		fi
	done <"$tmp/list"
	# names that are neither tunables nor the driver's own attributes
	for name in $(comm -23 "$tmp/names" "$tmp/tnames"); do
		case " $DRIVER_ATTRS " in
		*" $name "*) ;;
		*) fail "$what: row for '$name', which the table does not have"; bad=1 ;;
		esac
	done
	[ "$bad" = 1 ] || ok "$what: its tunables table agrees ($seen tunables)"
}

# --- 5. tests/vm/tunablesrc: the guest tests read the table themselves ------
check_vm_reader() {
	local table=$1 what=$2
	# shellcheck source=tests/vm/tunablesrc
	. "$top/tests/vm/tunablesrc"
	if ! load_tunables "$table"; then
		fail "$what: load_tunables read nothing"
		return
	fi
	for t in "${TUNABLES[@]}"; do
		printf '%s\t%s\t%s\t%s\t%s\n' "$t" "${TUN_KIND[$t]}" "${TUN_MIN[$t]}" \
			"${TUN_MAX[$t]}" "${TUN_WORDS[$t]:--}"
	done >"$tmp/vm-read"
	if cut -f1-4,7 "$tmp/list" | diff - "$tmp/vm-read" >"$tmp/diff"; then
		ok "$what: load_tunables reads what fq_tundoc lists (${#TUNABLES[@]} tunables)"
	else
		fail "$what: load_tunables disagrees with fq_tundoc:"
		sed 's/^/    /' "$tmp/diff"
	fi
}

# --- the checks first fail on doctored copies --------------------------------
# shellcheck disable=SC2016 # the backquotes are Markdown's
sed 's/^| `depth` | users | 1\.\.4096 or `auto` | auto |/| `depth` | users | 1..4096 or `auto` | 33 |/' "$top/docs/INTERFACE.md" >"$tmp/i.md"
# shellcheck disable=SC2016
sed 's/^| `depth` | users |/| `depth` | experiments |/' "$top/docs/INTERFACE.md" >"$tmp/i-for.md"
sed 's/^0 to 60000, default 200:/0 to 60000, default 201:/' "$top/man/fairq.4" >"$tmp/f.4"
# the users' tunables under the experiments' title
sed 's/^\.SS "\{0,1\}For users"\{0,1\}$/.SS For experiments/' "$top/man/fairq.4" >"$tmp/f-for.4"
sed '/^\.BI idle_us= N/d' "$top/man/fairqtab.5" >"$tmp/t.5"
# shellcheck disable=SC2016 # the backquotes are Markdown's
printf '| name | default | meaning |\n|---|---|---|\n| `quantum` | 9 | x |\n| `quantum_max` | 1 | x |\n\ntext\n' >"$tmp/r.md"
sed 's/^\(FQ_TUNABLE(depth, depth, FQ_TK_AUTO, 1, \)4096/\14095/' \
	"$top/sched/fq_tunables_table.h" >"$tmp/t.h"
for c in "check_interface $tmp/i.md" "check_interface $tmp/i-for.md" \
	 "check_fairq4 $tmp/f.4" "check_fairq4 $tmp/f-for.4" \
	 "check_fairqtab5 $tmp/t.5" "check_markdown $tmp/r.md" "check_vm_reader $tmp/t.h"; do
	before=$TLIB_FAILED before_ok=$TLIB_PASSED
	$c "doctored" >"$tmp/self" 2>&1
	caught=$((TLIB_FAILED - before))
	TLIB_FAILED=$before TLIB_PASSED=$before_ok
	if [ "$caught" -gt 0 ]; then
		ok "checker ${c%% *} catches a doctored copy (${c##*/})"
	else
		fail "checker ${c%% *} passes a doctored copy (${c##*/}):"
		sed 's/^/    /' "$tmp/self"
	fi
done

# --- the real documents ------------------------------------------------------
check_interface "$top/docs/INTERFACE.md" docs/INTERFACE.md
check_fairq4 "$top/man/fairq.4" man/fairq.4
check_fairqtab5 "$top/man/fairqtab.5" man/fairqtab.5
check_vm_reader "$top/sched/fq_tunables_table.h" tests/vm/tunablesrc
while read -r md; do
	[ "$md" = docs/INTERFACE.md ] && continue
	check_markdown "$top/$md" "$md"
done < <(cd "$top" && { git ls-files '*.md' 2>/dev/null || find . -name '*.md' -printf '%P\n'; })

summary
