#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Check that every external command the scripts, the kernel build, the guest
# and the tests call is on PATH, before anything is built: a missing one
# fails in one line naming the command and the Debian package that has it.
# The list (command:package) is COMMANDS in scripts/deps.sh; the packages
# are PACKAGES in scripts/install-deps.sh.
#
# usage: scripts/check-deps.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/deps.sh"

missing=()
for entry in "${COMMANDS[@]}"; do
	cmd=${entry%%:*} pkg=${entry#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing+=("'$cmd' (package $pkg)")
done
for entry in "${PYTHON_MODULES[@]}"; do
	mod=${entry%%:*} pkg=${entry#*:}
	# Debian's python3, the one check-series.sh runs spdxcheck.py with.
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $mod" 2>/dev/null ||
		missing+=("python3 module '$mod' (package $pkg)")
done
[ -x /bin/busybox ] && ! LC_ALL=C readelf -l /bin/busybox 2>/dev/null | grep -q 'program interpreter' ||
	missing+=("static '/bin/busybox' (package busybox-static)")
cargo clippy --version >/dev/null 2>&1 || missing+=("'cargo clippy' (rustup component add clippy)")
cargo fmt --version >/dev/null 2>&1 || missing+=("'cargo fmt' (rustup component add rustfmt)")
if [ ${#missing[@]} -gt 0 ]; then
	die "missing: ${missing[*]}; run scripts/install-deps.sh"
fi
stage "all ${#COMMANDS[@]} commands and ${#PYTHON_MODULES[@]} python modules present"
