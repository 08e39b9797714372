#!/usr/bin/env bash
# The main job: install what is needed, build the patched kernel and the
# guest image, and boot the guest under QEMU showing the capture at work:
# `reader --follow` decoding a workload's calls live (qemu/scenarios/demo).
#
# usage: scripts/demo.sh
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

scripts/install-deps.sh
scripts/build-kernel.sh normal
qemu/build-initramfs.sh
qemu/run.sh --scenario demo
stage "done; for a shell in the same guest: qemu/run.sh --interactive (README: \"An interactive guest\")"
