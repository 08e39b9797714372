#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build QEMU's instruction-counting TCG plugin (tests/plugin/insn.c) for the
# INSTALLED qemu-system-x86_64: the source is the Debian source package of
# exactly the installed version, fetched with apt-get source through a
# private apt state dir whose deb-src entries are derived from the machine's
# own apt configuration (as scripts/kernel-lib.sh fetches the kernel).
# A plugin must be built against the qemu-plugin.h of the QEMU that loads it.
#
# Beside it, libinsn-profile.so from the repo's qemu/bench/insn-profile.c
# (instructions per guest address, for qemu/bench/insn-profile.py).
#
# usage: qemu/bench/build-insn-plugin.sh
# Prints the path of libinsn.so as its last line. Use it as
#   qemu-system-x86_64 ... -plugin PATH,inline=on -d plugin -D FILE
# FILE then ends with "insns: N", the guest instructions executed by all
# vCPUs from reset to exit.
. "$(dirname "$0")/../../scripts/lib.sh"

need_cmd qemu-system-x86_64 dpkg-query apt-get dpkg-source gcc pkg-config
pkg-config --exists glib-2.0 || die "glib-2.0 development files not found (run scripts/install-deps.sh)"

# The installed QEMU's source package and version (binNMU suffix dropped:
# the source of 1:7.2+dfsg-7+deb12u18+b3 is 1:7.2+dfsg-7+deb12u18).
src_info=$(dpkg-query -W -f='${source:Package} ${source:Version}' qemu-system-x86 2>/dev/null) ||
	die "qemu-system-x86 is not installed as a Debian package (run scripts/install-deps.sh)"
read -r src_pkg src_ver <<<"$src_info"
[ -n "$src_ver" ] || die "cannot tell the source version of qemu-system-x86"
qemu_ver=$(qemu-system-x86_64 --version | sed -n '1s/.*version \([0-9][0-9.]*\).*/\1/p')
# Debian's 7.2.x stable releases keep the upstream version 7.2 in the
# package's: compare major.minor.
qemu_mm=$(cut -d. -f1,2 <<<"$qemu_ver")
case "${src_ver#*:}" in
"$qemu_mm"*) ;;
*) die "qemu-system-x86_64 is $qemu_ver but its package's source is $src_pkg $src_ver" ;;
esac

key=$(printf '%s' "$src_pkg-$src_ver" | tr ':~' '__')
work=$ANTINOMIE_CACHE/qemu-plugin/$key
so=$work/libinsn.so
profile_src=$ANTINOMIE_ROOT/qemu/bench/insn-profile.c
profile_so=$work/libinsn-profile.so

# build_plugin OUT SOURCE: one plugin against the installed QEMU's header.
build_plugin() {
	# shellcheck disable=SC2046 # pkg-config prints several words on purpose.
	gcc -shared -fPIC -O2 -Wall -o "$1.tmp" "$2" \
		-I"$work/src/include/qemu" $(pkg-config --cflags glib-2.0) $(pkg-config --libs glib-2.0) ||
		die "gcc failed to build $2"
	mv "$1.tmp" "$1"
}

if [ -f "$so" ]; then
	stage "insn plugin for $src_pkg $src_ver already built"
	if [ ! "$profile_so" -nt "$profile_src" ]; then
		stage "building libinsn-profile.so from qemu/bench/insn-profile.c"
		build_plugin "$profile_so" "$profile_src"
	fi
	echo "$so"
	exit 0
fi

# debian_src_lines: one deb-src line per URI and suite of the Debian
# archives in the apt configuration (deb822 .sources and one-line .list);
# third-party repositories are left out (most publish no sources).
debian_src_lines() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			function flush() {
				if (deb && uris != "" && suites != "")
					for (i = 1; i <= nu; i++)
						if (u[i] ~ /\/debian(-security)?\/?$/)
							for (j = 1; j <= ns; j++)
								print "deb-src " u[i] " " s[j] " main"
				deb = 0; uris = ""; suites = ""; nu = 0; ns = 0
			}
			/^[[:space:]]*$/ { flush(); next }
			/^Types:/ { deb = ($0 ~ /[[:space:]]deb([[:space:]]|$)/) }
			/^URIs:/ { uris = $0; nu = 0; for (i = 2; i <= NF; i++) u[++nu] = $i }
			/^Suites:/ { suites = $0; ns = 0; for (i = 2; i <= NF; i++) s[++ns] = $i }
			END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
			if ($i ~ /\/debian(-security)?\/?$/) print "deb-src " $i " " $(i + 1) " main"
		}' "$f"
	done
}

mkdir -p "$work"
if [ ! -f "$work/src/tests/plugin/insn.c" ]; then
	sources=$(debian_src_lines | sort -u)
	[ -n "$sources" ] || die "no Debian archive in the apt configuration (/etc/apt) to fetch $src_pkg's source from"
	stage "fetching the source of $src_pkg=$src_ver ($(wc -l <<<"$sources") deb-src entries from /etc/apt)"
	rm -rf "$work/dl" "$work/src"
	: >"$work/apt.log"
	apt_source_download "$ANTINOMIE_CACHE/apt-qemu" "$work/dl" "$work/apt.log" "$src_pkg=$src_ver" <<<"$sources"
	dsc=$(find "$work/dl" -maxdepth 1 -name '*.dsc' | head -n1)
	[ -n "$dsc" ] || die "apt-get source $src_pkg=$src_ver produced no .dsc"
	stage "unpacking $(basename "$dsc") with the Debian patches applied"
	# apt-get source has checked the files against the archive's signed index.
	dpkg-source --no-check -x "$dsc" "$work/src.tmp" >>"$work/apt.log" 2>&1 ||
		die "dpkg-source -x $(basename "$dsc") failed (see $work/apt.log)"
	[ -f "$work/src.tmp/tests/plugin/insn.c" ] || die "$src_pkg $src_ver has no tests/plugin/insn.c"
	# Only the plugin and its header are needed: keep those (300 MB less).
	mkdir -p "$work/src/tests" "$work/src/include"
	mv "$work/src.tmp/tests/plugin" "$work/src/tests/plugin"
	mv "$work/src.tmp/include/qemu" "$work/src/include/qemu"
	rm -rf "$work/src.tmp"
	rm -rf "$work/dl"
fi

stage "building libinsn.so and libinsn-profile.so (gcc, glib-2.0 from pkg-config)"
build_plugin "$profile_so" "$profile_src"
build_plugin "$so" "$work/src/tests/plugin/insn.c"
echo "$so"
