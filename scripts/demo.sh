#!/usr/bin/env bash
# The main job: install what is needed, build the patched kernel and the
# guest image, and boot the guest under QEMU showing the capture at work.
#
# usage: scripts/demo.sh
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

scripts/install-deps.sh
scripts/build-kernel.sh normal
qemu/build-initramfs.sh
qemu/run.sh --scenario smoke
stage "done; for a shell in the same guest: qemu/run.sh --interactive"
