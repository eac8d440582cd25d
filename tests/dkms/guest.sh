#!/bin/bash
# Guest test (tests/host/dkms-vm.sh runs it first, through vm/run
# --module): the fairq.ko the guest loads is the DKMS-built one of
# build/dkms/KVER/, byte for byte, signed by DKMS's key, and it registers
# its configfs subsystem.
# vm/init reads DESCRIPTION and TIMEOUT from the file
# shellcheck disable=SC2034
DESCRIPTION="the loaded fairq.ko is the DKMS-built module"
# shellcheck disable=SC2034
TIMEOUT=120
. /fairq/tests/vm/rc

want=/fairq/build/dkms/$(uname -r)/fairq.ko
[ -f "$want" ] || fail "$want: no DKMS-built module for $(uname -r)"
load_fairq
have=$(modinfo -n fairq) || fail "modinfo -n fairq failed"
cmp -s "$have" "$want" || fail "modprobe loaded $have, which is not $want"
signer=$(modinfo -F signer fairq)
[ "$signer" = "DKMS module signing key" ] || fail "signer is '$signer', not DKMS's key"
[ -d /sys/module/fairq ] || fail "/sys/module/fairq missing after load"
[ -d "$FAIRQ_CONFIGFS" ] || fail "$FAIRQ_CONFIGFS missing after load"
log "loaded $have = $want ($(md5sum <"$want" | cut -d' ' -f1)), signer '$signer', taint '$(cat /sys/module/fairq/taint)'"
exit 0
