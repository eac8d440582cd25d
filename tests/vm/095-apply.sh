#!/bin/bash
# fairqctl apply against the real fairq.ko: a fairqtab with a UUID=
# backing (blkid, no udev in the guest) and a path, applied twice (the
# second run changes nothing: same attributes, same device list, "nothing
# to do"), --dry-run (prints, changes nothing), a file with a bad line and
# a missing backing (the good lines apply, the bad one is named FILE:LINE,
# exit 1), a backing change (power off, set, power on) and its refusal
# while the device is open, devices not in the file (left alone; --prune
# removes them) and --down.  Lower disks: /dev/vdb, /dev/vdc, /dev/vda.
DESCRIPTION="fairqctl apply: fairqtab, idempotence, errors by line, --down"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc
unload_at_end

CFS=$FAIRQ_CONFIGFS

# ap ARGS...: fairqctl apply; $OUT, $ERR, $RC
ap() {
	LAST="fairqctl apply $*"
	fairqctl apply "$@" >ap.out 2>ap.err
	RC=$?
	OUT=$(cat ap.out)
	ERR=$(cat ap.err)
	echo "\$ $LAST -> exit $RC"
	sed 's/^/  | /' ap.out ap.err
}

want_rc() {
	[ "$RC" = "$1" ] || fatal "$LAST: exit $RC, want $1 (stderr: $ERR)"
}

out_has() {
	echo "$OUT" | grep -qE -- "$1" || fatal "$LAST: no line '$1' in stdout"
}

err_has() {
	echo "$ERR" | grep -qE -- "$1" || fatal "$LAST: no line '$1' in stderr"
}

attr_is() {
	local got
	got=$(cat "$CFS/$1/$2" 2>&1)
	[ "$got" = "$3" ] || fatal "$1/$2 is '$got', want '$3' (after: $LAST)"
}

# snapshot: every attribute of every device, and the device list
snapshot() {
	local d
	fairqctl list
	for d in $(fairqctl list | cut -d' ' -f1); do
		fairqctl show "$d" | sed "s|^|$d |"
	done
}

cleanup_devs() {
	local d
	for d in fqa fqb fqx fqextra; do
		fairq_destroy "$d" 2>/dev/null
	done
}

test_twice() {
	uuid=$(blkid -c /dev/null -s UUID -o value /dev/vdb)
	[ -n "$uuid" ] || fatal "no UUID on /dev/vdb after mke2fs"
	cat >tab1 <<-EOF
	# fairq devices of the test

	fqa  UUID=$uuid  cfq   depth=16 quantum=4   # by file system UUID
	fqb  /dev/vdc    sfq   buckets=128 idle_us=0
	EOF
	ap tab1
	want_rc 0
	out_has "^fqa: create over /dev/vdb policy=cfq depth=16 quantum=4$"
	out_has "^fqb: create over /dev/vdc policy=sfq buckets=128 idle_us=0$"
	[ -b /dev/fqa ] && [ -b /dev/fqb ] || fatal "no /dev/fqa or /dev/fqb after apply"
	attr_is fqa backing /dev/vdb
	attr_is fqa power 1
	attr_is fqa depth 16
	attr_is fqa quantum 4
	attr_is fqb policy sfq
	attr_is fqb buckets 128
	snapshot >s1

	ap tab1
	want_rc 0
	out_has "^tab1: nothing to do, 2 devices as the file says$"
	echo "$OUT" | grep -qE "create|set |power|remove" &&
		fatal "second apply acted: $OUT"
	snapshot >s2
	diff s1 s2 || fatal "second apply changed attributes or devices"

	FAIRQTAB=tab1 ap --dry-run
	want_rc 0
	out_has "nothing to do"
}

test_dry_run() {
	sed 's/depth=16/depth=8/' tab1 >tab1b
	ap tab1b --dry-run
	want_rc 0
	out_has "^fqa: set depth=8 \(was 16\)$"
	out_has "^dry run, nothing done: "
	attr_is fqa depth 16
}

