#!/bin/bash
# fairqctl against the real fairq.ko: every subcommand (create with an
# automatic name and with --name/--policy/--set, list and --json, show,
# set, get --json, stats and --json, destroy), what each prints, its exit
# status (0 ok, 1 the
# kernel refused, 2 usage) and that each error message names the device
# and the attribute, as fairqctl(8) says.  A create that
# fails part-way must leave no configfs entry behind; destroy of an open
# device must refuse and change nothing.  Lower disks: /dev/vdb, /dev/vdc.
DESCRIPTION="fairqctl: every subcommand, its output, exit codes and errors"
TIMEOUT=300
# shellcheck source=rc
. /fairq/tests/vm/rc

CFS=$FAIRQ_CONFIGFS

# fq ARGS...: run fairqctl; $OUT stdout, $ERR stderr, $RC exit status
fq() {
	LAST="fairqctl $*"
	fairqctl "$@" >fq.out 2>fq.err
	RC=$?
	OUT=$(cat fq.out)
	ERR=$(cat fq.err)
}

# expect RC [ERE]: the last fq exited RC and its stderr matches ERE
expect() {
	local want=$1 ere=${2:-}
	[ "$RC" = "$want" ] ||
		fatal "$LAST: exit $RC, want $want (stdout '$OUT', stderr '$ERR')"
	[ -z "$ere" ] || echo "$ERR" | grep -qE -- "$ere" ||
		fatal "$LAST: stderr '$ERR' does not match '$ere'"
	# the log shows what a user sees for each refusal
	[ "$want" = 0 ] || echo "  $LAST -> $(echo "$ERR" | head -n 1)"
}

# out_has ERE: a line of the last fq's stdout matches ERE
out_has() {
	echo "$OUT" | grep -qE -- "$1" || fatal "$LAST: no line '$1' in: $OUT"
}

# attr_is FILE VALUE
attr_is() {
	local got
	got=$(cat "$1" 2>&1)
	[ "$got" = "$2" ] || fatal "$1 is '$got', want '$2' (after: $LAST)"
}

# entries: how many configfs entries exist
entries() {
	find "$CFS" -mindepth 1 -maxdepth 1 -type d | wc -l
}

# json_num KEY: the number KEY has in the last fq's stdout ("key": 123)
json_num() {
	echo "$OUT" | grep -oE "\"$1\": [0-9]+" | head -n 1 | grep -oE '[0-9]+$'
}

test_usage() {
	fq;                             expect 2 "no command specified"
	fq frobnicate;                  expect 2 "not a fairqctl command"
	fq create;                      expect 2 "missing argument"
	fq create /dev/vdb /dev/vdc;    expect 2 "unexpected number of arguments"
	fq list extra;                  expect 2 "unexpected number of arguments"
	fq show;                        expect 2 "missing argument"
	fq set fairq0;                  expect 2 "missing argument"
	fq set fairq0 quantum;          expect 2 "expected KEY=VALUE"
	fq show fairq0 --json;          expect 2 "show: option --json is not valid here"
	fq top fairq0 -n 5;             expect 2 "top: option --name is not valid here"
	fq stats fairq0 --bogus;        expect 2
	fq show Bad/Name;               expect 2 "invalid device name"
	fq --help;                      expect 0
	out_has "^ create BACKING"
	out_has "^ destroy NAME"
	fq --version;                   expect 0
	out_has "^fairqctl "
	log "usage errors: exit 2"
}

test_create() {
	fq create /dev/vdb;             expect 0
	[ "$OUT" = /dev/fairq0 ] || fatal "$LAST printed '$OUT', want /dev/fairq0"
	[ -b /dev/fairq0 ] || fatal "/dev/fairq0 is not a block device after create"
	[ -d /sys/block/fairq0/fairq ] || fatal "no /sys/block/fairq0/fairq after create"
	attr_is "$CFS"/fairq0/backing /dev/vdb
	attr_is "$CFS"/fairq0/power 1
	attr_is "$CFS"/fairq0/policy cfq

	fq create /dev/vdc --name fqtest --policy sfq --set quantum=16 --set depth=4
	expect 0
	[ "$OUT" = /dev/fqtest ] || fatal "$LAST printed '$OUT', want /dev/fqtest"
	[ -b /dev/fqtest ] || fatal "/dev/fqtest is not a block device after create"
	attr_is /sys/block/fqtest/fairq/policy sfq
	attr_is /sys/block/fqtest/fairq/quantum 16
	attr_is /sys/block/fqtest/fairq/depth 4

	mkdir "$CFS"/fqoff || fatal "mkdir $CFS/fqoff"
	log "create: /dev/fairq0 (auto name), /dev/fqtest (--name --policy --set)"
}

