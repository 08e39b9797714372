#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The patched kernel as a Debian package, for a real test machine
# (docs/real-machine.md): scripts/build-kernel.sh --deb, on the machine's
# own configuration when one is given.
#
# usage: scripts/build-deb.sh [--config FILE] [--out DIR]
#   --config FILE  the test machine's configuration (its
#                  /boot/config-$(uname -r)): its drivers, with the
#                  capture's options on top (the `machine` variant of
#                  kconfig/variants); the distribution's signing keys,
#                  which this tree does not have, are left out. Without
#                  it: the `normal` variant, the QEMU guest's kernel
#   --out DIR      where the package goes (default: ./antinomie-deb)
# Prints the package's path as its last line.
. "$(dirname "$0")/lib.sh"

config="" out=./antinomie-deb
while [ $# -gt 0 ]; do
	case "$1" in
	--config) config=${2:?--config needs a file} && shift ;;
	--out) out=${2:?--out needs a directory} && shift ;;
	*) die "usage: scripts/build-deb.sh [--config FILE] [--out DIR]" ;;
	esac
	shift
done

if [ -z "$config" ]; then
	exec "$ANTINOMIE_ROOT/scripts/build-kernel.sh" --deb "$out" normal
fi
[ -f "$config" ] || die "--config $config: no such file"
base=$(mktemp "${TMPDIR:-/tmp}/antinomie-base.XXXXXX")
trap 'rm -f "$base"' EXIT
cp "$config" "$base"
# Debian's configuration names certificate files of its own build
# (debian/certs/...): a build of this tree without them stops at certs/.
sed -i -e 's/^CONFIG_SYSTEM_TRUSTED_KEYS=.*/CONFIG_SYSTEM_TRUSTED_KEYS=""/' \
	-e 's/^CONFIG_SYSTEM_REVOCATION_KEYS=.*/CONFIG_SYSTEM_REVOCATION_KEYS=""/' "$base"
KCONFIG_BASE=$base "$ANTINOMIE_ROOT/scripts/build-kernel.sh" --deb "$out" machine
