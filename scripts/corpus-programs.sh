#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Lay the corpus's real programs into DIR, a directory shaped like the guest
# image's root (for `qemu/build-initramfs.sh DIR` or `scripts/run-in-guest.sh
# --add DIR`): the host distribution's perf (Debian's linux-perf, installed
# with apt through the machine's own apt configuration when it is missing),
# its shared libraries, what it loads at run time, and bash for perf test's
# bash scripts. (The helper scripts of qemu/corpus/ are in every image:
# qemu/build-initramfs.sh puts them on the guest's PATH.)
#
# usage: scripts/corpus-programs.sh DIR
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 DIR"
root=$1
need_cmd dpkg-query readelf

stage "the distribution's perf (linux-perf)"
apt_install_missing linux-perf
perf=/usr/bin/perf
# Some Debian releases ship /usr/bin/perf as a script that picks a
# versioned perf_X.Y for the running kernel; the guest runs another kernel,
# so the real binary must be named.
LC_ALL=C readelf -h "$perf" >/dev/null 2>&1 ||
	die "$perf is not an ELF binary (a version-picking wrapper?): this script expects linux-perf's real binary there"
info "$(dpkg-query -W -f='linux-perf ${Version}' linux-perf), $("$perf" --version)"
"$ANTINOMIE_ROOT/qemu/add-program.sh" "$root" "$perf" || die "cannot lay $perf into $root"

# What perf finds at run time rather than through ldd: its exec path
# (perf test's shell tests and attr tests, the dlfilters) and libtraceevent's
# plugins, which print tracepoints' fields. Both at the paths perf was built
# with, which are the package's.
for d in /usr/lib/perf-core /usr/lib/traceevent/plugins; do
	[ -d "$d" ] || die "$d is missing: not the linux-perf layout this script knows"
	mkdir -p "$root$d"
	cp -a "$d"/. "$root$d"/
done

# bash, at the path perf test's bash scripts name (#!/bin/bash): the image's
# shell is busybox's.
"$ANTINOMIE_ROOT/qemu/add-program.sh" "$root" bash || die "cannot lay bash into $root"
mkdir -p "$root/bin"
ln -sfn /usr/local/bin/bash "$root/bin/bash"

info "$(du -sh "$root" | cut -f1) in $root"
