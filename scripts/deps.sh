# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Every external command the scripts, the kernel build, the guest image and
# the tests call, with the Debian package that provides it (one of
# PACKAGES in scripts/install-deps.sh, or the toolchain's); check-deps.sh
# checks them all before a build. Source it; do not run it.

# command:package
# shellcheck disable=SC2034
COMMANDS=(
	# the Rust workspace (installed by rustup, not apt)
	cargo:rustup rustc:rustup
	# kernel build and checks
	make:make gcc:gcc ld:binutils ccache:ccache flex:flex bison:bison bc:bc lz4:lz4
	perl:perl python3:python3 rsync:rsync depmod:kmod
	readelf:binutils objdump:binutils nm:binutils
	git:git patch:patch diff:diffutils cmp:diffutils
	# fetching and unpacking the pinned source
	apt-get:apt dpkg-source:dpkg-dev dpkg-query:dpkg xz:xz-utils tar:tar
	# the guest image and its runs
	qemu-system-x86_64:qemu-system-x86 cpio:cpio gzip:gzip ldd:libc-bin
	timeout:coreutils sha256sum:coreutils truncate:coreutils base64:coreutils
	awk:mawk sed:sed grep:grep find:findutils xargs:findutils
	# scripts/bench.sh
	pkg-config:pkg-config strace:strace
	# scripts/check-shell.sh
	shellcheck:shellcheck
)

# module:package for Debian's /usr/bin/python3 (checkpatch's spdxcheck.py)
# shellcheck disable=SC2034
PYTHON_MODULES=(ply:python3-ply git:python3-git)
