#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Install the host packages the build, the guest and the tests need. Safe to
# run again: it only calls apt-get when something is missing.
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	# kernel build
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils lz4 ccache
	kmod perl python3
	# make headers_install (kernel selftests) copies with rsync
	rsync
	# checkpatch.pl runs scripts/spdxcheck.py
	python3-ply python3-git
	# guest
	qemu-system-x86 busybox-static
	# fetching the pinned source
	dpkg-dev ca-certificates
	# the kernel as a Debian package (scripts/build-deb.sh): the tree's
	# debian/rules runs debhelper's dh_* commands under fakeroot
	debhelper fakeroot
	# scripts/run-in-guest.sh lays host programs with their libraries
	libc-bin
	# scripts/bench.sh: QEMU's insn plugin (built against glib), strace in
	# the guest
	libglib2.0-dev pkg-config strace
	# scripts/check-shell.sh
	shellcheck
	# scripts/tests/ci-formats.sh installs kcidb-io into a venv
	python3-venv
)

stage "checking ${#PACKAGES[@]} host packages"
apt_install_missing "${PACKAGES[@]}"

"$(dirname "$0")/check-deps.sh"
stage "host packages ready"
