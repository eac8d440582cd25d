#!/bin/bash
# tests/host/deb-install.sh - make deb, then install and build what it
# made, without touching the host (host suite "deb").
#
#  - packaging/build-deb builds fairq-dkms and fairq-tools;
#  - dpkg-deb -I/-c: fields, dependencies, conffiles, maintainer scripts,
#    every file in place (the module source equal to the tree's);
#  - lintian: no tag left that is not overridden;
#  - both units under systemd-analyze verify, their commands run by the
#    packaged fairqctl; the bash completion sourced and run;
#  - dpkg --root=SCRATCH --unpack installs both into a scratch root (a
#    real dpkg database there: status, file lists, conffiles, md5sums);
#    --unpack stops before the postinst, which would run dkms on the host;
#  - the postinst's dkms steps by hand (packaging/dkms-scratch-build: dkms
#    add + dkms build with --sourcetree/--dkmstree in the scratch root)
#    against the headers of the default and lts kernels of scripts/kernels
#    (a counted skip for one not installed); the .ko's vermagic and DKMS signature are checked and
#    the modules are copied to build/dkms/KVER/fairq.ko (the dkms-vm suite
#    loads the 6.1 one in the VM).  No module is loaded on the host.
# Ends with "N passed, N failed[, N skipped]".
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
out="$top/build/deb"
scratch=$(mktemp -d /tmp/fairq-deb.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
. "$top/tests/lib.sh"

version=$(cat "$top/VERSION")
debversion=$(dpkg-parsechangelog -l "$top/packaging/changelog" -S Version)
dkms_deb="$out/fairq-dkms_${debversion}_all.deb"
tools_deb="$out/fairq-tools_${debversion}_amd64.deb"
src="usr/src/fairq-$version"

# --- build -------------------------------------------------------------------
rm -f "$dkms_deb" "$tools_deb"
if "$top/packaging/build-deb" "$out" >"$scratch/build.log" 2>&1 &&
   [ -f "$dkms_deb" ] && [ -f "$tools_deb" ]; then
	ok "build-deb: $(basename "$dkms_deb") $(basename "$tools_deb")"
else
	cat "$scratch/build.log"
	fatal "build-deb"
fi

field() { dpkg-deb -f "$1" "$2"; }
listing() { dpkg-deb -c "$1" | awk '{ print $1, $6 }' | sed 's| \./| |'; }

# --- fairq-dkms: control -------------------------------------------------------
check "fairq-dkms: Architecture all, Version $debversion" \
	test "$(field "$dkms_deb" Architecture) $(field "$dkms_deb" Version)" = "all $debversion"
check "fairq-dkms: Depends on dkms" grep -q '^dkms' <(field "$dkms_deb" Depends)
mkdir -p "$scratch/ctl-dkms" "$scratch/ctl-tools"
dpkg-deb -e "$dkms_deb" "$scratch/ctl-dkms"
dpkg-deb -e "$tools_deb" "$scratch/ctl-tools"
check "fairq-dkms: postinst: common.postinst fairq $version on configure" \
	grep -qx "VERSION=$version" "$scratch/ctl-dkms/postinst"
check "fairq-dkms: postinst calls dkms's common.postinst" \
	grep -q '^[[:space:]]*/usr/lib/dkms/common.postinst "\$NAME" "\$VERSION"' "$scratch/ctl-dkms/postinst"
check "fairq-dkms: prerm: dkms remove --all" \
	grep -q 'dkms remove -m "\$NAME" -v "\$VERSION" --all' "$scratch/ctl-dkms/prerm"
for s in "$scratch"/ctl-dkms/{postinst,prerm} "$scratch"/ctl-tools/{postinst,prerm,postrm}; do
	check "$(basename "$(dirname "$s")")/$(basename "$s"): executable, sh -n" \
		sh -c 'test -x "$1" && sh -n "$1"' sh "$s"
done
check "fairq-dkms: no conffiles" test ! -e "$scratch/ctl-dkms/conffiles"

# --- fairq-dkms: contents -------------------------------------------------------
listing "$dkms_deb" >"$scratch/dkms.list"
want="$src/Kbuild $src/Makefile $src/dkms.conf usr/share/doc/fairq-dkms/copyright
usr/share/doc/fairq-dkms/changelog.Debian.gz"
for f in "$top"/drivers/*.[ch] "$top"/sched/*.[ch]; do
	want="$want $src/${f#"$top"/}"
done
missing=""
for f in $want; do
	grep -q -- "^-rw-r--r-- $f\$" "$scratch/dkms.list" || missing="$missing $f"
done
check "fairq-dkms: $(echo "$want" | wc -w) files, mode 0644 (every drivers/ and sched/ source)${missing:+; missing:$missing}" \
	test -z "$missing"
check "fairq-dkms: no sched/tests, sched/sim, host Makefile" \
	sh -c '! grep -qE "sched/(tests|sim|Makefile)" "$1"' sh "$scratch/dkms.list"
check "fairq-dkms: owned by root/root" \
	sh -c '! dpkg-deb -c "$1" | awk "{print \$2}" | grep -qv "^root/root$"' sh "$dkms_deb"

# --- fairq-tools: control ------------------------------------------------------
deps=$(field "$tools_deb" Depends)
check "fairq-tools: Architecture amd64" test "$(field "$tools_deb" Architecture)" = amd64
check "fairq-tools: Depends libc6 and libaio1 ($deps)" \
	sh -c 'echo "$1" | grep -q "libc6 (>= " && echo "$1" | grep -q "libaio1"' sh "$deps"
check "fairq-tools: conffiles = /etc/fairq/fairqtab" \
	test "$(cat "$scratch/ctl-tools/conffiles")" = /etc/fairq/fairqtab
check "fairq-tools: postinst enables fairq.service and fairq-weights.service (deb-systemd-helper)" \
	sh -c 'grep -q "for unit in fairq.service fairq-weights.service; do" "$1" &&
	       grep -q "deb-systemd-helper enable \"\$unit\"" "$1"' sh "$scratch/ctl-tools/postinst"
check "fairq-tools: postinst (re)starts fairq-weights.service, not fairq.service" \
	sh -c 'grep -q "deb-systemd-invoke restart fairq-weights.service" "$1" &&
	       ! grep -q "deb-systemd-invoke [a-z-]* fairq.service" "$1"' sh "$scratch/ctl-tools/postinst"
check "fairq-tools: prerm stops fairq-weights.service, then fairq.service" \
	test "$(grep -o 'deb-systemd-invoke stop [a-z.-]*' "$scratch/ctl-tools/prerm" | tr '\n' ,)" = \
	"deb-systemd-invoke stop fairq-weights.service,deb-systemd-invoke stop fairq.service,"

# --- fairq-tools: contents ------------------------------------------------------
listing "$tools_deb" >"$scratch/tools.list"
want="-rwxr-xr-x:usr/sbin/fairqctl -rwxr-xr-x:usr/sbin/fairq-nbd
-rw-r--r--:lib/systemd/system/fairq.service -rw-r--r--:lib/systemd/system/fairq-weights.service
-rw-r--r--:usr/share/bash-completion/completions/fairqctl -rw-r--r--:etc/fairq/fairqtab
-rw-r--r--:usr/share/doc/fairq-tools/copyright
-rw-r--r--:usr/share/doc/fairq-tools/changelog.Debian.gz"
for m in "$top"/man/*.[0-9]; do
	[ -f "$m" ] && want="$want -rw-r--r--:usr/share/man/man${m##*.}/$(basename "$m").gz"
done
missing=""
for f in $want; do
	grep -q -- "^${f%%:*} ${f#*:}\$" "$scratch/tools.list" || missing="$missing $f"
done
check "fairq-tools: $(echo "$want" | wc -w) files with their modes (binaries, units, completion, conffile, every man page)${missing:+; missing:$missing}" \
	test -z "$missing"

# --- lintian -------------------------------------------------------------------
if command -v lintian >/dev/null; then
	lintian -I --pedantic "$dkms_deb" "$tools_deb" >"$scratch/lintian.log" 2>/dev/null
	tags=$(grep -E '^[EWIXP]: ' "$scratch/lintian.log")
	if [ -z "$tags" ]; then
		ok "lintian -I --pedantic: no tag that is not overridden"
	else
		fail "lintian:"
		printf '%s\n' "$tags" | sed 's/^/    /'
	fi
else
	fail "lintian is not installed (scripts/install-deps)"
fi

# --- install into a scratch root --------------------------------------------
root="$scratch/root"
admin="$root/var/lib/dpkg"
mkdir -p "$admin/info" "$admin/updates"
: >"$admin/status"
: >"$admin/available"
if dpkg --root="$root" --log=/dev/null --unpack "$dkms_deb" "$tools_deb" >"$scratch/dpkg.log" 2>&1; then
	ok "dpkg --root --unpack: both packages"
else
	cat "$scratch/dpkg.log"
	fatal "dpkg --root --unpack"
fi
q() { dpkg-query --admindir="$admin" "$@"; }
check "dpkg database: both 'install ok unpacked' at $debversion" \
	test "$(q -W -f '${Package} ${Version} ${Status}\n' | sort | tr '\n' ,)" = \
	"fairq-dkms $debversion install ok unpacked,fairq-tools $debversion install ok unpacked,"
check "dpkg database: /etc/fairq/fairqtab registered as a conffile" \
	grep -Eq '^ /etc/fairq/fairqtab ([0-9a-f]{32}|newconffile)$' <(q -W -f '${Conffiles}\n' fairq-tools)
check "dpkg --verify: every installed file matches its md5sum" \
	dpkg --root="$root" --verify fairq-dkms fairq-tools
check "dpkg -L fairq-tools lists /usr/sbin/fairqctl" \
	grep -qx /usr/sbin/fairqctl <(dpkg --root="$root" -L fairq-tools)
# an unpacked, not yet configured conffile waits as .dpkg-new
tab="$root/etc/fairq/fairqtab.dpkg-new"
check "fairqtab: unpacked as fairqtab.dpkg-new (configure puts it in place)" test -f "$tab"
check "fairqtab: comments and blank lines only" \
	sh -c 'test -s "$1" && ! grep -qv "^\(#.*\)\?$" "$1"' sh "$tab"
# the units as systemd reads them: their commands exist in the scratch
# root, their Documentation= pages are installed there; the targets a unit
# with default dependencies is ordered against (sysinit.target, ...) come
# from the host, the scratch root having no systemd of its own
cp -n /lib/systemd/system/*.target "$root/lib/systemd/system/" 2>/dev/null
for unit in /lib/systemd/system/fairq.service /lib/systemd/system/fairq-weights.service; do
	MANPATH="$root/usr/share/man" systemd-analyze --root="$root" verify "$unit" >"$scratch/verify.log" 2>&1
	if [ -s "$scratch/verify.log" ]; then
		fail "systemd-analyze verify $unit:"
		sed 's/^/    /' "$scratch/verify.log"
	else
		ok "systemd-analyze verify $unit: clean"
	fi
done
unit=/lib/systemd/system/fairq.service
check "fairq.service: oneshot, RemainAfterExit, DefaultDependencies=no, Before=local-fs.target" \
	sh -c 'grep -qx Type=oneshot "$1" && grep -qx RemainAfterExit=yes "$1" &&
	       grep -qx DefaultDependencies=no "$1" && grep -q "^Before=local-fs.target" "$1"' sh "$root$unit"
# the unit's own commands, run by the packaged fairqctl on the installed
# fairqtab against an empty configfs stand-in: nothing to do, exit 0
mkdir -p "$scratch/configfs"
for cmd in "$(sed -n 's/^ExecStart=//p' "$root$unit")" "$(sed -n 's/^ExecStop=//p' "$root$unit")"; do
	# shellcheck disable=SC2086
	set -- $cmd
	o=$(FAIRQ_CONFIGFS="$scratch/configfs" FAIRQTAB="$tab" "$root$1" "${@:2}" 2>&1)
	rc=$?
	check "fairq.service: '$cmd' on the installed fairqtab: exit $rc, '$o'" \
		sh -c '[ "$1" = 0 ] && echo "$2" | grep -q "nothing to do"' sh "$rc" "$o"
done
# fairq-weights.service: after fairq.service, wanted by multi-user.target,
# its state directory kept across restarts; its ExecStart on the packaged
# fairqctl without the module (an absent configfs stand-in) waits, and
# ends with exit 0 on SIGTERM
wunit=$root/lib/systemd/system/fairq-weights.service
check "fairq-weights.service: After=fairq.service, WantedBy=multi-user.target, RuntimeDirectoryPreserve=yes" \
	sh -c 'grep -q "^After=fairq.service" "$1" && grep -qx WantedBy=multi-user.target "$1" &&
	       grep -qx RuntimeDirectory=fairq "$1" && grep -qx RuntimeDirectoryPreserve=yes "$1"' sh "$wunit"
cmd=$(sed -n 's/^ExecStart=//p' "$wunit")
# shellcheck disable=SC2086
set -- $cmd
FAIRQ_CONFIGFS="$scratch/no-configfs" FAIRQ_RUNDIR="$scratch/run" \
	timeout --preserve-status -s TERM 1 "$root$1" "${@:2}" >"$scratch/follow.out" 2>&1
rc=$?
check "fairq-weights.service: '$cmd' without the module: runs until SIGTERM, exit $rc, '$(cat "$scratch/follow.out")'" \
	sh -c '[ "$1" = 0 ] && [ ! -s "$2" ]' sh "$rc" "$scratch/follow.out"
# the bash completion: packaging's file, and it completes fairqctl
comp=$root/usr/share/bash-completion/completions/fairqctl
check "bash completion: packaging/fairqctl.bash-completion, bash -n" \
	sh -c 'cmp -s "$1" "$2" && bash -n "$2"' sh "$top/packaging/fairqctl.bash-completion" "$comp"
check "bash completion: sourced, it completes fairqctl (commands)" \
	test "$(bash -c '. "$1"; complete -p fairqctl; COMP_WORDS=(fairqctl w); COMP_CWORD=1; _fairqctl; echo "${COMPREPLY[*]}"' sh "$comp")" = \
	"complete -F _fairqctl fairqctl
weights"
check "packaged fairqctl --version says $version" \
	grep -q "$version" <("$root/usr/sbin/fairqctl" --version)
check "packaged fairq-nbd --version says $version" \
	grep -q "^fairq-nbd $version " <("$root/usr/sbin/fairq-nbd" --version)
for b in fairqctl fairq-nbd; do
	check "$b: stripped, PIE, BIND_NOW, GNU_RELRO (dpkg-buildflags hardening=+all)" \
		sh -c 'readelf -h "$1" | grep -q "Type:.*DYN" && readelf -d "$1" | grep -q "FLAGS_1.*NOW.*PIE" &&
		       readelf -lW "$1" | grep -q GNU_RELRO && ! readelf -S "$1" | grep -q "\.debug_info"' sh "$root/usr/sbin/$b"
done
for m in "$top"/man/*.[0-9]; do
	[ -f "$m" ] || continue
	check "$(basename "$m").gz is man/$(basename "$m")" \
		cmp -s "$m" <(gzip -dc "$root/usr/share/man/man${m##*.}/$(basename "$m").gz")
done
check "dkms.conf: PACKAGE_VERSION=\"$version\", no placeholder left" \
	sh -c 'grep -qx "PACKAGE_VERSION=\"$2\"" "$1" && ! grep -q "#MODULE_VERSION#" "$1"' sh \
	"$root/$src/dkms.conf" "$version"
ndiff=0
for f in Kbuild drivers/*.[ch] sched/*.[ch]; do
	cmp -s "$top/$f" "$root/$src/$f" || ndiff=$((ndiff + 1))
done
check "/$src: Kbuild and sources equal the tree's" test "$ndiff" = 0

# BUILD_EXCLUSIVE_KERNEL: the kernels drivers/fairq_compat.h builds for;
# every kernel of scripts/kernels (its series, and the installed version)
# must be one of them
excl=$(bash -c '. "$1"; echo "$BUILD_EXCLUSIVE_KERNEL"' sh "$root/$src/dkms.conf")
want_yes="6.4.16 6.11.0-1 6.19.1 7.0.0"
while read -r role; do
	want_yes="$want_yes $("$top/scripts/debian-kver" --series "$role").0-1-amd64"
	want_yes="$want_yes $("$top/scripts/debian-kver" "$role" 2>/dev/null)"
done < <(awk '!/^#/ && NF { print $1 }' "$top/scripts/kernels")
bad=""
for k in $want_yes; do
	[[ $k =~ $excl ]] || bad="$bad $k(no)"
done
for k in 6.0.19 6.5.0 6.6.0-1-amd64 6.10.14 5.10.0-30-amd64; do
	[[ $k =~ $excl ]] && bad="$bad $k(yes)"
done
check "dkms.conf: BUILD_EXCLUSIVE_KERNEL takes 6.1-6.4, 6.11+ and every kernel of scripts/kernels, nothing else${bad:+; wrong:$bad}" test -z "$bad"

# BUILD_EXCLUSIVE_ARCH: dkms matches it against uname -m; the 64-bit
# machines take the module, the 32-bit ones are skipped
excl=$(bash -c '. "$1"; echo "$BUILD_EXCLUSIVE_ARCH"' sh "$root/$src/dkms.conf")
bad=""
for m in x86_64 aarch64 ppc64le s390x riscv64 loongarch64; do
	[[ $m =~ $excl ]] || bad="$bad $m(no)"
done
for m in i686 i586 armv7l armv6l mips ppc x86; do
	[[ $m =~ $excl ]] && bad="$bad $m(yes)"
done
check "dkms.conf: BUILD_EXCLUSIVE_ARCH takes the 64-bit machines, no 32-bit one${bad:+; wrong:$bad}" \
	test -n "$excl" -a -z "$bad"

# --- dkms build, as the postinst has dkms do, in the scratch root ----------------
# the default and lts kernels of scripts/kernels
kvers=""
for role in default lts; do
	if k=$("$top/scripts/debian-kver" "$role" 2>/dev/null); then
		kvers="$kvers $k"
	else
		skip "dkms build for $role: $("$top/scripts/debian-kver" --meta "$role") is not installed (make deps)"
	fi
done
# host_dkms: what /var/lib/dkms holds
host_dkms() {
	find /var/lib/dkms -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort | tr '\n' ' '
}
host_dkms_before=$(host_dkms)
for kver in $kvers; do
	if [ ! -d "/lib/modules/$kver/build" ]; then
		skip "$kver: no headers in /lib/modules/$kver/build"
		continue
	fi
	start=$(date +%s)
	if ko=$("$top/packaging/dkms-scratch-build" "$dkms_deb" "$kver" "$scratch" 2>"$scratch/dkms-$kver.err"); then
		ok "dkms build -k $kver ($(($(date +%s) - start)) s)"
	else
		fail "dkms build -k $kver"
		tail -n 40 "$scratch/dkms-$kver.err"
		continue
	fi
	dest="$top/build/dkms/$kver"
	mkdir -p "$dest"
	case "$ko" in
	*.xz) xz -dc "$ko" >"$dest/fairq.ko" ;;
	*.zst) zstd -q -dc "$ko" >"$dest/fairq.ko" ;;
	*.gz) gzip -dc "$ko" >"$dest/fairq.ko" ;;
	*) cp "$ko" "$dest/fairq.ko" ;;
	esac
	vm=$(modinfo -F vermagic "$dest/fairq.ko" 2>/dev/null)
	check "$kver: vermagic '$vm' starts with '$kver '" test "${vm%% *}" = "$kver"
	check "$kver: modinfo name fairq, license GPL" \
		test "$(modinfo -F name "$dest/fairq.ko") $(modinfo -F license "$dest/fairq.ko")" = "fairq GPL"
	signer=$(modinfo -F signer "$dest/fairq.ko" 2>/dev/null)
	check "$kver: signed by DKMS's key ('$signer')" test "$signer" = "DKMS module signing key"
	check "$kver: dkms status says built" \
		grep -q "^fairq/$version, $kver, x86_64: built" <(dkms status -m fairq -v "$version" \
			--sourcetree="$root/usr/src" --dkmstree="$root/var/lib/dkms" 2>/dev/null)
	echo "     -> $dest/fairq.ko ($(stat -c %s "$dest/fairq.ko") bytes)"
done
check "host /var/lib/dkms unchanged (everything stayed in the scratch root)" \
	test "$(host_dkms)" = "$host_dkms_before"

summary
