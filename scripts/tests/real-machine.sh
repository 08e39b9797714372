#!/usr/bin/env bash
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
#      binary: no program interpreter, no shared library.
# Needs the normal kernel and the guest binaries (the test command makes
# them).
. "$(dirname "$0")/../lib.sh"

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
[ -n "$vmlinuz" ] && [ -n "$config" ] || die "[1] the package has no /boot/vmlinuz-* or /boot/config-*"
grep -qx 'CONFIG_ANTINOMIE=y' "$config" || die "[1] the package's $config has no CONFIG_ANTINOMIE=y"
info "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB; $(basename "$vmlinuz"), CONFIG_ANTINOMIE=y"

stage "[2] the package's kernel boots a guest image holding the package, and captures"
"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$tmp/image.cpio.gz" "$tmp/root" >"$tmp/image.log" 2>&1 ||
	die "[2] building the guest image failed: $(tail -n 3 "$tmp/image.log")"
"$ANTINOMIE_ROOT/qemu/run.sh" --quiet --kernel "$vmlinuz" --initrd "$tmp/image.cpio.gz" \
	--scenario reader-run --log "$tmp/console.log" ||
	die "[2] the package's kernel failed the reader-run scenario (see above)"
grep -aq "^Linux version $(basename "$vmlinuz" | sed 's/^vmlinuz-//')" "$tmp/console.log" ||
	grep -aq "Linux version $(basename "$vmlinuz" | sed 's/^vmlinuz-//') " "$tmp/console.log" ||
	die "[2] the guest did not boot the package's kernel ($(basename "$vmlinuz"))"

stage "[3] a machine's configuration as the base: the capture's options stick"
normal_config=$(readlink -f "$ANTINOMIE_CACHE/kernels/normal")/.config
[ -f "$normal_config" ] || die "[3] no normal kernel configuration ($normal_config)"
KCONFIG_BASE=$normal_config "$ANTINOMIE_ROOT/scripts/build-kernel.sh" --config-only machine \
	>"$tmp/machine.log" 2>&1 || die "[3] the machine variant on a base failed: $(tail -n 3 "$tmp/machine.log")"
machine_config=$(readlink -f "$ANTINOMIE_CACHE/out")/$(sed -n 's|.*configuration OK: .*/out/\(.*\)/\.config$|\1|p' "$tmp/machine.log")/.config
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
stage "real-machine path passed"
