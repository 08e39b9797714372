#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Show, from the built kernel itself, that perf_event_open() with capture off
# pays a NOP at each hook site: each of the static keys antinomie_capture_key
# (the syscall's choice of the captured path) and antinomie_rings_key (the
# sites in the body, live while rings exist) must have a jump-label site
# inside the syscall, and the
# instruction at every site of either must be a NOP (the kernel patches it
# into a jump only while its key is on).
#
# usage: scripts/show-nop-path.sh [VMLINUX]   (default: the 'normal' build)
# Reads the jump table (__start___jump_table..__stop___jump_table; struct
# jump_entry: s32 code, s32 target, long key, each relative to its own
# address), prints every site of both keys with the disassembly around it,
# and fails if one is missing or not a NOP.
. "$(dirname "$0")/lib.sh"

vmlinux=${1:-$ANTINOMIE_CACHE/kernels/normal/vmlinux}
[ -f "$vmlinux" ] || die "no vmlinux at $vmlinux (run scripts/build-kernel.sh)"
need_cmd readelf nm objdump python3
stage "jump-label sites of the capture's static keys in $(basename "$(dirname "$vmlinux")")"
python3 "$ANTINOMIE_ROOT/scripts/show-nop-path.py" "$vmlinux" || exit 1
stage "perf_event_open() pays a NOP at each hook site while capture is off"
