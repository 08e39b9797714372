#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the BPF contender (qemu/bpf-contender/: the BPF program and its
# consumer antinomie-bpf, linked statically against libbpf for the guest)
# into a directory shaped like the guest image's root, for
# `qemu/build-initramfs.sh DIR`. Installs its own packages (clang for
# -target bpf, libbpf, bpftool for the skeleton): scripts/bench.sh and
# scripts/campaign.sh --bpf need them, the test command does not.
#
# usage: scripts/build-bpf-contender.sh [DIR]
#   DIR default $ANTINOMIE_CACHE/bpf-contender; the binary goes to
#   DIR/bin/antinomie-bpf. Prints DIR as its last line.
. "$(dirname "$0")/lib.sh"

out=${1:-$ANTINOMIE_CACHE/bpf-contender}
src=$ANTINOMIE_ROOT/qemu/bpf-contender
# bpftool: Debian's package of its own name (bookworm and later).
PACKAGES=(clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev gcc)

apt_install_missing "${PACKAGES[@]}"
# bpftool is in /usr/sbin, which a user's PATH may lack.
PATH=$PATH:/usr/sbin
need_cmd clang bpftool gcc

mkdir -p "$out/bin" "$out/build"
out=$(cd "$out" && pwd)
build=$out/build
stage "BPF program (clang -target bpf $(clang --version | sed -n 's/.*clang version \([^ ]*\).*/\1/p'))"
clang -O2 -g -target bpf -Wall -Werror -I"/usr/include/$(gcc -print-multiarch)" \
	-c "$src/contender.bpf.c" -o "$build/contender.bpf.o" || die "clang -target bpf failed"
stage "skeleton ($(bpftool version | head -n1))"
bpftool gen skeleton "$build/contender.bpf.o" name contender_bpf >"$build/contender.skel.h" ||
	die "bpftool gen skeleton failed"
stage "antinomie-bpf (gcc -static, libbpf $(dpkg-query -W -f='${Version}' libbpf-dev))"
gcc -static -O2 -Wall -Wextra -Werror -I"$build" -I"$src" -o "$out/bin/antinomie-bpf" \
	"$src/antinomie-bpf.c" -lbpf -lelf -lz || die "linking antinomie-bpf failed"
LC_ALL=C readelf -l "$out/bin/antinomie-bpf" | grep -q 'Requesting program interpreter' &&
	die "antinomie-bpf is not statically linked"
rm -rf "$build"
echo "$out"
