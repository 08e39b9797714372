# shellcheck shell=bash
# What the host needs, in one place: the Debian packages
# scripts/install-deps.sh installs, and every external command the scripts,
# the kernel build, the guest image and the tests call, with the package
# that provides it (scripts/check-deps.sh checks them all before a build).
# Source it; do not run it.

# shellcheck disable=SC2034 # used by the scripts that source this file
PACKAGES=(
	# kernel build
	build-essential bc bison flex libelf-dev libssl-dev cpio xz-utils ccache
	kmod perl python3
	# make headers_install (kernel selftests) copies with rsync
	rsync
	# checkpatch.pl runs scripts/spdxcheck.py
	python3-ply python3-git
	# guest
	qemu-system-x86 busybox-static
	# fetching the pinned source
	dpkg-dev ca-certificates
	# scripts/run-in-guest.sh lays host programs with their libraries
	libc-bin
	# scripts/bench.sh: QEMU's insn plugin (built against glib), strace in
	# the guest
	libglib2.0-dev pkg-config strace
)

# command:package
# shellcheck disable=SC2034
COMMANDS=(
	# the Rust workspace (installed by rustup, not apt)
	cargo:rustup rustc:rustup
	# kernel build and checks
	make:make gcc:gcc ld:binutils ccache:ccache flex:flex bison:bison bc:bc
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
)

# module:package for Debian's /usr/bin/python3 (checkpatch's spdxcheck.py)
# shellcheck disable=SC2034
PYTHON_MODULES=(ply:python3-ply git:python3-git)
