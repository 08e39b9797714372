#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the guest's initramfs: busybox (static), our init and scenarios, the
# static C helpers under qemu/guest/, the benchmark's scenario and program
# (qemu/bench/) and the workspace's guest binaries (Rust, linked statically
# with +crt-static on the gnu target, not position-independent).
#
# usage: qemu/build-initramfs.sh [--out IMG] [EXTRA_DIR...]
#   every EXTRA_DIR is copied over the image root (tests add their binaries)
#   --out IMG: write the image there (default: the one qemu/run.sh boots,
#   $ANTINOMIE_CACHE/initramfs/initramfs.cpio)
# Prints the image path as its last line.
. "$(dirname "$0")/../scripts/lib.sh"

RUST_GUEST_BINS=(reader antinomie-workload antinomie-e2e antinomie-context)
RUST_TARGET=x86_64-unknown-linux-gnu

img=$ANTINOMIE_CACHE/initramfs/initramfs.cpio
if [ "${1:-}" = --out ]; then
	[ $# -ge 2 ] || die "--out needs a path"
	img=$2
	shift 2
fi
need_cmd gcc cargo cpio
[ -x /bin/busybox ] || die "/bin/busybox (busybox-static) is missing"
file_is_static() { ! LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'; }
file_is_static /bin/busybox || die "/bin/busybox is dynamically linked (install busybox-static)"

mkdir -p "$(dirname "$img")"
img=$(cd "$(dirname "$img")" && pwd)/$(basename "$img")
# The root is rebuilt from nothing: one command at a time per image.
hold_lock "image-$(printf '%s' "$img" | sha256sum | cut -c1-12)" "the guest image $img"
root=$img.root
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,root,scenarios}

stage "busybox and init"
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
install -m 0755 "$ANTINOMIE_ROOT/qemu/guest/init" "$root/init"
install -m 0755 "$ANTINOMIE_ROOT"/qemu/scenarios/* "$root/scenarios/"
install -m 0755 "$ANTINOMIE_ROOT/qemu/bench/scenario" "$root/scenarios/bench"
install -D -m 0644 "$ANTINOMIE_ROOT/qemu/guest/capture.sh" "$root/lib/antinomie/capture.sh"
# The corpus lists' helper scripts (qemu/corpus/*, the lists aside), on
# the guest's PATH, as the lists' command lines name them.
mkdir -p "$root/usr/local/bin"
for f in "$ANTINOMIE_ROOT"/qemu/corpus/*; do
	case "$f" in *.list) continue ;; esac
	[ -f "$f" ] || continue
	install -m 0755 "$f" "$root/usr/local/bin/$(basename "$f")"
done
mkdir -p "$root/etc/antinomie"
for f in "$ANTINOMIE_ROOT"/qemu/guest/expected/*; do
	install -m 0644 "$f" "$root/etc/antinomie/$(basename "$f").expected"
done
# 1000 and 1001: antinomie-context's unprivileged uid and the owner of
# "another user's task" (names only for ps and ls; the ids are what count).
printf '%s\n' root:x:0:0:root:/root:/bin/sh nobody:x:65534:65534:nobody:/:/bin/false \
	antinomie:x:1000:1000:antinomie:/tmp:/bin/sh other:x:1001:1001:other:/tmp:/bin/false >"$root/etc/passwd"
printf '%s\n' root:x:0: nobody:x:65534: antinomie:x:1000: other:x:1001: >"$root/etc/group"

stage "static C helpers (gcc -static)"
# qemu/bench/ also holds the TCG plugin, a host library: only
# antinomie-bench is the guest's.
for src in "$ANTINOMIE_ROOT"/qemu/guest/*.c "$ANTINOMIE_ROOT/qemu/bench/antinomie-bench.c"; do
	bin=$root/bin/$(basename "$src" .c)
	gcc -static -O2 -Wall -Wextra -Werror -o "$bin" "$src" ||
		die "gcc -static failed for $(basename "$src")"
done

stage "static Rust binaries (${RUST_GUEST_BINS[*]}, +crt-static, not PIE)"
bin_args=()
for b in "${RUST_GUEST_BINS[@]}"; do bin_args+=(--bin "$b"); done
# --target keeps RUSTFLAGS off build scripts and proc macros, which must
# stay dynamic host code. relocation-model=static: a static PIE loads at
# a new random address in every process, and QEMU's TCG keys its
# translated code by virtual address, so every run translates the whole
# program again. In the guest, reader --version takes 42 ms as a PIE and
# 11 ms as one that is not, and the PIE takes 11 ms too when the kernel
# does not randomize (norandmaps): the cost is the new address, not the
# PIE's relocation. The C helpers are not PIE either.
(cd "$ANTINOMIE_ROOT" && RUSTFLAGS="-C target-feature=+crt-static -C relocation-model=static" \
	cargo build -q --release --locked --target "$RUST_TARGET" "${bin_args[@]}") ||
	die "cargo build of the guest binaries failed"
# Cargo put them in CARGO_TARGET_DIR when set (relative: to the root, where
# it ran).
target_dir=${CARGO_TARGET_DIR:-target}
[[ "$target_dir" = /* ]] || target_dir=$ANTINOMIE_ROOT/$target_dir
for b in "${RUST_GUEST_BINS[@]}"; do
	f=$target_dir/$RUST_TARGET/release/$b
	[ -f "$f" ] || die "cargo built no $f"
	file_is_static "$f" || die "$b is not statically linked"
	[ "$(LC_ALL=C readelf -h "$f" | awk '$1 == "Type:" { print $2 }')" = EXEC ] ||
		die "$b is position-independent (see relocation-model above)"
	install -m 0755 "$f" "$root/bin/$b"
done

for extra in "$@"; do
	[ -d "$extra" ] || die "extra directory $extra does not exist"
	cp -a "$extra"/. "$root"/
done

# Not compressed: the kernel takes a plain cpio archive whatever its RD_*
# options, and inflating a gzip one takes more than half of a TCG
# guest's boot (/init at 4.2 s with it, 1.9 s without). The larger
# archive costs guest memory only until it is unpacked.
stage "packing the initramfs"
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet -R 0:0) >"$img.tmp" ||
	die "cpio failed"
mv "$img.tmp" "$img"
info "$(du -h "$img" | cut -f1) $(find "$root" -type f | wc -l) files"
echo "$img"
