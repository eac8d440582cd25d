#!/bin/bash
# tests/dkms/host.sh - the DKMS-built module in the VM (suite "dkms-vm",
# run with the VM suites by tests/run); host half of the suite, the guest
# half is tests/dkms/vm-dkms-module.sh.
#
# Boots Debian's default kernel with build/dkms/KVER/fairq.ko, the module
# dkms built from the fairq-dkms package (tests/host/deb-install.sh puts
# it there; when it is missing this script builds the package and runs
# the same scratch-root dkms build), loaded through `vm/run --module`, and
# runs tests/dkms/vm-dkms-module.sh (the loaded module is that file,
# signed by DKMS's key) and the quick suite against it:
# tests/vm/010-create.sh and 020-integrity.sh.  vm/run's summary ("N
# passed, N failed, N skipped") is the suite's; a check here that fails
# first ends the suite with its own (tests/lib.sh fatal).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib.sh"
kver=${KVER:-$("$top/scripts/debian-kver")}
ko="$top/build/dkms/$kver/fairq.ko"

if [ ! -f "$ko" ]; then
	scratch=$(mktemp -d /tmp/fairq-dkms-vm.XXXXXX)
	trap 'rm -rf "$scratch"' EXIT
	version=$(dpkg-parsechangelog -l "$top/packaging/changelog" -S Version)
	"$top/packaging/build-deb" "$scratch/deb" >/dev/null &&
		built=$("$top/packaging/dkms-scratch-build" \
			"$scratch/deb/fairq-dkms_${version}_all.deb" "$kver" "$scratch") ||
		fatal "dkms build of the fairq-dkms package for $kver"
	mkdir -p "$(dirname "$ko")"
	case "$built" in
	*.xz) xz -dc "$built" >"$ko" ;;
	*) cp "$built" "$ko" ;;
	esac
fi

vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
signer=$(modinfo -F signer "$ko" 2>/dev/null)
if [ "${vm%% *}" != "$kver" ] || [ "$signer" != "DKMS module signing key" ]; then
	fatal "$ko: vermagic '$vm', signer '$signer': not a DKMS build for $kver"
fi
echo "module: $ko (vermagic ${vm%% *}, signed by DKMS's key)"

# tests/dkms/vm-dkms-module.sh: the guest loads that very file
exec "$top/vm/run" --kver "$kver" --module "$ko" tests/dkms/vm-dkms-module.sh \
	tests/vm/010-create.sh tests/vm/020-integrity.sh
