#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Control fuzz (fault test 6 of 7): a seeded random writer (bash $RANDOM,
# seed printed; FUZZ_SEED=N reruns one) to every configfs attribute and,
# while powered, every sysfs attribute of a fairq device.  Values tried:
# binary junk of 1-4096 bytes (any byte but NUL), empty writes, numbers at
# and past each bound (min-1, min, max, max+1, 2^32-1, 2^32, 2^64, with
# "+", "-", leading zeros, spaces, one and two newlines, trailing junk),
# random valid values, valid and mangled words, paths with spaces, long
# and missing paths for backing, and a value with a NUL in it.
# A model of the documented parser (fairq(4)) predicts each
# write: refused ones must answer with the predicted errno (backing: any
# path errno) and leave every attribute as it was (all of them are read
# back and compared after each write); accepted ones must change exactly
# the attribute written, to the normalized value.  Then two writers fuzz
# configfs and sysfs at once (no prediction: only known errnos, and every
# attribute must read back a valid value), and I/O still verifies.
DESCRIPTION="seeded control fuzz of every configfs/sysfs attribute against a parser model"
TIMEOUT=400
# shellcheck source=rc
. /fairq/tests/vm/rc
# shellcheck source=faultrc
. /fairq/tests/vm/faultrc
export LC_ALL=C

NB=nullb150
FQ=fz0
C=$FAIRQ_CONFIGFS/$FQ
S=/sys/block/$FQ/fairq
N_SERIAL=${FUZZ_N:-300}
N_CONC=${FUZZ_NC:-250}
EF=$TMPDIR/err

# every tunable of the core's table (tests/vm/tunablesrc), and classify
# shellcheck source=tunablesrc
. /fairq/tests/vm/tunablesrc
load_tunables /fairq/sched/fq_tunables_table.h || fatal "no tunables read from sched/fq_tunables_table.h"
NUMS=() WORD_TUN=() SYS_TUN=() SYS_RO_TUN=()
declare -A MIN=() MAX=() WORDS=([classify]="tgid pid cgroup uid")
for t in "${TUNABLES[@]}"; do
	if [ "${TUN_KIND[$t]}" = word ]; then
		WORD_TUN+=("$t") WORDS[$t]=${TUN_WORDS[$t]}
	else
		NUMS+=("$t") MIN[$t]=${TUN_MIN[$t]} MAX[$t]=${TUN_MAX[$t]}
	fi
	# one that bounds the flows' memory is read-only in sysfs
	if [ "${TUN_KIND[$t]}" = alloc ]; then SYS_RO_TUN+=("$t"); else SYS_TUN+=("$t"); fi
done
CFS_RW=(backing power classify "${WORD_TUN[@]}" "${NUMS[@]}")
SYS_RW=(classify "${SYS_TUN[@]}")
SYS_RO=(backing "${SYS_RO_TUN[@]}" stats)
declare -A ST		# the model's state: attribute -> value as read

