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
# Last line: "N passed, N failed, N skipped" (tests/lib.sh); exit status
# non-zero on any failure.  What cannot run here (no block device nodes
# without root, no man) is a counted skip with its reason.
set -u

here=$(cd "$(dirname "$0")" && pwd)
FAIRQCTL=$(realpath "${1:-$here/../fairqctl}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CFS=$tmp/cfs
SYS=$tmp/sys
CG=$tmp/cgroup
export FAIRQ_CONFIGFS=$CFS FAIRQ_SYSFS=$SYS
. "$here/../../tests/lib.sh"

# run ARGS...: fairqctl with stdout/stderr in $tmp/out, $tmp/err; sets $rc
run() {
	"$FAIRQCTL" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# not_ok DESC: fail DESC, with the last run's exit status and output
not_ok() {
	fail "$1"
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

# fake_dev NAME POWER BACKING POLICY: a configfs entry with the
# attributes of fairq(4); powered ones get SYS/NAME/fairq too
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
	t "--json outside stats, list, get" 2 "show: option --json is not valid here" "" show fq0 --json
	t "-n is --name, not top's rows" 2 "top: option --name is not valid here" "" top fq0 -n 5
	t "--rows outside top" 2 "stats: option --rows is not valid here" "" stats fq0 -r 5
	t "weights without an action" 2 "weights: missing argument" "" weights
	t "weights with an unknown action" 2 "weights: 'frob': the action is sync" "" weights frob
	t "weights sync with two NAMEs" 2 "unexpected number of arguments" "" weights sync a b
	t "weights sync --interval without --follow" 2 "weights sync: --interval goes with --follow" "" weights sync -i 1
	t "weights sync --follow --dry-run" 2 "pick one" "" weights sync --follow --dry-run
	t "weights sync of an invalid NAME" 2 "invalid device name" "" weights sync Bad/Name
	t "--follow outside weights" 2 "top: option --follow is not valid here" "" top fq0 --follow
	t "--name outside create" 2 "stats: option --name is not valid here" "" stats fq0 --name x
	t "invalid device NAME" 2 "'Bad/Name': invalid device name" "" show Bad/Name
	t "device NAME too long" 2 "invalid device name" "" show aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
	t "create --name invalid" 2 "invalid device name" "" create /dev/null --name "x y"
	t "create --set without =" 2 "expected KEY=VALUE" "" create /dev/null --set depth
	t "create --set power refused" 2 "create sets backing and power itself" "" create /dev/null --set power=1
	t "create --policy empty" 2 "--policy: empty value" "" create /dev/null --policy ""
	t "--help" 0 "" "^ create BACKING" --help
	for c in create list show set stats destroy weights; do
		check "--help lists $c" grep -qE "^ $c( |$)" "$tmp/out"
	done
	check "--help names FAIRQ_CONFIGFS" grep -q FAIRQ_CONFIGFS "$tmp/out"
	check "--help names FAIRQ_RUNDIR" grep -q FAIRQ_RUNDIR "$tmp/out"
	check "--help: one meaning per short option" \
		test "$(grep -oE '^ -[a-zA-Z],' "$tmp/out" | sort | uniq -d)" = ""
	# the pages it points at are installed with it; docs/ is not
	check "--help points at fairq(4) for the attributes" grep -q "fairq(4)" "$tmp/out"
	check "--help points at fairqctl(8) and fairqtab(5)" \
		sh -c "grep -q 'fairqctl(8)' '$tmp/out' && grep -q 'fairqtab(5)' '$tmp/out'"
	check "--help names no file of the source tree" lacks "docs/|INTERFACE" "$tmp/out"
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
	t "list --json" 0 "" "" list --json
	check "  format 1, the devices sorted, typed, unset backing null" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j == {"format": 1, "devices": [
    {"name": "fq0", "backing": "/dev/vdb", "power": 1, "policy": "cfq"},
    {"name": "fqoff", "backing": None, "power": 0, "policy": "sfq"}]}, j
' "$tmp/out"
	t "list -j" 0 "" '"devices": \[' list -j

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
assert len(t) == 40 and t["expire_deferred"] == 0, len(t)
assert t["idle_waits"] == 0 and t["idle_served"] == 0, t
assert t["fastpath_on"] == 1 and t["fastpath_reqs"] == 1100, t
assert t["fastpath_stops"] == 3 and t["inflight_max"] == 4, t
assert t["depth"] == "auto" and t["depth_now"] == 3 and t["depth_auto"] == 1, t
assert t["depth_changes"] == 7 and t["depth_epochs"] == 41, t
assert t["lat_floor_ns"] == 4012345 and t["cost_epochs"] == 96, t
assert t["cost_read_ns"] == 2003000 and t["cost_read_ps_per_byte"] == 250, t
assert t["cost_write_ns"] == 0 and t["cost_write_ps_per_byte"] == 0, t
assert list(t)[-10:] == ["depth_now", "depth_auto", "depth_changes",
    "depth_epochs", "lat_floor_ns", "cost_read_ns", "cost_read_ps_per_byte",
    "cost_write_ns", "cost_write_ps_per_byte", "cost_epochs"], list(t)
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
		skip "create past the block-device check: no block device node"
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

# fake_cgroup REL: a directory with cgroup.controllers under $CG; prints its inode
fake_cgroup() {
	mkdir -p "$CG/$1"
	touch "$CG/$1/cgroup.controllers"
	stat -c %i "$CG/$1"
}

test_cgroup_weight() {
	local ia ib
	export FAIRQ_CGROUP=$CG
	mkdir -p "$CG"
	touch "$CG/cgroup.controllers"
	ia=$(fake_cgroup batch)
	ib=$(fake_cgroup web/front)
	mkdir -p "$CG/notcg"
	t "set cgroup-weight without PATH=W" 2 "cgroup-weight: expected PATH=WEIGHT" "" set fq0 cgroup-weight
	t "set cgroup-weight PATH without =" 2 "expected PATH=WEIGHT" "" set fq0 cgroup-weight /x
	t "set cgroup-weight without the attribute" 1 "fq0: cgroup-weight: this fairq.ko has no cgroup_weights attribute" "" \
		set fq0 cgroup-weight batch=100
	: >"$CFS/fq0/cgroup_weights"
	t "set cgroup-weight relative PATH" 0 "" "" set fq0 cgroup-weight batch=100
	check "  wrote 'CGID WEIGHT'" file_is "$CFS/fq0/cgroup_weights" "$ia 100"
	t "set cgroup-weight absolute PATH" 0 "" "" set fq0 cgroup-weight "$CG/web/front=400"
	check "  the inode of web/front" file_is "$CFS/fq0/cgroup_weights" "$ib 400"
	t "set cgroup-weight 0 removes" 0 "" "" set fq0 cgroup-weight batch=0
	check "  wrote weight 0" file_is "$CFS/fq0/cgroup_weights" "$ia 0"
	t "set cgroup-weight and a tunable" 0 "" "" set fq0 depth=7 cgroup-weight batch=5 quantum=3
	check "  depth written" file_is "$CFS/fq0/depth" 7
	check "  weight written" file_is "$CFS/fq0/cgroup_weights" "$ia 5"
	check "  quantum written" file_is "$CFS/fq0/quantum" 3
	t "set cgroup-weight 1001" 1 "weight must be 0..1000" "" set fq0 cgroup-weight batch=1001
	t "set cgroup-weight garbage weight" 1 "weight must be 0..1000" "" set fq0 cgroup-weight batch=1x
	t "set cgroup-weight missing cgroup" 1 "cgroup-weight nosuch: No such file or directory" "" set fq0 cgroup-weight nosuch=1
	t "set cgroup-weight not a cgroup" 1 "cgroup-weight notcg: not a cgroup v2 directory under $CG" "" set fq0 cgroup-weight notcg=1
	t "set cgroup-weight outside the root" 1 "not a cgroup v2 directory" "" set fq0 cgroup-weight "$tmp=1"
	t "set cgroup-weight by id (cgroup gone)" 0 "" "" set fq0 cgroup-weight 987654=0
	check "  wrote the id" file_is "$CFS/fq0/cgroup_weights" "987654 0"

	printf '%s 100\n%s 400\n987654 7\n' "$ia" "$ib" >"$CFS/fq0/cgroup_weights"
	t "get cgroup-weight" 0 "" "" get fq0 cgroup-weight
	check "  PATH=W, the id when no cgroup has it" test "$(cat "$tmp/out")" = \
		"$(printf '%s\n%s\n%s' "$CG/batch=100" "$CG/web/front=400" "987654=7")"
	FAIRQ_PROC=$tmp/proc t "stats --json with cgroup weights" 0 "" "" stats fq0 --json
	check "  cgroup_weights listed" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
w = j["cgroup_weights"]
assert w == [{"id": int(sys.argv[3]), "path": sys.argv[2] + "/batch", "weight": 100},
             {"id": int(sys.argv[4]), "path": sys.argv[2] + "/web/front", "weight": 400},
             {"id": 987654, "path": None, "weight": 7}], w
' "$tmp/out" "$CG" "$ia" "$ib"
	t "get a plain attribute" 0 "" "^3$" get fq0 quantum
	t "get --json, a number" 0 "" "" get fq0 quantum --json
	check "  format 1, device, key, value typed" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j == {"format": 1, "device": "fq0", "key": "quantum", "value": 3}, j
' "$tmp/out"
	echo auto >"$CFS/fq0/depth"
	t "get --json, a word" 0 "" '^  "value": "auto"$' get fq0 depth --json
	echo 7 >"$CFS/fq0/depth"
	echo 123 >"$CFS/fq0/policy"
	t "get --json, policy is always a string" 0 "" '^  "value": "123"$' get fq0 policy -j
	echo cfq >"$CFS/fq0/policy"
	t "get cgroup-weight --json" 0 "" "" get fq0 cgroup-weight --json
	check "  the weights as in stats --json" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == 1 and j["device"] == "fq0" and j["key"] == "cgroup-weight", j
assert j["value"] == [{"id": int(sys.argv[3]), "path": sys.argv[2] + "/batch", "weight": 100},
                      {"id": int(sys.argv[4]), "path": sys.argv[2] + "/web/front", "weight": 400},
                      {"id": 987654, "path": None, "weight": 7}], j
' "$tmp/out" "$CG" "$ia" "$ib"
	t "get --json of an unknown attribute" 1 "fq0: nope: No such file or directory \(unknown attribute\)" "" get fq0 nope --json
	check "  nothing on stdout" test ! -s "$tmp/out"
	t "get an unknown attribute" 1 "fq0: nope: No such file or directory \(unknown attribute\)" "" get fq0 nope
	rm "$CFS/fq0/cgroup_weights"
	t "get cgroup-weight without the attribute" 1 "has no cgroup_weights attribute" "" get fq0 cgroup-weight

	# flow names under classify=cgroup and uid; invalid UTF-8 in a comm
	fake_dev fqcg 1 /dev/vdd cfq
	printf 'policy cfq\nclassify cgroup\nflow key=%s reqs=1\nflow key=1 reqs=2\n' "$ib" \
		>"$SYS/fqcg/fairq/stats"
	t "stats --json, classify cgroup" 0 "" "" stats fqcg --json
	check "  flow name is the cgroup path" python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))["flows"]
assert f[0]["name"] == "/web/front" and f[1]["name"] is None, f
' "$tmp/out"
	printf 'policy cfq\nclassify uid\nflow key=0\n' >"$SYS/fqcg/fairq/stats"
	t "stats --json, classify uid" 0 "" '"name": "root"' stats fqcg --json
	printf 'policy sfq\nclassify tgid\nflow key=1234\n' >"$SYS/fqcg/fairq/stats"
	FAIRQ_PROC=$tmp/proc t "stats --json, sfq keys are buckets" 0 "" '"name": null' stats fqcg --json
	mkdir -p "$tmp/proc/77"
	printf 'a\xffb\xc3\xa9"\n' >"$tmp/proc/77/comm"
	printf 'policy cfq\nclassify pid\nflow key=77\n' >"$SYS/fqcg/fairq/stats"
	FAIRQ_PROC=$tmp/proc t "stats --json, a comm that is not UTF-8" 0 "" "" stats fqcg --json
	check "  replaced, escaped, parses" python3 -c '
import json, sys
f = json.load(open(sys.argv[1], encoding="utf-8"))["flows"]
assert f[0]["name"] == "a\ufffdb\u00e9\"", f
' "$tmp/out"
	unset FAIRQ_CGROUP
}

# weights sync against a fake cgroup tree.  A plain file keeps only the
# last write, so between passes the test writes the table the kernel
# would hold (set_table); the follower's writes are read from its output,
# the last write and its state file.
set_table() {
	printf '%s\n' "$@" | sed '/^$/d' >"$CFS/fqw/cgroup_weights"
}

# cg_weight_file REL FILE TEXT: a weight file of cgroup REL (\n in TEXT)
cg_weight_file() {
	printf '%b' "$3" >"$CG/$1/$2"
}

test_weights() {
	local ia ib ic id ie if state=$tmp/run/weights/fqw
	export FAIRQ_CGROUP=$CG FAIRQ_RUNDIR=$tmp/run
	rm -rf "$CG"
	mkdir -p "$CG"
	touch "$CG/cgroup.controllers"
	ia=$(fake_cgroup a)
	ib=$(fake_cgroup b)
	ic=$(fake_cgroup c)
	id=$(fake_cgroup c/d)
	ie=$(fake_cgroup e)
	if=$(fake_cgroup f)
	# a: a line for fqw itself (259:0) wins over its default;
	# b: IOWeight=400; c: a line for the lower disk (254:16);
	# d: only io.bfq.weight; e: all at 100; f: above fairq's 1000
	cg_weight_file a io.weight 'default 2000\n259:0 50\n'
	cg_weight_file b io.weight 'default 400\n'
	cg_weight_file c io.weight 'default 100\n254:16 250\n8:0 20\n'
	cg_weight_file c/d io.weight 'default 100\n'
	cg_weight_file c/d io.bfq.weight 'default 300\n'
	cg_weight_file e io.weight 'default 100\n'
	cg_weight_file e io.bfq.weight '100\n'
	cg_weight_file f io.weight 'default 5000\n'
	fake_dev fqw 1 /dev/vdb cfq
	echo cgroup >"$CFS/fqw/classify"
	: >"$CFS/fqw/cgroup_weights"
	mkdir -p "$SYS/fqw/slaves/vdb"
	echo 259:0 >"$SYS/fqw/dev"
	echo 254:16 >"$SYS/fqw/slaves/vdb/dev"
	fake_dev fqtg 1 /dev/vdc cfq		# classify tgid: not followed
	: >"$CFS/fqtg/cgroup_weights"

	t "weights sync --dry-run" 0 "" "" weights sync --dry-run
	check "  a: its line for the fairq device" grep -qx "fqw: set cgroup-weight $CG/a=50 (io.weight 259:0)" "$tmp/out"
	check "  b: the default line" grep -qx "fqw: set cgroup-weight $CG/b=400 (io.weight)" "$tmp/out"
	check "  c: its line for the lower disk" grep -qx "fqw: set cgroup-weight $CG/c=250 (io.weight 254:16)" "$tmp/out"
	check "  d: io.bfq.weight where io.weight says 100" grep -qx "fqw: set cgroup-weight $CG/c/d=300 (io.bfq.weight)" "$tmp/out"
	check "  f: 5000 counts as 1000" grep -qx "fqw: set cgroup-weight $CG/f=1000 (io.weight)" "$tmp/out"
	check "  e (100) and the root: no entry; fqtg: not followed" \
		test "$(grep -c ': set ' "$tmp/out")" = 5
	check "  summary" grep -qx "dry run, nothing done: fqw: 7 cgroups, 5 changed, 0 removed, 0 as they were, 0 set by hand, 0 failed" "$tmp/out"
	check "  nothing written, no state" sh -c "test ! -s '$CFS/fqw/cgroup_weights' && test ! -e '$state'"

	t "weights sync" 0 "" "^fqw: 7 cgroups, 5 changed, " weights sync
	check "  an entry written (the last: f)" file_is "$CFS/fqw/cgroup_weights" "$if 1000"
	check "  none for e" sh -c "! grep -q '^$ie ' '$state'"
	check "  state: the configfs entry's inode, then the five entries" test \
		"$(grep -v '^#' "$state")" = "$(printf 'entry %s\n%s 50\n%s 400\n%s 250\n%s 300\n%s 1000' \
		"$(stat -c %i "$CFS/fqw")" "$ia" "$ib" "$ic" "$id" "$if")"
	check "  fqtg untouched" test ! -s "$CFS/fqtg/cgroup_weights"

	# the kernel's table now holds the five; a pass changes nothing
	set_table "$ia 50" "$ib 400" "$ic 250" "$id 300" "$if 1000"
	t "weights sync again: nothing to do" 0 "" "^fqw: 7 cgroups, 0 changed, 0 removed, 5 as they were, 0 set by hand, 0 failed$" weights sync
	check "  no write" test "$(wc -l <"$CFS/fqw/cgroup_weights")" = 5

	# a weight set by hand, even equal to the follower's, is the user's
	t "set cgroup-weight b=400 by hand" 0 "" "" set fqw cgroup-weight b=400
	check "  b no longer in the follower's state" sh -c "! grep -q '^$ib ' '$state' && grep -q '^$ia 50$' '$state'"
	set_table "$ia 50" "$ib 400" "$ic 250" "$id 300" "$if 1000"
	cg_weight_file b io.weight 'default 200\n'
	t "weights sync: the user's entry wins" 0 "" "^fqw: cgroup-weight $CG/b=400 set by hand, io.weight says 200: left as it is$" weights sync
	check "  b not written" test "$(wc -l <"$CFS/fqw/cgroup_weights")" = 5
	check "  counted as set by hand" grep -q ", 1 set by hand, 0 failed$" "$tmp/out"
	# a user's entry that differs from what the follower wrote
	set_table "$ia 50" "$ib 400" "$ic 7" "$id 300" "$if 1000"
	t "weights sync: an entry changed by hand is the user's" 0 "" "c=7 set by hand, io.weight 254:16 says 250" weights sync
	check "  c dropped from the state" sh -c "! grep -q '^$ic ' '$state'"

	# the override removed: the follower takes over
	set_table "$ia 50" "$id 300" "$if 1000"
	t "weights sync: overrides removed" 0 "" "" weights sync
	check "  b follows io.weight again" grep -qx "fqw: set cgroup-weight $CG/b=200 (io.weight)" "$tmp/out"
	check "  c too" grep -qx "fqw: set cgroup-weight $CG/c=250 (io.weight 254:16)" "$tmp/out"
	check "  both in the state" sh -c "grep -qx '$ib 200' '$state' && grep -qx '$ic 250' '$state'"

	# a weight back to 100 and a cgroup removed: their entries go
	set_table "$ia 50" "$ib 200" "$ic 250" "$id 300" "$if 1000"
	cg_weight_file c/d io.bfq.weight 'default 100\n'
	cg_weight_file f io.weight 'default 600\n'
	rm -r "$CG/a"
	t "weights sync: changes" 0 "" "" weights sync
	check "  a gone: removed by id" grep -qx "fqw: remove cgroup-weight $ia (cgroup gone)" "$tmp/out"
	check "  d at 100: removed" grep -qx "fqw: remove cgroup-weight $CG/c/d (its weight is 100 again)" "$tmp/out"
	check "  f changed" grep -qx "fqw: set cgroup-weight $CG/f=600 (io.weight, was 1000)" "$tmp/out"
	check "  state: b, c, f" test "$(grep -cv '^\(#\|entry\)' "$state")" = 3

	# the device removed and made again: the old state is not its
	set_table "$ib 200" "$ic 250" "$if 600"
	mv "$CFS/fqw" "$CFS/fqw.old" && mkdir "$CFS/fqw" && cp -p "$CFS/fqw.old"/* "$CFS/fqw/" && rm -r "$CFS/fqw.old"
	cg_weight_file f io.weight 'default 700\n'
	t "weights sync: a new device of that name" 0 "" "f=600 set by hand, io.weight says 700" weights sync
	check "  no write: every entry is the user's" test "$(wc -l <"$CFS/fqw/cgroup_weights")" = 3

	t "weights sync NAME, classify not cgroup" 1 "^fairqctl: fqtg: classify is not cgroup: weights not followed$" "" weights sync fqtg
	echo tgid >"$CFS/fqw/classify"
	t "weights sync, no device to follow" 0 "" "^no powered device with classify=cgroup: nothing to follow$" weights sync
	echo cgroup >"$CFS/fqw/classify"
	t "weights sync of a missing device" 1 "nosuch: no such fairq device" "" weights sync nosuch
	rm "$CFS/fqw/cgroup_weights"
	t "weights sync: a fairq.ko without cgroup weights" 1 "fqw: cgroup_weights: No such file or directory \\(this fairq.ko has no cgroup weights\\)" "" weights sync fqw
	: >"$CFS/fqw/cgroup_weights"
	FAIRQ_CONFIGFS=$tmp/none t "weights sync without the module" 1 "fairq module not loaded" "" weights sync

	# --follow: passes until SIGTERM, exit 0; waits for a missing module
	rm -rf "$tmp/run"
	set_table
	"$FAIRQCTL" weights sync --follow --interval 0.2 >"$tmp/fout" 2>"$tmp/ferr" &
	local pid=$! n=0
	until [ -s "$tmp/fout" ] || [ "$n" -ge 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	cg_weight_file b io.weight 'default 300\n'
	set_table "$ib 200" "$ic 250" "$if 700"
	# a pass every 0.2 s; a loaded host may take several to get there
	n=0
	until grep -q "b=300 (io.weight, was 200)" "$tmp/fout" || [ "$n" -ge 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check "weights sync --follow: exit 0 on SIGTERM" test "$rc" = 0
	check "  its passes wrote b=200, then followed b to 300" sh -c "grep -qx 'fqw: set cgroup-weight $CG/b=200 (io.weight)' '$tmp/fout' &&
		grep -qx 'fqw: set cgroup-weight $CG/b=300 (io.weight, was 200)' '$tmp/fout'"
	check "  no summary lines, nothing on stderr" sh -c "! grep -q ' cgroups, ' '$tmp/fout' && test ! -s '$tmp/ferr'"
	FAIRQ_CONFIGFS=$tmp/none "$FAIRQCTL" weights sync --follow -i 0.1 >"$tmp/fout" 2>"$tmp/ferr" &
	pid=$!
	sleep 0.5
	check "weights sync --follow without the module: keeps waiting" kill -0 "$pid"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check "  exit 0, silent" sh -c "test '$rc' = 0 && test ! -s '$tmp/fout' && test ! -s '$tmp/ferr'"
	unset FAIRQ_CGROUP FAIRQ_RUNDIR
}

# one pass over 10,000 cgroups (100 slices of 99 units, 1 in 100 weighted)
test_weights_10k() {
	local root=$tmp/cg10k s u n=0 ms
	export FAIRQ_CGROUP=$root FAIRQ_RUNDIR=$tmp/run10k
	mkdir -p "$root"
	touch "$root/cgroup.controllers"
	for ((s = 0; s < 100; s++)); do
		mkdir -p "$root/s$s.slice"
		printf 'default 100\n' >"$root/s$s.slice/io.weight"
		(cd "$root/s$s.slice" && mkdir u{0..98}.service) || return
		for ((u = 0; u < 99; u++)); do
			if ((u == 7)); then
				printf 'default %d\n' $((200 + s)) >"$root/s$s.slice/u$u.service/io.weight"
			else
				printf 'default 100\n' >"$root/s$s.slice/u$u.service/io.weight"
			fi
		done
	done
	set_table
	FAIRQ_WEIGHTS_TIMING=1 t "weights sync over 10,000 cgroups" 0 "pass [0-9.]+ ms" \
		"^fqw: 10001 cgroups, 100 changed, 0 removed, 0 as they were, 0 set by hand, 0 failed$" weights sync fqw
	ms=$(sed -n 's/.*pass \([0-9.]*\) ms.*/\1/p' "$tmp/err")
	echo "     one pass over 10,001 cgroups: ${ms:-?} ms ($(sed -n 's/.*cgroup walk \([0-9.]*\) ms.*/\1/p' "$tmp/err") ms of it the walk)"
	check "  under 2 s" awk -v m="${ms:-99999}" 'BEGIN { exit !(m < 2000) }'
	unset FAIRQ_CGROUP FAIRQ_RUNDIR
}

# comp LINE: complete LINE (the cursor at its end) with packaging's file;
# the candidates in $tmp/out, one a line
comp() {
	(
		# shellcheck source=../../packaging/fairqctl.bash-completion
		. "$here/../../packaging/fairqctl.bash-completion"
		read -ra COMP_WORDS <<<"$1"
		[[ $1 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_fairqctl
		printf '%s\n' "${COMPREPLY[@]}"
	) >"$tmp/out" 2>"$tmp/err"
}

completes() {
	[ "$(tr '\n' ' ' <"$tmp/out")" = "$1" ]
}

test_completion() {
	rc=0
	export FAIRQ_CGROUP=$CG
	check "bash completion: bash -n" bash -n "$here/../../packaging/fairqctl.bash-completion"
	comp "fairqctl "
	check "  commands" completes "create list show set get stats top apply weights destroy "
	comp "fairqctl st"
	check "  a command's start" completes "stats "
	comp "fairqctl stats fqt"
	check "  device names from configfs" completes "fqtg fqtop "
	comp "fairqctl top fqw -"
	check "  top's options" completes "--once --interval --rows --help "
	comp "fairqctl create /dev/null -"
	check "  create's options" completes "--name --policy --set --help "
	comp "fairqctl create /dev/null --policy "
	check "  policies" completes "cfq sfq fifo "
	comp "fairqctl weights "
	check "  weights: sync" completes "sync "
	comp "fairqctl weights sync fqw"
	check "  weights sync: devices" completes "fqw "
	comp "fairqctl get fqw cl"
	check "  get: the device's attributes" completes "classify "
	comp "fairqctl set fqw dep"
	check "  set: KEY=" completes "depth= "
	comp "fairqctl set fqw cg"
	check "  set: cgroup-weight" completes "cgroup-weight "
	comp "fairqctl set fqw cgroup-weight $CG/"
	check "  cgroup-weight: cgroup directories" grep -qx "$CG/b" "$tmp/out"
	check "  nothing on stderr" test ! -s "$tmp/err"
	unset FAIRQ_CGROUP
}

# tab FILE LINES...: write a fairqtab
tab() {
	local f=$1
	shift
	printf '%s\n' "$@" >"$f"
}

test_fairqtab() {
	local blk=$1 blk2=$2 f=$tmp/tab
	export FAIRQ_DEVDISK=$tmp/disk FAIRQ_BLKID=
	rm -rf "$CFS" "$SYS"
	fake_dev fq0 1 "$blk" cfq
	mkdir -p "$tmp/disk/by-uuid" "$tmp/disk/by-label"
	ln -sf "$blk2" "$tmp/disk/by-uuid/1b4e28ba-2fa1"
	ln -sf "$blk2" "$tmp/disk/by-label/data"

	tab "$f" "# every kind of error, one a line" "" \
		"fq0 $blk cfq depth=16" \
		"Bad/Name $tmp/b0" \
		"lonely" \
		"fqa $tmp/b1 frob=1" \
		"fqb $tmp/b2 depth=12x" \
		"fqc $tmp/b3 bogus" \
		"fqd $tmp/b4 classify=cpu" \
		"fqe $tmp/b5 depth=1 depth=2" \
		"fqf $tmp/b6 cfq extra" \
		"fq0 $tmp/b99" \
		"fqg relative/path" \
		"fqh $tmp/b7 power=1" \
		"fqi $tmp/b8 cgroup-weight=batch" \
		"fqj $tmp/b9 cgroup-weight=batch:0" \
		"fqk $tmp/b10 cgroup-weight=a:5 cgroup-weight=a:6" \
		"fql UUID=" \
		"fqm $blk" \
		"   # indented comment" \
		"fqn $blk2 fairness=bytes quantum_bytes=65536 depth=auto # trailing comment" \
		"fqo $tmp/b11 depth_max=auto" \
		"fqp $tmp/b12 depth=autox"
	t "fairqtab: bad lines" 1 "" "" apply "$f" --dry-run
	check "  line 4: invalid name" grep -qx "fairqctl: $f:4: 'Bad/Name': invalid device name (1..31 of a-z 0-9 _ -)" "$tmp/err"
	check "  line 5: no BACKING" grep -qx "fairqctl: $f:5: lonely: no BACKING (expected NAME BACKING \[POLICY\] \[KEY=VALUE\]...)" "$tmp/err"
	check "  line 6: unknown key" grep -qx "fairqctl: $f:6: fqa: unknown key 'frob'" "$tmp/err"
	check "  line 7: bad number" grep -qx "fairqctl: $f:7: fqb: depth: '12x' is not a number or auto" "$tmp/err"
	check "  line 8: bad policy" grep -qx "fairqctl: $f:8: fqc: policy: 'bogus' is not one of cfq, sfq, fifo" "$tmp/err"
	check "  line 9: bad classify" grep -qx "fairqctl: $f:9: fqd: classify: 'cpu' is not one of tgid, pid, cgroup, uid" "$tmp/err"
	check "  line 10: key twice" grep -qx "fairqctl: $f:10: fqe: depth given twice" "$tmp/err"
	check "  line 11: a word after POLICY" grep -qx "fairqctl: $f:11: fqf: 'extra': expected KEY=VALUE" "$tmp/err"
	check "  line 12: NAME twice" grep -qx "fairqctl: $f:12: fq0: already defined on line 3" "$tmp/err"
	check "  line 13: relative backing" grep -qx "fairqctl: $f:13: fqg: backing 'relative/path': want a /dev path, UUID=, PARTUUID=, LABEL= or PARTLABEL=" "$tmp/err"
	check "  line 14: power= is no key" grep -q "^fairqctl: $f:14: fqh: 'power' is not a key" "$tmp/err"
	check "  line 15: cgroup-weight without :W" grep -qx "fairqctl: $f:15: fqi: cgroup-weight: 'batch': expected PATH:WEIGHT" "$tmp/err"
	check "  line 16: cgroup-weight 0" grep -qx "fairqctl: $f:16: fqj: cgroup-weight: 'batch:0': weight must be 1..1000" "$tmp/err"
	check "  line 17: cgroup twice" grep -qx "fairqctl: $f:17: fqk: cgroup-weight: a given twice" "$tmp/err"
	check "  line 18: empty UUID" grep -qx "fairqctl: $f:18: fql: 'UUID=': empty value" "$tmp/err"
	check "  line 19: backing twice" grep -qx "fairqctl: $f:19: fqm: backing $blk is already used on line 3" "$tmp/err"
	check "  line 22: auto is no number" grep -qx "fairqctl: $f:22: fqo: depth_max: 'auto' is not a number" "$tmp/err"
	check "  line 23: depth, not a number or auto" grep -qx "fairqctl: $f:23: fqp: depth: 'autox' is not a number or auto" "$tmp/err"
	check "  no other errors" test "$(wc -l <"$tmp/err")" = 18
	check "  the good lines are still planned" grep -qx "fqn: create over $blk2 fairness=bytes quantum_bytes=65536 depth=auto" "$tmp/out"
	check "  fq0 too" grep -qx "fq0: set depth=16 (was 32)" "$tmp/out"
	check "  the summary counts the bad lines" grep -q "18 bad lines$" "$tmp/out"

	t "fairqtab: no such file" 1 "^fairqctl: $tmp/nofile: No such file or directory$" "" apply "$tmp/nofile"
	FAIRQTAB=$tmp/nofile2 t "fairqtab: \$FAIRQTAB" 1 "nofile2: No such file" "" apply
	t "apply with two FILEs" 2 "unexpected number of arguments" "" apply a b
	t "apply --dry-run --down" 2 "pick one" "" apply "$f" --dry-run --down
	t "--prune outside apply" 2 "option --prune is not valid here" "" list --prune
}

test_apply_plan() {
	local blk=$1 blk2=$2 f=$tmp/plan
	export FAIRQ_DEVDISK=$tmp/disk FAIRQ_BLKID=
	rm -rf "$CFS" "$SYS"
	fake_dev fq0 1 "$blk" cfq
	fake_dev fqoff 0 "" sfq
	fake_dev fqcg 1 /dev/vdd cfq
	# fq0 over $blk powered (depth 32), fqoff powered off, fqsame as the file says
	fake_dev fqsame 1 "$blk2" sfq
	echo 128 >"$CFS/fqsame/buckets"
	tab "$f" "fq0 $blk cfq depth=16 quantum=8" \
		"fqsame LABEL=data sfq buckets=128" \
		"fqnew UUID=1b4e28ba-2fa1 fifo depth=4" \
		"fqgone UUID=0000-dead" \
		"fqoff $blk2 max_flows=64"
	t "apply --dry-run: a plan" 3 "" "" apply "$f" --dry-run
	check "  reconfigure: only what differs" test "$(grep '^fq0:' "$tmp/out")" = "fq0: set depth=16 (was 32)"
	check "  unchanged" grep -qx "fqsame: unchanged" "$tmp/out"
	check "  create via UUID=" grep -qx "fqnew: create over $blk2 policy=fifo depth=4" "$tmp/out"
	check "  create, then power on" grep -qx "fqnew: power on" "$tmp/out"
	check "  missing backing reported" grep -qx "fqgone: backing UUID=0000-dead not present, not created" "$tmp/out"
	check "  powered off: set, then power on" test "$(grep '^fqoff:' "$tmp/out")" = \
		"$(printf 'fqoff: set backing=%s (was unset)\nfqoff: set max_flows=64 (was 4096)\nfqoff: power on' "$blk2")"
	check "  not in the file: left alone" grep -qx "fqcg: not in $f, left alone (--prune removes it)" "$tmp/out"
	check "  summary" grep -qx "dry run, nothing done: $f: 1 created, 2 changed, 0 removed, 1 unchanged, 1 missing, 0 failed, 0 bad lines" "$tmp/out"
	check "  nothing written" file_is "$CFS/fq0/depth" 32
	check "  nothing created" test ! -e "$CFS/fqnew"
	check "  nothing on stderr" test ! -s "$tmp/err"

	t "apply --dry-run --prune" 3 "" "fqcg: power off, remove" apply "$f" --dry-run --prune
	check "  still there" test -d "$CFS/fqcg"
	t "apply --down --dry-run refused" 2 "pick one" "" apply "$f" --down --dry-run

	# a real run on the fake tree: reconfiguring writes plain files
	tab "$f" "fq0 $blk cfq depth=16 quantum=8" "fqsame LABEL=data sfq buckets=128"
	t "apply: reconfigure" 0 "" "^fq0: set depth=16 \(was 32\)$" apply "$f"
	check "  depth written to configfs" file_is "$CFS/fq0/depth" 16
	t "apply again: nothing to do" 0 "" "^$f: nothing to do, 2 devices as the file says$" apply "$f"
	check "  and says nothing else about fq0" test "$(grep -c '^fq0:' "$tmp/out")" = 1
	check "  fq0: unchanged" grep -qx "fq0: unchanged" "$tmp/out"
	FAIRQTAB=$f t "apply from \$FAIRQTAB" 0 "" "nothing to do" apply

	# the kernel refuses a value: named by line, the other lines apply
	tab "$f" "fq0 $blk cfq depth=17" "fqsame LABEL=data sfq buckets=256"
	chmod 0444 "$CFS/fq0/depth"
	if ! [ -w "$CFS/fq0/depth" ] || [ "$(id -u)" != 0 ]; then :; fi
	rm "$CFS/fq0/depth"
	t "apply: a refused attribute" 1 "^fairqctl: $f:1: fq0: depth: No such file or directory$" "" apply "$f"
	check "  the next line applied" file_is "$CFS/fqsame/buckets" 256
	echo 16 >"$CFS/fq0/depth"

	# a create that fails part-way is undone (a plain mkdir has no attributes)
	tab "$f" "fqnew UUID=1b4e28ba-2fa1 fifo"
	t "apply: failed create undone" 1 "^fairqctl: $f:1: fqnew: backing: No such file or directory" "fqnew: not created" apply "$f"
	check "  no fqnew left" test ! -e "$CFS/fqnew"

	# --down: last line first; a plain directory cannot be rmdir'ed, so it
	# stops there, after power=0
	tab "$f" "fq0 $blk" "fqsame $blk2" "fqnone $tmp/x"
	t "apply --down" 1 "fqsame: rmdir .*Directory not empty" "" apply "$f" --down
	check "  last line first" test "$(cut -d: -f1 "$tmp/out" | head -n 3 | tr '\n' ' ')" = "fqnone fqsame fq0 "
	check "  not there" grep -qx "fqnone: not there, nothing to do" "$tmp/out"
	check "  power written 0" file_is "$CFS/fqsame/power" 0
	echo 1 >"$CFS/fqsame/power"
	echo 1 >"$CFS/fq0/power"

	FAIRQ_CONFIGFS=$tmp/none t "apply without the module" 1 "fairq module not loaded" "" apply "$f"
	FAIRQ_CONFIGFS=$tmp/none t "apply --dry-run without the module" 3 "" "^fq0: create over $blk$" \
		apply "$f" --dry-run
	unset FAIRQ_DEVDISK FAIRQ_BLKID
}

# stats_fifo FIRST THEN: $SYS/fqtop/fairq/stats serves FIRST to the first
# reader (a FIFO) and is THEN for every later one (renamed over the FIFO
# once the first reader has it open, so no read can see both)
stats_fifo() {
	local s=$SYS/fqtop/fairq/stats
	rm -f "$s"
	mkfifo "$s"
	cp "$2" "$s.next"
	# bounded: a fairqctl that never reads must not hang the suite
	(timeout 30 sh -c 'cat "$1" >"$2"' - "$1" "$s"; mv "$s.next" "$s") &
	FIFO_PID=$!
}

test_top() {
	fake_dev fqtop 1 /dev/vde cfq
	mkdir -p "$tmp/proc/1300"
	echo dd >"$tmp/proc/1300/comm"
	sed 's/^done_reqs .*/done_reqs 1000/' "$here/stats.txt" >"$tmp/s1"
	sed -e 's/^done_reqs .*/done_reqs 3000/' \
	    -e 's/^\(flow key=1234 .*\) reqs=617 bytes=2527232 wait_ns_sum=61728394/\1 reqs=1617 bytes=6623232 wait_ns_sum=1061728394/' \
		"$here/stats.txt" >"$tmp/s2"
	stats_fifo "$tmp/s1" "$tmp/s2"
	FAIRQ_PROC=$tmp/proc t "top --once" 0 "" "" top fqtop --once --interval 0.3
	wait "$FIFO_PID"
	check "  header" grep -qE "^fqtop  [0-9:]+  policy cfq  classify tgid  depth auto  interval 0\.[0-9] s$" "$tmp/out"
	check "  depth line" grep -qx "depth: now 3 (auto)  changes 7  epochs 41  latency floor 4.01 ms" "$tmp/out"
	check "  cost line" grep -qx "cost:  read 2003.0 us + 0.250 ns/B  write -  (epochs 96)" "$tmp/out"
	check "  totals" grep -qE "^total: [0-9.]+ IOPS  [0-9.]+ MiB/s  queued 0  inflight 0  flows 2/4096$" "$tmp/out"
	check "  columns" grep -qE "^KEY +NAME +CLASS +WEIGHT +IOPS +MiB/s +QUEUED +INFL +WAIT_MS +MAX_MS$" "$tmp/out"
	check "  busiest first, by name" grep -qE "^1234 +fio +be/4 +4 +[0-9.]+ +[0-9.]+ +0 +0 +1\.00 +4\.57$" "$tmp/out"
	check "  the idle flow: no reads, no mean wait" grep -qE "^1300 +dd +idle/7 +1 +0\.0 +0\.00 +3 +1 +- +4\.57$" "$tmp/out"
	check "  fio above dd" test "$(sed -n '/^KEY/{n;p}' "$tmp/out" | cut -d' ' -f1)" = 1234
	stats_fifo "$tmp/s1" "$tmp/s2"
	FAIRQ_PROC=$tmp/proc t "top --once -r 1" 0 "" "" top fqtop --once -i 0.2 -r 1
	wait "$FIFO_PID"
	check "  one row" test "$(sed -n '/^KEY/,$p' "$tmp/out" | wc -l)" = 2
	# a fixed depth, and a fairq.ko without the depth and cost keys
	sed -e 's/^depth_auto 1/depth_auto 0/' "$tmp/s1" >"$tmp/s1f"
	sed -e 's/^depth_auto 1/depth_auto 0/' "$tmp/s2" >"$tmp/s2f"
	stats_fifo "$tmp/s1f" "$tmp/s2f"
	FAIRQ_PROC=$tmp/proc t "top --once, depth fixed" 0 "" "^depth: now 3 \\(fixed\\)  " top fqtop --once -i 0.2
	wait "$FIFO_PID"
	sed -e '/^depth_/d' -e '/^lat_floor_ns/d' -e '/^cost_/d' "$tmp/s1" >"$tmp/s1o"
	sed -e '/^depth_/d' -e '/^lat_floor_ns/d' -e '/^cost_/d' "$tmp/s2" >"$tmp/s2o"
	stats_fifo "$tmp/s1o" "$tmp/s2o"
	FAIRQ_PROC=$tmp/proc t "top --once, an older fairq.ko" 0 "" "" top fqtop --once -i 0.2
	wait "$FIFO_PID"
	check "  no depth or cost line" sh -c "! grep -qE '^(depth|cost):' '$tmp/out'"
	t "top --interval 0" 2 "want 0.1..3600 seconds" "" top fqtop --interval 0
	t "top -r x" 2 "^fairqctl: --rows 'x': want 1..1000 rows" "" top fqtop -r x
	t "top --rows 0" 2 "want 1..1000 rows" "" top fqtop --rows 0
	t "top --once outside top" 2 "option --once is not valid here" "" stats fqtop --once
	t "top of a powered-off device" 1 "fqoff: not powered on" "" top fqoff --once
}

test_man() {
	local page=$here/../../man/fairqtab.5
	if ! command -v man >/dev/null || [ ! -f "$page" ]; then
		skip "fairqtab.5 man --warnings: no man or no page"
		return
	fi
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "fairqtab.5: man --warnings is silent" test "$rc" = 0 -a ! -s "$tmp/err"
	check "fairqtab.5: names every key" sh -c "for k in policy classify fairness quantum quantum_bytes quantum_us buckets perturb_ms depth depth_max idle_us idle_grace_ms fifo_expire_sync_ms fifo_expire_async_ms max_flows cgroup-weight; do grep -q \"\$k\" '$tmp/out' || exit 1; done"
}

main() {
	if [ ! -x "$FAIRQCTL" ]; then
		fatal "no fairqctl at $FAIRQCTL (make -C tools)"
	fi
	test_usage
	test_module_missing
	test_list_show
	test_set
	test_stats
	test_create
	test_destroy
	test_cgroup_weight
	blk=$tmp/blk
	if [ -b "$blk" ] && mknod "$tmp/blk2" b 7 1 2>/dev/null && [ -b "$tmp/blk2" ]; then
		test_fairqtab "$blk" "$tmp/blk2"
		test_apply_plan "$blk" "$tmp/blk2"
	else
		skip "fairqtab and apply: cannot make block device nodes (not root?)"
	fi
	test_top
	test_weights
	test_weights_10k
	test_completion
	test_man
	summary
}

main