test_bad_line() {
	cat >tab2 <<-EOF
	fqa  /dev/vdb    cfq   depth=8
	fqb  /dev/vdc    sfq   buckets=128
	fqx  /dev/vda    frob=1
	fqm  UUID=00000000-dead-beef-0000-000000000000
	fqy  /dev/vda    depth=many
	EOF
	ap tab2
	want_rc 1
	err_has "^fairqctl: tab2:3: fqx: unknown key 'frob'$"
	err_has "^fairqctl: tab2:5: fqy: depth: 'many' is not a number or auto$"
	out_has "^fqm: backing UUID=00000000-dead-beef-0000-000000000000 not present, not created$"
	out_has "^fqa: set depth=8 \(was 16\)$"
	out_has "1 changed, 0 removed, 1 unchanged, 1 missing, 0 failed, 2 bad lines$"
	attr_is fqa depth 8
	[ -d "$CFS/fqx" ] && fatal "the bad line's device was created"
	[ -d "$CFS/fqm" ] && fatal "the device with a missing backing was created"

	# the kernel's own refusal, named by line too
	printf 'fqa /dev/vdb cfq depth=0\n' >tab2b
	ap tab2b
	want_rc 1
	err_has "^fairqctl: tab2b:1: fqa: depth: Numerical result out of range"
	attr_is fqa depth 8

	# only a missing backing: exit 3
	printf 'fqa /dev/vdb cfq depth=8\nfqm LABEL=nosuchlabel\n' >tab2c
	ap tab2c
	want_rc 3
}

test_backing_change() {
	printf 'fqa /dev/vdb cfq depth=8\nfqb /dev/vda sfq buckets=128\n' >tab3
	ap tab3
	want_rc 0
	out_has "^fqb: power off \(to change backing\)$"
	out_has "^fqb: set backing=/dev/vda \(was /dev/vdc\)$"
	out_has "^fqb: power on$"
	attr_is fqb backing /dev/vda
	attr_is fqb power 1
	[ -b /dev/fqb ] || fatal "/dev/fqb gone after the backing change"

	# open: power=0 is refused, nothing changes
	exec 7</dev/fqb
	ap tab1
	exec 7<&-
	want_rc 1
	err_has "fqb: device is busy \(open or mounted\)"
	attr_is fqb backing /dev/vda
	attr_is fqb power 1
	ap tab1
	want_rc 0
	attr_is fqb backing /dev/vdc
}

test_prune_down() {
	fairqctl create /dev/vda --name fqextra >/dev/null || fatal "create fqextra"
	ap tab1
	want_rc 0
	out_has "^fqextra: not in tab1, left alone \(--prune removes it\)$"
	[ -d "$CFS/fqextra" ] || fatal "fqextra removed without --prune"
	ap tab1 --prune
	want_rc 0
	out_has "^fqextra: power off, remove$"
	[ -d "$CFS/fqextra" ] && fatal "fqextra still there after --prune"

	ap tab1 --down
	want_rc 0
	out_has "^fqb: power off, remove$"
	out_has "^fqa: power off, remove$"
	# last line first: fqb before fqa
	[ "$(echo "$OUT" | grep -n remove | head -n 1 | cut -d: -f2)" = fqb ] ||
		fatal "--down did not go last line first"
	[ "$(find "$CFS" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 0 ] ||
		fatal "devices left after --down: $(ls "$CFS")"
	wait_for_gone /dev/fqa || fatal "/dev/fqa still there after --down"
	ap tab1 --down
	want_rc 0
	out_has "^fqa: not there, nothing to do$"
}

main() {
	require_cmd fairqctl blkid mke2fs
	require_blockdev vda vdb vdc
	load_fairq
	cleanup_push cleanup_devs
	mke2fs -q -F -t ext4 /dev/vdb >/dev/null || fatal "mke2fs /dev/vdb"
	test_twice
	test_dry_run
	test_bad_line
	test_backing_change
	test_prune_down
	log "apply: all checks passed"
}

main
