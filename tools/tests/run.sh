#!/bin/bash
# tools/tests/run.sh [FAIRQCTL] - host tests for fairqctl.
#
# FAIRQ_CONFIGFS and FAIRQ_SYSFS point at a temporary tree laid out like
# /sys/kernel/config/fairq and /sys/block: plain directories and files.
# That covers argument parsing, usage errors, the missing-module message,
# list/show/stats (text and --json) from a fixture, which files set writes,
# and the error paths of create and destroy.  What only the kernel does
# (attribute files appearing on mkdir, errno from a store, /dev/NAME after
# power=1, rmdir of a populated entry) is tested in the VM by
# tests/vm/070-fairqctl.sh.
#
# Last line: "N passed, N failed"; exit status non-zero on any failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
FAIRQCTL=$(realpath "${1:-$here/../fairqctl}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CFS=$tmp/cfs
SYS=$tmp/sys
export FAIRQ_CONFIGFS=$CFS FAIRQ_SYSFS=$SYS
passed=0
failed=0

# run ARGS...: fairqctl with stdout/stderr in $tmp/out, $tmp/err; sets $rc
run() {
	"$FAIRQCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

ok() {
	passed=$((passed + 1))
	echo "ok - $1"
}

not_ok() {
	failed=$((failed + 1))
	echo "FAIL - $1"
	echo "  exit status $rc"
	sed 's/^/  stdout: /' "$tmp/out"
	sed 's/^/  stderr: /' "$tmp/err"
}

# t DESC RC STDERR_ERE STDOUT_ERE ARGS...: run fairqctl ARGS; pass when the
# exit status is RC and stderr/stdout match the EREs ('' skips a match)
t() {
	local desc=$1 want=$2 ere_err=$3 ere_out=$4
	shift 4
	run "$@"
	if [ "$rc" = "$want" ] &&
	   { [ -z "$ere_err" ] || grep -qE -- "$ere_err" "$tmp/err"; } &&
	   { [ -z "$ere_out" ] || grep -qE -- "$ere_out" "$tmp/out"; }; then
		ok "$desc"
	else
		not_ok "$desc (want exit $want)"
	fi
}

# check DESC COMMAND...: pass when COMMAND succeeds (about the last run)
check() {
	local desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
}

lacks() {
	! grep -qE -- "$1" "$2"
}

file_is() {
	[ "$(cat "$1" 2>/dev/null)" = "$2" ]
}

# fake_dev NAME POWER BACKING POLICY: a configfs entry with every
# attribute of docs/INTERFACE.md; powered ones get SYS/NAME/fairq too
fake_dev() {
	local d=$CFS/$1 s=$SYS/$1/fairq a
	mkdir -p "$d"
	echo "$2" >"$d/power"
	echo "$3" >"$d/backing"
	echo "$4" >"$d/policy"
	echo tgid >"$d/classify"
	echo requests >"$d/fairness"
	echo 8 >"$d/quantum"
	echo 524288 >"$d/quantum_bytes"
	echo 64 >"$d/buckets"
	echo 5000 >"$d/perturb_ms"
	echo 32 >"$d/depth"
	echo 0 >"$d/idle_us"
	echo 200 >"$d/idle_grace_ms"
	echo 250 >"$d/fifo_expire_sync_ms"
	echo 1000 >"$d/fifo_expire_async_ms"
	echo 4096 >"$d/max_flows"
	echo "backing,power,classify,policy,fairness,quantum,quantum_bytes,buckets,perturb_ms,depth,idle_us,idle_grace_ms,fifo_expire_sync_ms,fifo_expire_async_ms,max_flows" >"$d/features"
	[ "$2" = 1 ] || return 0
	mkdir -p "$s"
	for a in classify policy fairness quantum quantum_bytes buckets \
		 perturb_ms depth idle_us idle_grace_ms fifo_expire_sync_ms \
		 fifo_expire_async_ms max_flows backing; do
		cp "$d/$a" "$s/$a"
	done
	cp "$here/stats.txt" "$s/stats"
}

# a block device node to pass as BACKING (never opened by fairqctl)
find_blockdev() {
	if mknod "$tmp/blk" b 7 0 2>/dev/null && [ -b "$tmp/blk" ]; then
		echo "$tmp/blk"
		return
	fi
	find /dev -maxdepth 1 -type b 2>/dev/null | head -n 1
}

test_usage() {
	mkdir -p "$CFS" "$SYS"
	t "no command: usage error" 2 "no command specified" ""
	t "unknown command" 2 "'frob' is not a fairqctl command" "" frob
	t "unknown option" 2 "unrecognized option|Try 'fairqctl --help'" "" list --bogus
	t "create without BACKING" 2 "create: missing argument" "" create
	t "create with two BACKINGs" 2 "unexpected number of arguments" "" create /dev/a /dev/b
	t "list with an argument" 2 "unexpected number of arguments" "" list fairq0
	t "show without NAME" 2 "show: missing argument" "" show
	t "show with two NAMEs" 2 "unexpected number of arguments" "" show a b
	t "stats with two NAMEs" 2 "unexpected number of arguments" "" stats a b
	t "destroy without NAME" 2 "destroy: missing argument" "" destroy
	t "set without KEY=VALUE" 2 "set: missing argument" "" set fq0
	t "set KEY without =" 2 "'quantum': expected KEY=VALUE" "" set fq0 quantum
	t "set a path as KEY" 2 "invalid attribute name" "" set fq0 ../x=1
	t "set empty KEY" 2 "invalid attribute name" "" set fq0 =1
	t "--json outside stats" 2 "list: option --json is not valid here" "" list --json
	t "--name outside create" 2 "stats: option --name is not valid here" "" stats fq0 --name x
	t "invalid device NAME" 2 "'Bad/Name': invalid device name" "" show Bad/Name
	t "device NAME too long" 2 "invalid device name" "" show aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
	t "create --name invalid" 2 "invalid device name" "" create /dev/null --name "x y"
	t "create --set without =" 2 "expected KEY=VALUE" "" create /dev/null --set depth
	t "create --set power refused" 2 "create sets backing and power itself" "" create /dev/null --set power=1
	t "create --policy empty" 2 "--policy: empty value" "" create /dev/null --policy ""
	t "--help" 0 "" "^ create BACKING" --help
	for c in create list show set stats destroy; do
		check "--help lists $c" grep -qE "^ $c( |$)" "$tmp/out"
	done
	check "--help names FAIRQ_CONFIGFS" grep -q FAIRQ_CONFIGFS "$tmp/out"
	t "create --help" 0 "" "^Usage:" create --help
	t "--version" 0 "" "^fairqctl from fairq " --version
	FAIRQ_CONFIGFS=$tmp/none t "usage errors come before the module check" 2 "not a fairqctl command" "" frob
}

test_module_missing() {
	FAIRQ_CONFIGFS=$tmp/none t "list without the module" 1 "^fairqctl: fairq module not loaded \(modprobe fairq\)" "" list
	FAIRQ_CONFIGFS=$tmp/none t "show without the module" 1 "fairq module not loaded" "" show fq0
	FAIRQ_CONFIGFS=$tmp/none t "create without the module" 1 "fairq module not loaded" "" create /dev/null
	touch "$tmp/afile"
	FAIRQ_CONFIGFS=$tmp/afile t "configfs root not a directory" 1 "fairq module not loaded.*not a directory" "" list
}

test_list_show() {
	t "list with no devices" 0 "" "" list
	check "list with no devices prints nothing" test ! -s "$tmp/out"
	fake_dev fq0 1 /dev/vdb cfq
	fake_dev fqoff 0 "" sfq
	touch "$CFS/stray-file"
	mkdir "$CFS/.hidden"
	t "list" 0 "" "" list
	check "list: NAME BACKING POWER POLICY, sorted" \
		test "$(cat "$tmp/out")" = "$(printf 'fq0 /dev/vdb 1 cfq\nfqoff - 0 sfq')"

	t "show" 0 "" "^policy cfq$" show fq0
	check "show: backing" grep -qx "backing /dev/vdb" "$tmp/out"
	check "show: quantum" grep -qx "quantum 8" "$tmp/out"
	check "show: one line per attribute" \
		test "$(wc -l <"$tmp/out")" = "$(find "$CFS/fq0" -type f | wc -l)"
	check "show: sorted by attribute" \
		test "$(cut -d' ' -f1 "$tmp/out")" = "$(cut -d' ' -f1 "$tmp/out" | LC_ALL=C sort)"
	t "show empty value" 0 "" "^backing $" show fqoff
	t "show /dev/NAME as NAME" 0 "" "^power 1$" show /dev/fq0
	t "show missing device" 1 "^fairqctl: nosuch: no such fairq device$" "" show nosuch
	mkdir "$CFS/fq0/subdir"
	t "show skips subdirectories" 0 "" "" show fq0
	check "show: no subdir line" lacks "^subdir" "$tmp/out"
	rmdir "$CFS/fq0/subdir"
}

test_set() {
	t "set on a powered-off device" 0 "" "" set fqoff quantum=4 depth=16
	check "powered off: configfs quantum written" file_is "$CFS/fqoff/quantum" 4
	check "powered off: configfs depth written" file_is "$CFS/fqoff/depth" 16

	t "set on a powered device" 0 "" "" set fq0 quantum=2 policy=sfq
	check "powered: sysfs quantum written" file_is "$SYS/fq0/fairq/quantum" 2
	check "powered: sysfs policy written" file_is "$SYS/fq0/fairq/policy" sfq
	check "powered: configfs quantum untouched" file_is "$CFS/fq0/quantum" 8

	t "set max_flows on a powered device" 0 "" "" set fq0 max_flows=128
	check "max_flows goes to configfs" file_is "$CFS/fq0/max_flows" 128
	check "max_flows not via sysfs" file_is "$SYS/fq0/fairq/max_flows" 4096

	t "set a value with spaces and =" 0 "" "" set fqoff policy="a=b c"
	check "value kept verbatim" file_is "$CFS/fqoff/policy" "a=b c"

	t "set unknown attribute" 1 "^fairqctl: fq0: bogus: No such file or directory \(unknown attribute\)$" "" set fq0 bogus=1
	t "set stops at the first error" 1 "fqoff: nope: .*unknown attribute" "" set fqoff depth=7 nope=1 idle_us=9
	check "  the write before it happened" file_is "$CFS/fqoff/depth" 7
	check "  the write after it did not" file_is "$CFS/fqoff/idle_us" 0
	t "set missing device" 1 "nosuch: no such fairq device" "" set nosuch depth=1
	rm "$CFS/fqoff/power"
	t "set without a readable power" 1 "fqoff: power: No such file or directory" "" set fqoff depth=1
	echo 0 >"$CFS/fqoff/power"
}

test_stats() {
	t "stats" 0 "" "" stats fq0
	check "stats: the file as it is" cmp -s "$tmp/out" "$here/stats.txt"
	mkdir -p "$tmp/proc/1234"
	echo fio >"$tmp/proc/1234/comm"
	FAIRQ_PROC=$tmp/proc t "stats --json" 0 "" "" stats fq0 --json
	check "stats --json: python3 -m json.tool parses it" python3 -m json.tool "$tmp/out" /dev/null
	if command -v python3 >/dev/null; then
		check "stats --json: totals and flows, typed" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
t, f = j["totals"], j["flows"]
assert t["enq_reqs"] == 1234 and t["policy"] == "cfq", t
assert t["mem_bytes"] == 1048576 and t["flows"] == 2, t
assert len(t) == 24, len(t)
assert len(f) == 2 and f[0]["key"] == 1234 and f[0]["class"] == "be", f
assert f[1]["wait_ns_sum"] == 61728395 and len(f[1]) == 11, f
assert j["format"] == 1 and j["device"] == "fq0", j
assert f[0]["name"] == "fio" and f[1]["name"] is None, f
assert j["cgroup_weights"] == [] and isinstance(j["monotonic_ns"], int), j
' "$tmp/out"
	else
		check "stats --json: enq_reqs a number" grep -qE '"enq_reqs": 1234(,|$)' "$tmp/out"
		check "stats --json: policy a string" grep -q '"policy": "cfq"' "$tmp/out"
	fi
	t "stats -j" 0 "" '"flows": \[' stats -j fq0
	t "stats on a powered-off device" 1 "fqoff: not powered on" "" stats fqoff
	t "stats missing device" 1 "nosuch: no such fairq device" "" stats nosuch

	# odd input: empty stats, escapes, leading zeros, negatives, bare keys
	fake_dev fqodd 1 /dev/vdc fifo
	: >"$SYS/fqodd/fairq/stats"
	t "stats --json of an empty file" 0 "" "" stats fqodd --json
	check "  empty totals and flows" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["totals"] == {} and j["flows"] == [] and j["cgroup_weights"] == [], j
' "$tmp/out"
	printf 'name a"b\\c\nzero 007\nneg -5\nbare\nnum 0\nflow\nflow key=1 tag=x=y odd\n' \
		>"$SYS/fqodd/fairq/stats"
	t "stats --json of odd input" 0 "" "" stats fqodd --json
	if command -v python3 >/dev/null; then
		check "  escaped, typed, no field lost" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
t, f = j["totals"], j["flows"]
assert t == {"name": "a\"b\\c", "zero": "007", "neg": "-5", "bare": "", "num": 0}, t
assert f == [{"name": None}, {"key": 1, "tag": "x=y", "odd": "", "name": None}], f
' "$tmp/out"
	fi
}

test_create() {
	local blk n
	t "create on a missing path" 1 "^fairqctl: $tmp/nope: No such file or directory$" "" create "$tmp/nope"
	t "create on a regular file" 1 "^fairqctl: $tmp/afile: not a block device$" "" create "$tmp/afile"
	t "create on a character device" 1 "/dev/null: not a block device" "" create /dev/null
	check "  nothing made in configfs" test ! -e "$CFS/fairq0"

	blk=$(find_blockdev)
	if [ -z "$blk" ]; then
		echo "skip - create past the block-device check (no block device node)"
		return
	fi
	mkdir "$CFS/fairq0" "$CFS/fairq1"
	n=$(find "$CFS" -maxdepth 1 | wc -l)
	# a plain mkdir has no attribute files: writing backing fails, so
	# create must name the first free fairqN and remove it again
	t "create picks the first free fairqN and undoes it on error" 1 \
		"^fairqctl: fairq2: backing: No such file or directory" "" create "$blk" --policy sfq
	check "  fairq2 removed again" test ! -e "$CFS/fairq2"
	check "  nothing else changed" test "$(find "$CFS" -maxdepth 1 | wc -l)" = "$n"
	check "  nothing printed on stdout" test ! -s "$tmp/out"
	rmdir "$CFS/fairq0" "$CFS/fairq1"
	t "create --name undoes it on error" 1 "^fairqctl: mine: backing: " "" create "$blk" --name mine --set depth=4
	check "  mine removed again" test ! -e "$CFS/mine"
	t "create --name of an existing device" 1 "^fairqctl: fq0: already exists$" "" create "$blk" --name fq0
	check "  fq0 untouched" file_is "$CFS/fq0/backing" /dev/vdb
	check "  fq0 still there" test -f "$CFS/fq0/power"
}

test_destroy() {
	t "destroy missing device" 1 "^fairqctl: nosuch: no such fairq device$" "" destroy nosuch
	# configfs removes a populated entry; a plain directory does not, so
	# these stop at rmdir, which shows that power=0 came first
	t "destroy a powered device: power=0, then rmdir" 1 "^fairqctl: fq0: rmdir $CFS/fq0: Directory not empty$" "" destroy fq0
	check "  power written 0" file_is "$CFS/fq0/power" 0
	t "destroy a powered-off device: rmdir only" 1 "fqoff: rmdir .*: Directory not empty" "" destroy fqoff
	check "  power still 0" file_is "$CFS/fqoff/power" 0
	mkdir "$CFS/empty"
	echo 0 >"$CFS/empty/power"
	rm "$CFS/empty/power"
	t "destroy without a readable power" 1 "empty: power: No such file or directory" "" destroy empty
	check "  entry left alone" test -d "$CFS/empty"
}

main() {
	if [ ! -x "$FAIRQCTL" ]; then
		echo "no fairqctl at $FAIRQCTL (make -C tools)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	test_usage
	test_module_missing
	test_list_show
	test_set
	test_stats
	test_create
	test_destroy
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}

main
