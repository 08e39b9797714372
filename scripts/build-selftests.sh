#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the kernel's own selftests that the guest runs, statically, from the
# pinned tree with the series applied (its kselftest Makefiles, against the
# uapi headers of that tree). Output: a directory to lay over the initramfs
# root, holding /opt/selftests/<suite>/<binaries>.
#
# The perf_events tests are linked with qemu/guest/witness/perf-witness.c
# (-Wl,--wrap=syscall), which logs each perf_event_open call they make when
# $ANTINOMIE_WITNESS is set: the independent count that a capture of the
# same run is compared with.
#
# usage: scripts/build-selftests.sh
# Prints the directory as its last line. A build of the same inputs (the
# pinned source, the series, the witness shim and this script) is reused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

# The kernel's perf_events selftests (run with capture off and on) and the
# series' own kselftest of the raw ABI.
SUITES=(perf_events antinomie)

need_cmd make gcc
resolve_source
ensure_base_git
sync_build_tree
out=$ANTINOMIE_CACHE/selftests
hdr=$out/usr
root=$out/root
stamp="$SRC_KEY $(series_stamp "$ANTINOMIE_ROOT/kernel-patch") $(cat "$ANTINOMIE_ROOT/qemu/guest/witness/perf-witness.c" "$0" | sha256sum | cut -d' ' -f1)"
if [ -d "$root" ] && [ "$(cat "$root.stamp" 2>/dev/null)" = "$stamp" ]; then
	info "selftests already built from these sources ($root)"
	echo "$root"
	exit 0
fi
rm -f "$root.stamp"

stage "uapi headers of the patched tree"
make -s -C "$BUILD_TREE" O="$out/headers-build" ARCH=x86_64 \
	INSTALL_HDR_PATH="$hdr" headers_install >"$out.log" 2>&1 ||
	die "make headers_install failed (see $out.log)"

stage "perf-witness shim"
witness=$out/perf-witness.o
gcc -O2 -Wall -Wextra -Werror -c -o "$witness" "$ANTINOMIE_ROOT/qemu/guest/witness/perf-witness.c" ||
	die "cannot compile qemu/guest/witness/perf-witness.c"

rm -rf "$root"
for suite in "${SUITES[@]}"; do
	stage "selftests/$suite (static)"
	dest=$root/opt/selftests/$suite
	mkdir -p "$dest"
	ldflags=-static
	[ "$suite" = perf_events ] && ldflags="-static -Wl,--wrap=syscall $witness"
	# CFLAGS/LDFLAGS from the environment: the suites' own Makefiles append
	# to them (a command-line value would replace their additions).
	CFLAGS="-static -O2" LDFLAGS="$ldflags" make -s -C "$BUILD_TREE/tools/testing/selftests/$suite" \
		OUTPUT="$dest" KHDR_INCLUDES="-isystem $hdr/include" >>"$out.log" 2>&1 ||
		die "building selftests/$suite failed (see $out.log)"
	rm -f "$dest"/*.o
	for f in "$dest"/*; do
		[ -x "$f" ] || continue
		! LC_ALL=C readelf -l "$f" 2>/dev/null | grep -q 'program interpreter' ||
			die "selftests/$suite/$(basename "$f") is not statically linked"
	done
	info "$(cd "$dest" && printf '%s ' *)"
done
echo "$stamp" >"$root.stamp"
echo "$root"
