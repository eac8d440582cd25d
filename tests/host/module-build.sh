#!/bin/bash
# Host checks of fairq.ko: it builds against Debian's default kernel headers
# with no warning under W=1, sparse (C=2) reports nothing in our files,
# modpost finds every symbol, the module's vermagic names that kernel, and
# checkpatch.pl (from Debian's linux-source-6.1) finds nothing to fix.
# Nothing is loaded on the host.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${KVER:-$("$top/scripts/debian-kver")}
kdir=${KDIR:-/lib/modules/$kver/build}
kmod=$top/build/kmod/$kver
"$top/scripts/kmod-tree" "$kmod"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tests/lib.sh"

# Warnings are lines "file:line:col: warning: ..." from our sources, or
# modpost's "WARNING:" lines.
warnings() {
	grep -E '(warning|error):|^WARNING:|undefined!' "$1" | grep -vE '^make' || true
}

check_w1() {
	make -s -C "$kdir" M="$kmod" clean >/dev/null 2>&1
	if ! make -C "$kdir" M="$kmod" W=1 modules >"$tmp/w1.log" 2>&1; then
		fail "w1-build: build failed"; tail -n 30 "$tmp/w1.log"; return
	fi
	if [ -n "$(warnings "$tmp/w1.log")" ]; then
		fail "w1-clean: warnings:"; warnings "$tmp/w1.log"
	else
		ok w1-clean
	fi
}

check_sparse() {
	if ! command -v sparse >/dev/null; then
		skip "sparse-clean: sparse is not installed (scripts/install-deps)"; return
	fi
	make -C "$kdir" M="$kmod" C=2 modules >"$tmp/sparse.log" 2>&1
	# sparse prints "file:line:col: warning|error: ..." for our files
	if grep -E "^([^ :]*/)?(drivers|sched)/[^ :]*:[0-9]+:[0-9]+: (warning|error):" "$tmp/sparse.log"; then
		fail "sparse-clean: sparse reports above"
	else
		ok sparse-clean
	fi
}

check_vermagic() {
	local vm
	vm=$(modinfo -F vermagic "$kmod/fairq.ko" 2>/dev/null | awk '{print $1}')
	if [ "$vm" = "$kver" ]; then
		ok "vermagic-$kver"
	else
		fail "vermagic: fairq.ko vermagic '$vm', expected '$kver'"
	fi
}

check_checkpatch() {
	if "$top/scripts/checkpatch" >"$tmp/checkpatch.log" 2>&1; then
		ok checkpatch-clean
	else
		fail "checkpatch-clean: checkpatch.pl reports:"; cat "$tmp/checkpatch.log"
	fi
}

main() {
	echo "kernel $kver, headers $kdir"
	if [ ! -d "$kdir" ]; then
		fail "headers: no headers at $kdir (make deps)"
	else
		check_w1
		check_sparse
		check_vermagic
	fi
	check_checkpatch
	summary
}

main "$@"