# --- the byte pool for junk: any byte but NUL, no fork ----------------------
make_pool() {
	local i hex ch
	CH=()
	for ((i = 1; i < 256; i++)); do
		printf -v hex '%02x' "$i"
		# shellcheck disable=SC2059 # the format is the escape \xHH that makes the byte
		printf -v ch "\\x$hex"
		CH[i]=$ch
	done
	# first bytes that no parser can take for the start of a valid value
	START='!"#$%&'\''()*,.:;<=>?@[\]^_`{|}~'
	POOL=""
	for ((i = 0; i < 8192; i++)); do
		POOL+=${CH[RANDOM % 255 + 1]}
	done
}

junk() {
	local len=$1 s
	((len == 0)) && { VAL=""; return; }
	s=${START:RANDOM % ${#START}:1}
	VAL=$s${POOL:RANDOM % 4096:len-1}
}

# --- the model ---------------------------------------------------------------
# parse_u32 S: NUM=value, PERR=""/EINVAL/ERANGE (fq_parse_u32)
parse_u32() {
	local s=$1 v=0 c
	PERR="" NUM=""
	[[ $s == [0-9]* ]] || { PERR=EINVAL; return; }
	while [[ $s == [0-9]* ]]; do
		c=${s:0:1}
		s=${s:1}
		v=$((v * 10 + c))
		((v > 4294967295)) && { PERR=ERANGE; return; }
	done
	[[ -z $s || $s == $'\n' ]] || { PERR=EINVAL; return; }
	NUM=$v
}

# is_word S LIST: S is a word of LIST, with at most one trailing newline
is_word() {
	local s=${1%$'\n'} w
	for w in $2; do
		[ "$s" = "$w" ] && { WORD=$w; return 0; }
	done
	return 1
}

# predict ATTR VAL POWERED: EXP (""=accepted or errno name), NEWV (value after)
predict() {
	local a=$1 v=$2 on=$3 p
	EXP="" NEWV=${ST[$a]}
	[ -z "$v" ] && return		# no write(2) at all
	if [ -n "${WORDS[$a]:-}" ]; then
		is_word "$v" "${WORDS[$a]}" && NEWV=$WORD || EXP=EINVAL
		return
	fi
	# a number or the word auto (kept as 0, which as a number is ERANGE)
	if [ "${TUN_KIND[$a]:-}" = auto ] && is_word "$v" auto; then
		NEWV=auto
		return
	fi
	case $a in
	power)
		p=${v#+}
		parse_u32 "$p"
		if [ -n "$PERR" ] || ((NUM > 1)); then EXP=EINVAL; else NEWV=$NUM; fi ;;
	backing)
		p=${v#"${v%%[![:space:]]*}"}
		p=${p%"${p##*[![:space:]]}"}
		if [ -z "$p" ]; then EXP=EINVAL
		elif [ ! -b "$p" ] 2>/dev/null; then EXP=PATH
		elif [ "$on" = 1 ]; then EXP=EBUSY
		else NEWV=$p
		fi ;;
	max_flows)
		[ "$on" = 1 ] && { EXP=EBUSY; return; }
		parse_u32 "$v"
		if [ -n "$PERR" ]; then EXP=$PERR
		elif ((NUM < MIN[$a] || NUM > MAX[$a] || NUM < ST[buckets])); then EXP=ERANGE
		else NEWV=$NUM
		fi ;;
	*)
		parse_u32 "$v"
		if [ -n "$PERR" ]; then EXP=$PERR
		elif ((NUM < MIN[$a] || NUM > MAX[$a])); then EXP=ERANGE
		elif [ "$a" = buckets ] && ((NUM & (NUM - 1))); then EXP=EINVAL
		elif [ "$a" = buckets ] && ((NUM > ST[max_flows])); then EXP=ERANGE
		else NEWV=$NUM
		fi ;;
	esac
}

# errno_of TEXT: ERRNO, the errno name of bash's error message TEXT
errno_of() {
	if errno_name "$1"; then
		ERRNO=$ERRNO_NAME
	else
		ERRNO="other($1)"
	fi
}

# put FILE VAL: write VAL with one write(2) (no fork); RC, ERRNO
put() {
	ERRNO=""
	if printf '%s' "$2" 2>"$EF" >"$1"; then
		RC=0
	else
		RC=1
		local t
		read -r t <"$EF"
		errno_of "$t"
	fi
}

# check_state WHAT: every attribute reads what the model holds
check_state() {
	local a v d
	for a in "${CFS_RW[@]}"; do
		read -r v <"$C/$a" || v=""
		[ "$v" = "${ST[$a]}" ] || fatal "$1: configfs $a reads '$v', model '${ST[$a]}'"
	done
	if [ "${ST[power]}" = 1 ]; then
		for a in "${SYS_RW[@]}" backing "${SYS_RO_TUN[@]}"; do
			read -r v <"$S/$a" || v=""
			[ "$v" = "${ST[$a]}" ] || fatal "$1: sysfs $a reads '$v', model '${ST[$a]}'"
		done
	fi
}

load_state() {
	local a
	for a in "${CFS_RW[@]}"; do
		read -r ST["$a"] <"$C/$a" || ST[$a]=""
	done
}

# gen ATTR: a value for ATTR in VAL, one of the kinds in the header
gen() {
	local a=$1 m M b w dec
	case $((RANDOM % 6)) in
	0)
		case $((RANDOM % 4)) in
		0) junk $((RANDOM % 8)) ;;
		1) junk $((RANDOM % 4096 + 1)) ;;
		2) junk 4095 ;;
		*) junk 4096 ;;
		esac ;;
	1 | 2)	# around the bounds
		m=${MIN[$a]:-0} M=${MAX[$a]:-1}
		b=($((m - 1)) "$m" "$M" $((M + 1)) 4294967295 4294967296 18446744073709551615
			18446744073709551616 0 1 $((m + 1)) $((M - 1)))
		VAL=${b[RANDOM % ${#b[@]}]}
		dec=("" "" "" $'\n' $'\n\n' " " "x" "+" "00000" "-" "0x" "$(printf '0%.0s' {1..300})")
		w=${dec[RANDOM % ${#dec[@]}]}
		case $w in
		$'\n' | $'\n\n' | " " | x) VAL=$VAL$w ;;
		*) VAL=$w$VAL ;;
		esac ;;
	3)	# valid numbers
		m=${MIN[$a]:-0} M=${MAX[$a]:-1}
		VAL=$((m + (RANDOM * 32768 + RANDOM) % (M - m + 1)))
		[ "$a" = buckets ] && VAL=$((1 << (RANDOM % 13)))
		[ "${TUN_KIND[$a]:-}" = auto ] && ((RANDOM % 3 == 0)) && VAL=auto
		((RANDOM % 2)) && VAL+=$'\n' ;;
	4)	# words, as they are and mangled
		# shellcheck disable=SC2206 # each WORDS[] is a list of words, split on purpose
		w=(${WORDS[*]})
		VAL=${w[RANDOM % ${#w[@]}]}
		case $((RANDOM % 7)) in
		0) VAL+=$'\n' ;;
		1) VAL+=$'\n\n' ;;
		2) VAL=" $VAL" ;;
		3) VAL=${VAL^^} ;;
		4) VAL=${VAL:0:2} ;;
		5) VAL+=${VAL: -1} ;;
		esac ;;
	*)	# paths
		w=("/dev/$NB" " /dev/$NB  " "/dev/$NB"$'\n' /dev/null /tmp /nonexistent ""
			"/dev/$NB/x" "/$(printf 'p%.0s' {1..300})" "/dev/nullb" "$C/backing")
		VAL=${w[RANDOM % ${#w[@]}]} ;;
	esac
}

# fuzz_one DIR ATTR: one predicted write through DIR (C or S)
fuzz_one() {
	local dir=$1 a=$2 on=${ST[power]} show
	gen "$a"
	predict "$a" "$VAL" "$on"
	# power changes are not the fuzzer's: valid ones that switch it are skipped
	[ "$a" = power ] && [ -z "$EXP" ] && [ "$NEWV" != "$on" ] && return
	put "$dir/$a" "$VAL"
	printf -v show '%q' "${VAL:0:40}"
	if [ -z "$EXP" ]; then
		[ $RC = 0 ] || fatal "$dir/$a <- $show (${#VAL} bytes): refused ($ERRNO), model accepts"
		ST[$a]=$NEWV
	else
		[ $RC = 1 ] || fatal "$dir/$a <- $show (${#VAL} bytes): accepted, model says $EXP"
		case $EXP:$ERRNO in
		PATH:ENOENT | PATH:ENOTBLK | PATH:ENAMETOOLONG | PATH:ENOTDIR) ;;
		"$EXP:$EXP") ;;
		*) fatal "$dir/$a <- $show (${#VAL} bytes): $ERRNO, model says $EXP" ;;
		esac
		REFUSED=$((REFUSED + 1))
	fi
	check_state "after $dir/$a <- $show"
	WRITES=$((WRITES + 1))
}

# fuzz_serial N: N predicted writes to random attributes
fuzz_serial() {
	local i a dir
	for ((i = 0; i < $1; i++)); do
		dir=$C a=${CFS_RW[RANDOM % ${#CFS_RW[@]}]}
		if [ "${ST[power]}" = 1 ] && ((RANDOM % 2)); then
			dir=$S a=${SYS_RW[RANDOM % ${#SYS_RW[@]}]}
		fi
		fuzz_one "$dir" "$a"
	done
}

# The special cases: read-only sysfs files, a NUL inside a value.
fuzz_fixed() {
	local a
	for a in "${SYS_RO[@]}"; do
		put "$S/$a" 1
		[ "$RC:$ERRNO" = 1:EACCES ] || fatal "write to read-only $S/$a: rc $RC $ERRNO"
	done
	# the kernel sees the string up to the NUL, as for every sysfs file
	printf 'sfq\0junk' >"$S/policy" || fatal "'sfq<NUL>junk' refused"
	ST[policy]=sfq
	printf '7\0' >"$C/quantum" || fatal "'7<NUL>' refused"
	ST[quantum]=7
	printf '\0' >"$C/depth" 2>/dev/null && fatal "'<NUL>' accepted for depth"
	check_state "NUL cases"
}

# fuzzer_bg SEED N: unpredicted writes to configfs and sysfs at once
fuzzer_bg() {
	local i a dir EF=$TMPDIR/err.$1
	RANDOM=$1
	for ((i = 0; i < $2; i++)); do
		dir=$C a=${CFS_RW[RANDOM % ${#CFS_RW[@]}]}
		((RANDOM % 2)) && dir=$S a=${SYS_RW[RANDOM % ${#SYS_RW[@]}]}
		[ "$a" = power ] && continue
		gen "$a"
		[ "$a" = backing ] && VAL="x$VAL"	# never a real path: no claim
		put "$dir/$a" "$VAL"
		case $RC:$ERRNO in
		0: | 1:EINVAL | 1:ERANGE | 1:EBUSY | 1:ENOENT | 1:ENOTBLK | 1:ENAMETOOLONG | 1:ENOTDIR) ;;
		*) echo "$dir/$a: $ERRNO" >>conc.bad ;;
		esac
	done
}

# valid_state: every attribute holds a value its parser accepts
valid_state() {
	local a v
	for a in "${SYS_RW[@]}"; do
		read -r v <"$S/$a"
		if [ -n "${WORDS[$a]:-}" ]; then
			is_word "$v" "${WORDS[$a]}" || fatal "concurrent: $a reads '$v'"
		elif [ "${TUN_KIND[$a]:-}" = auto ] && [ "$v" = auto ]; then
			:
		else
			parse_u32 "$v"
			[ -z "$PERR" ] && ((NUM >= MIN[$a] && NUM <= MAX[$a])) ||
				fatal "concurrent: $a reads '$v'"
		fi
	done
	read -r v <"$S/buckets"
	((v & (v - 1))) && fatal "concurrent: buckets reads $v"
	return 0
}

SEED=${FUZZ_SEED:-$(((RANDOM << 15) | RANDOM))}
log "fuzz seed $SEED (rerun: FUZZ_SEED=$SEED)"
RANDOM=$SEED
make_pool
null_blk_create $NB memory_backed=1 size=32
cleanup_push null_blk_destroy $NB
load_fairq
mkdir "$C" || fatal "mkdir $C"
cleanup_push fairq_destroy $FQ
echo /dev/$NB >"$C/backing" || fatal "backing"
WRITES=0 REFUSED=0
load_state
check_state "initial"
fuzz_serial "$N_SERIAL"
log "powered off: $WRITES writes, $REFUSED refused as predicted, state as modelled"

put "$C/power" 1
[ $RC = 0 ] || fatal "power=1 after the offline fuzz: $ERRNO"
ST[power]=1
wait_for_file /dev/$FQ || fatal "/dev/$FQ missing"
# a reader keeps the device busy while the fuzz goes on
(while dd if=/dev/$FQ of=/dev/null bs=64k count=64 iflag=direct status=none; do :; done) &
RD=$!
fuzz_fixed
fuzz_serial "$N_SERIAL"
log "powered on: $WRITES writes in all, $REFUSED refused as predicted, state as modelled"

: >conc.bad
fuzzer_bg $((SEED + 1)) "$N_CONC" &
P1=$!
fuzzer_bg $((SEED + 2)) "$N_CONC" &
P2=$!
wait $P1 $P2
[ ! -s conc.bad ] || fatal "concurrent fuzz: unexpected answers: $(head -n 3 conc.bad)"
valid_state
kill $RD 2>/dev/null
wait $RD 2>/dev/null
wait_idle $FQ
dd if=/dev/urandom of=p bs=64k count=32 status=none
dd if=p of=/dev/$FQ bs=64k oflag=direct status=none || fatal "write after the fuzz"
[ "$(region_sha /dev/$FQ 0 2048)" = "$(file_sha p)" ] || fatal "data after the fuzz"
fairq_destroy $FQ
log "2 x $N_CONC concurrent writes: known errnos only, valid state; data verifies"