test_list_show() {
	local a
	fq list;                        expect 0
	[ "$OUT" = "$(printf 'fairq0 /dev/vdb 1 cfq\nfqoff - 0 cfq\nfqtest /dev/vdc 1 sfq')" ] ||
		fatal "$LAST printed: $OUT"
	fq list --json;                 expect 0
	out_has '^  "format": 1,$'
	out_has '^    \{"name": "fairq0", "backing": "/dev/vdb", "power": 1, "policy": "cfq"\},$'
	out_has '^    \{"name": "fqoff", "backing": null, "power": 0, "policy": "cfq"\},$'
	out_has '^    \{"name": "fqtest", "backing": "/dev/vdc", "power": 1, "policy": "sfq"\}$'

	fq show fairq0;                 expect 0
	out_has "^backing /dev/vdb$"
	out_has "^power 1$"
	out_has "^policy cfq$"
	out_has "^quantum 8$"
	out_has "^depth auto$"
	out_has "^max_flows 65536$"
	for a in $(tr ',' ' ' <"$CFS"/fairq0/features); do
		out_has "^$a "
	done
	fq show /dev/fqtest;            expect 0
	out_has "^policy sfq$"
	fq show nosuch;                 expect 1 "nosuch: no such fairq device"
	log "list and show: as configfs says"
}

test_set() {
	fq set fairq0 quantum=4 depth=8; expect 0
	attr_is /sys/block/fairq0/fairq/quantum 4
	attr_is /sys/block/fairq0/fairq/depth 8
	fq show fairq0;                 expect 0
	out_has "^quantum 4$"
	fq get fairq0 quantum --json;   expect 0
	out_has '^  "device": "fairq0",$'
	out_has '^  "key": "quantum",$'
	out_has '^  "value": 4$'
	fq get fairq0 policy -j;        expect 0
	out_has '^  "value": "cfq"$'
	fq set fairq0 policy=fifo;      expect 0
	attr_is /sys/block/fairq0/fairq/policy fifo

	# refused values: exit 1, the attribute named, nothing changed
	fq set fairq0 quantum=0;        expect 1 "fairq0: quantum: .*out of range"
	attr_is /sys/block/fairq0/fairq/quantum 4
	fq set fairq0 quantum=2000;     expect 1 "fairq0: quantum: .*out of range"
	fq set fairq0 policy=bogus;     expect 1 "fairq0: policy: Invalid argument"
	attr_is /sys/block/fairq0/fairq/policy fifo
	fq set fairq0 depth=abc;        expect 1 "fairq0: depth: Invalid argument"
	fq set fairq0 depth=-1;         expect 1 "fairq0: depth: "
	fq set fairq0 depth=8x;         expect 1 "fairq0: depth: Invalid argument"
	attr_is /sys/block/fairq0/fairq/depth 8
	fq set fairq0 bogus=1;          expect 1 "fairq0: bogus: .*unknown attribute"
	fq set fairq0 max_flows=128;    expect 1 "fairq0: max_flows: Device or resource busy"
	fq set fairq0 backing=/dev/vdc; expect 1 "fairq0: backing: Device or resource busy"
	attr_is "$CFS"/fairq0/backing /dev/vdb

	# the first refused value stops set; what came before it stays
	fq set fairq0 idle_us=100 quantum=0 depth=16
	expect 1 "fairq0: quantum: "
	attr_is /sys/block/fairq0/fairq/idle_us 100
	attr_is /sys/block/fairq0/fairq/depth 8

	# powered off: configfs, and max_flows is writable there
	fq set fqoff quantum=2 max_flows=128; expect 0
	attr_is "$CFS"/fqoff/quantum 2
	attr_is "$CFS"/fqoff/max_flows 128
	fq set fqoff buckets=3;         expect 1 "fqoff: buckets: "
	fq set nosuch depth=1;          expect 1 "nosuch: no such fairq device"
	log "set: sysfs while powered, configfs otherwise; bad values named"
}

