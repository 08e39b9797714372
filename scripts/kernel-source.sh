#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fetch, verify and unpack the pinned Linux source (docs/design.md: the
# pinned kernel and its source), once; print the pristine tree's path.
#
# Default: Debian's orig tarball of linux=6.12.94-1 from the trixie-security
# source archive, located through this machine's own apt configuration (a
# private apt state dir; the system's apt config is not edited), sha256
# checked against the pin.
# env: KERNEL_TARBALL=FILE   use this tarball (an upstream linux-6.12.94.tar.xz
#                            or the Debian orig); KERNEL_TARBALL_SHA256 checks it
#      KERNEL_SRC=DIR        use this unpacked tree as it is
#      ANTINOMIE_CACHE=DIR   cache root (default ~/.cache/antinomie)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

resolve_source
stage "pristine Linux $KERNEL_VERSION source ready"
echo "$SRC_DIR"
