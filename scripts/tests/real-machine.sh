#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The parts of docs/real-machine.md that run here, as a kernel developer
# follows them:
#   1. scripts/build-deb.sh makes the patched kernel a Debian package
#      (linux-image-*, the capture configured in);
#   2. the package, unpacked into a guest image, boots and captures: its
#      /boot/vmlinuz runs the reader-run scenario (`reader -- COMMAND`,
#      `reader -p`) with the package's files in the image;
#   3. a test machine's configuration as the base (here the normal
#      kernel's) takes the capture's options (`machine` variant,
#      KCONFIG_BASE);
#   4. the reader the document copies to the machine is one static
#      binary: no program interpreter, no shared library;
#   5. the corpus on a machine: `scripts/regress.sh --bundle` writes the
#      bundle; a guest booted into the patched kernel plays the machine
#      and runs its `run-corpus` twice (chroot, mount namespace, as on a
#      machine); `scripts/regress.sh --compare` of the two results says
#      equal (0); a changed result without a rerun could not test (125),
#      with one confirming it, changed (1).
# Needs the normal kernel and the guest binaries (the test command makes
# them).
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../guest-lib.sh
. "$(dirname "$0")/../guest-lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

stage "[1] scripts/build-deb.sh: the kernel as a Debian package"
"$ANTINOMIE_ROOT/scripts/build-deb.sh" --out "$tmp/deb" >"$tmp/deb.log" 2>&1 ||
	die "[1] scripts/build-deb.sh failed: $(tail -n 3 "$tmp/deb.log")"
deb=$(tail -n 1 "$tmp/deb.log")
[ -f "$deb" ] || die "[1] scripts/build-deb.sh named no package: $(tail -n 3 "$tmp/deb.log")"
[[ "$(dpkg-deb -f "$deb" Package)" == linux-image-* ]] ||
	die "[1] $deb is not a linux-image package: $(dpkg-deb -f "$deb" Package)"
dpkg-deb -x "$deb" "$tmp/root" || die "[1] dpkg-deb -x $deb failed"
vmlinuz=$(find "$tmp/root/boot" -name 'vmlinuz-*' | head -n 1)
config=$(find "$tmp/root/boot" -name 'config-*' | head -n 1)
{ [ -n "$vmlinuz" ] && [ -n "$config" ]; } || die "[1] the package has no /boot/vmlinuz-* or /boot/config-*"
grep -qx 'CONFIG_ANTINOMIE=y' "$config" || die "[1] the package's $config has no CONFIG_ANTINOMIE=y"
info "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB; $(basename "$vmlinuz"), CONFIG_ANTINOMIE=y"

stage "[2] the package's kernel boots a guest image holding the package, and captures"
"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$tmp/image.cpio" "$tmp/root" >"$tmp/image.log" 2>&1 ||
	die "[2] building the guest image failed: $(tail -n 3 "$tmp/image.log")"
"$ANTINOMIE_ROOT/qemu/run.sh" --quiet --kernel "$vmlinuz" --initrd "$tmp/image.cpio" \
	--scenario reader-run --log "$tmp/console.log" ||
	die "[2] the package's kernel failed the reader-run scenario (see above)"
