#!/bin/bash
# Guest half of the dkms-vm suite (tests/dkms/host.sh runs it first,
# through vm/run --module): the fairq.ko the guest loads is the DKMS-built one of
# build/dkms/KVER/, byte for byte, signed by DKMS's key, and it registers
# its configfs subsystem.
DESCRIPTION="the loaded fairq.ko is the DKMS-built module"
TIMEOUT=120
# shellcheck source=../vm/rc
. /fairq/tests/vm/rc

want=/fairq/build/dkms/$(uname -r)/fairq.ko
[ -f "$want" ] || fatal "$want: no DKMS-built module for $(uname -r)"
load_fairq
have=$(modinfo -n fairq) || fatal "modinfo -n fairq failed"
cmp -s "$have" "$want" || fatal "modprobe loaded $have, which is not $want"
signer=$(modinfo -F signer fairq)
[ "$signer" = "DKMS module signing key" ] || fatal "signer is '$signer', not DKMS's key"
[ -d /sys/module/fairq ] || fatal "/sys/module/fairq missing after load"
[ -d "$FAIRQ_CONFIGFS" ] || fatal "$FAIRQ_CONFIGFS missing after load"
log "loaded $have = $want ($(md5sum <"$want" | cut -d' ' -f1)), signer '$signer', taint '$(cat /sys/module/fairq/taint)'"
exit 0