test_stats() {
	local before after bytes
	fq stats fairq0;                expect 0
	out_has "^policy fifo$"
	out_has "^depth 8$"
	out_has "^enq_reqs [0-9]+$"

	fq stats fairq0 --json;         expect 0
	out_has '"totals": \{'
	out_has '"flows": \['
	out_has '"policy": "fifo"'
	out_has '"depth": 8,'
	before=$(json_num enq_reqs)
	bytes=$(json_num enq_bytes)
	[ -n "$before" ] || fatal "no enq_reqs number in: $OUT"
	[ -n "$bytes" ] || fatal "no enq_bytes number in: $OUT"

	# 64 O_DIRECT writes of 4 KiB: 64 bios at least (a bio-based disk
	# merges nothing above itself), 262144 bytes
	dd if=/dev/zero of=/dev/fairq0 bs=4096 count=64 oflag=direct status=none ||
		fatal "dd through /dev/fairq0 failed"
	fq stats fairq0 --json;         expect 0
	after=$(json_num enq_reqs)
	[ "$after" -ge $((before + 64)) ] ||
		fatal "enq_reqs went from $before to $after over 64 writes"
	[ "$(json_num enq_bytes)" -ge $((bytes + 262144)) ] ||
		fatal "enq_bytes went from $bytes to $(json_num enq_bytes) over 256 KiB"

	fq stats fqoff;                 expect 1 "fqoff: not powered on"
	fq stats nosuch;                expect 1 "nosuch: no such fairq device"
	log "stats: enq_reqs $before -> $after over 64 direct writes"
}

test_create_errors() {
	local n
	n=$(entries)
	fq create /dev/nonexistent;     expect 1 "/dev/nonexistent: No such file or directory"
	: >notblk
	fq create notblk;               expect 1 "notblk: not a block device"
	fq create /dev/null;            expect 1 "/dev/null: not a block device"
	# /dev/vdb is held by fairq0: power=1 fails, the entry is removed
	fq create /dev/vdb;             expect 1 "fairq1: power: .*in use"
	[ ! -e "$CFS"/fairq1 ] || fatal "$LAST left $CFS/fairq1 behind"
	fq create /dev/vdc --name fqbad --policy bogus
	expect 1 "fqbad: policy: Invalid argument"
	fq create /dev/vdc --name fqbad --set quantum=0
	expect 1 "fqbad: quantum: .*out of range"
	fq create /dev/vdc --name fqbad --set nosuch=1
	expect 1 "fqbad: nosuch: .*unknown attribute"
	[ ! -e "$CFS"/fqbad ] || fatal "a failed create left $CFS/fqbad behind"
	fq create /dev/vdc --name fairq0; expect 1 "fairq0: already exists"
	attr_is "$CFS"/fairq0/backing /dev/vdb
	[ "$(entries)" = "$n" ] || fatal "failed creates changed configfs: $(ls "$CFS")"
	log "create errors: exit 1, named, nothing left behind"
}

test_destroy() {
	exec 3<>/dev/fairq0
	fq destroy fairq0;              expect 1 "^fairqctl: fairq0: device is busy \(open or mounted\)$"
	attr_is "$CFS"/fairq0/power 1
	[ -b /dev/fairq0 ] || fatal "/dev/fairq0 gone after a refused destroy"
	exec 3>&-

	fq destroy fairq0;              expect 0
	[ ! -e "$CFS"/fairq0 ] || fatal "$CFS/fairq0 still exists after destroy"
	[ ! -e /sys/block/fairq0 ] || fatal "/sys/block/fairq0 still exists after destroy"
	wait_for_gone /dev/fairq0 || fatal "/dev/fairq0 still exists after destroy"
	fq destroy fqtest;              expect 0
	fq destroy fqoff;               expect 0
	fq destroy fairq0;              expect 1 "fairq0: no such fairq device"
	fq list;                        expect 0
	[ -z "$OUT" ] || fatal "list after destroying everything: $OUT"

	# the lower disk was released: it can be used again
	fq create /dev/vdb;             expect 0
	[ "$OUT" = /dev/fairq0 ] || fatal "$LAST printed '$OUT', want /dev/fairq0"
	fq destroy fairq0;              expect 0
	log "destroy: refused while open, then removes everything"
}

test_module_missing() {
	FAIRQ_CONFIGFS=/nonexistent fq list
	expect 1 "fairq module not loaded \(modprobe fairq\)"
	unload_fairq
	fq list;                        expect 1 "fairq module not loaded \(modprobe fairq\)"
	fq create /dev/vdb;             expect 1 "fairq module not loaded"
	log "module missing: said so"
}

# power off and remove whatever a failed run left, unload the module
fq_cleanup() {
	local d
	[ -d "$CFS" ] || return 0
	for d in "$CFS"/*; do
		[ -d "$d" ] || continue
		echo 0 >"$d/power" 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
	unload_fairq
}

main() {
	require_cmd fairqctl dd
	require_blockdev vdb vdc
	load_fairq
	cleanup_push fq_cleanup
	[ "$(entries)" = 0 ] || fatal "configfs entries before the test: $(ls "$CFS")"
	test_usage
	test_create
	test_list_show
	test_set
	test_stats
	test_create_errors
	test_destroy
	test_module_missing
}

main