release=${vmlinuz##*/vmlinuz-}
grep -aqF "Linux version $release " "$tmp/console.log" ||
	die "[2] the guest did not boot the package's kernel ($release)"

stage "[3] a machine's configuration as the base: the capture's options stick"
normal_config=$(readlink -f "$ANTINOMIE_CACHE/kernels/normal")/.config
[ -f "$normal_config" ] || die "[3] no normal kernel configuration ($normal_config)"
KCONFIG_BASE=$normal_config "$ANTINOMIE_ROOT/scripts/build-kernel.sh" --config-only machine \
	>"$tmp/machine.log" 2>&1 || die "[3] the machine variant on a base failed: $(tail -n 3 "$tmp/machine.log")"
machine_config=$(sed -n 's/.*configuration OK: //p' "$tmp/machine.log")
for opt in CONFIG_ANTINOMIE=y 'CONFIG_LOCALVERSION="-antinomie"' CONFIG_VIRTIO_BLK=y; do
	grep -qx "$opt" "$machine_config" || die "[3] $machine_config lacks $opt (from the base or the fragments)"
done
info "base + antinomie cgroup machine: CONFIG_ANTINOMIE=y, LOCALVERSION -antinomie, the base's drivers kept"

stage "[4] the reader is one static binary"
reader=${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release/reader
[ -x "$reader" ] || die "[4] no $reader (qemu/build-initramfs.sh builds it)"
headers=$(readelf -lW "$reader") || die "[4] readelf cannot read $reader"
! grep -q 'INTERP' <<<"$headers" || die "[4] $reader has a program interpreter: it is not static"
! readelf -dW "$reader" | grep -q '(NEEDED)' || die "[4] $reader needs shared libraries"
info "$reader: static, $(du -k "$reader" | cut -f1) KiB"
stage "[5] the corpus from a bundle, run twice on a \"machine\" (a guest), compared"
# shellcheck disable=SC2016 # ${SEED} is the corpus list's, for regress.sh.
printf '%s\n' 'random all antinomie-workload random --seed ${SEED} --calls 300' >"$tmp/small.list"
"$ANTINOMIE_ROOT/scripts/regress.sh" --bundle "$tmp/bundle" --corpus "$tmp/small.list" \
	--contexts root,user-p2 --out "$tmp/bundle-out" >"$tmp/bundle.log" 2>&1 ||
	die "[5] regress.sh --bundle failed: $(tail -n 3 "$tmp/bundle.log")"
[ -x "$tmp/bundle/run-corpus" ] || die "[5] the bundle has no run-corpus"
# The "machine": the bundle at /bundle, and a scenario that runs it twice
# and hands both results back.
mkdir -p "$tmp/machine/scenarios"
cp -a "$tmp/bundle" "$tmp/machine/bundle"
cat >"$tmp/machine/scenarios/machine" <<'SCENARIO'
#!/bin/sh
capture_prog=machine
. /lib/antinomie/capture.sh
for r in a b; do
	/bundle/run-corpus /tmp/results/$r || exit 1
done
hand_back /tmp/results
SCENARIO
chmod +x "$tmp/machine/scenarios/machine"
"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$tmp/machine.cpio" "$tmp/machine" >"$tmp/machine-image.log" 2>&1 ||
	die "[5] building the machine's image failed: $(tail -n 3 "$tmp/machine-image.log")"
mkdir -p "$tmp/results"
guest_run_collect "$(readlink -f "$ANTINOMIE_CACHE/kernels/normal")/arch/x86/boot/bzImage" \
	"$tmp/machine.cpio" machine "$tmp/results" 900 2G 1G ""
# compare A B [ARGS...]: regress.sh --compare's exit status, its report in
# $tmp/report.
compare() {
	local rc=0
	rm -rf "$tmp/report"
	"$ANTINOMIE_ROOT/scripts/regress.sh" --compare "$@" --out "$tmp/report" >"$tmp/compare.log" 2>&1 || rc=$?
	return $rc
}
rc=0
compare "$tmp/results/a" "$tmp/results/b" || rc=$?
[ $rc -eq 0 ] || die "[5] regress.sh --compare of two runs on one kernel exited $rc, not 0: $(tail -n 5 "$tmp/compare.log")"
info "two runs on one kernel: $(head -n 1 "$tmp/report/summary.txt")"
# One program's result changed in B: without a rerun it could not test.
echo 3 >"$tmp/results/b/random/root/status"
rc=0
compare "$tmp/results/a" "$tmp/results/b" || rc=$?
[ $rc -eq 125 ] || die "[5] an unconfirmed difference exited $rc, not 125: $(tail -n 5 "$tmp/compare.log")"
grep -q 'not rerun' "$tmp/report/summary.txt" || die "[5] the report does not say the difference was not rerun"
rc=0
compare "$tmp/results/a" "$tmp/results/b" --rerun "$tmp/results/a" "$tmp/results/b" || rc=$?
[ $rc -eq 1 ] || die "[5] a difference a rerun confirms exited $rc, not 1: $(tail -n 5 "$tmp/compare.log")"
info "a changed result: 125 without a rerun, 1 with a rerun that confirms it"
stage "real-machine path passed"
