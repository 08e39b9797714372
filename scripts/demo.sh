#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The main job: install what is needed, build the patched kernel and the
# guest image, and boot the guest under QEMU showing the capture at work:
# `reader -- COMMAND` decoding a workload's calls live (qemu/scenarios/demo).
#
# usage: scripts/demo.sh
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

scripts/install-deps.sh
scripts/build-kernel.sh normal
qemu/build-initramfs.sh
# The console shows the scenario, not the boot; KUnit and splats are
# still judged on the full log.
qemu/run.sh --scenario demo --console scenario
stage "done; where to go next:"
info "qemu/run.sh --interactive                      a shell in the same guest"
info "scripts/run-in-guest.sh --out DIR -- PROGRAM   any program under capture, its trace back on the host"
info "reader diff DIR1/trace.antinomie DIR2/trace.antinomie   what a kernel change did to its calls"
info "(docs/regression-testing.md)"
