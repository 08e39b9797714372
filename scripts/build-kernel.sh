#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build the patched kernel for the QEMU guest, out of tree, with ccache.
#
# usage: scripts/build-kernel.sh [--config-only | --deb DIR] [VARIANT]
#   VARIANT from kconfig/variants (default: normal); --config-only stops
#   after the configuration has been made and checked; --deb DIR also
#   packages the kernel with the tree's `make bindeb-pkg` (in the same
#   build directory: packaging adds only the package) and puts the
#   linux-image package into DIR (scripts/build-deb.sh).
# env:   KCONFIG_EXTRA=FILE   one more fragment, merged last (experiments,
#                             a changed kernel: its own directory and link,
#                             VARIANT+extra; it starts from a copy of
#                             VARIANT's last build, as a test patch's does)
#        KCONFIG_BASE=FILE    a whole configuration instead of tinyconfig
#                             under the variant's fragments (a test
#                             machine's /boot/config-*: scripts/build-deb.sh);
#                             its own directory and link, VARIANT+base
#        ANTINOMIE_TREE=DIR   build DIR as it is (e.g. the edit tree, with
#                             uncommitted edits) instead of base + series
#        ANTINOMIE_BUILD_TREE_NAME=NAME   base + series in a tree of its
#                             own (pin/KEY/NAME) and build directories of
#                             its own: a build beside another in the
#                             default tree, neither waiting (scripts/lib.sh)
#        KERNEL_TEST_PATCH=FILE[:FILE...]   changes for a test, never
#                             shipped (e.g. scripts/tests/regression/*.patch):
#                             applied in order on top of the series only
#                             while this build runs; the kernel is
#                             VARIANT[+base][+extra]+NAME (NAME: the files' names without
#                             .patch, joined by +); a patch that does not
#                             apply fails the build naming its file and hunk
#        KERNEL_GCOV_OBJECTS=FILE   the objects gcov instruments when the
#                             configuration has CONFIG_GCOV_KERNEL, one a
#                             line (default: kconfig/coverage.objects); a
#                             list with none keeps gcov's kernel code and
#                             instruments nothing. Another list than the
#                             default is not the variant: its own directory
#                             and link, VARIANT[+base][+extra]+gcov-NAME
#                             (NAME: the file's name without .objects); a
#                             configuration without GCOV_KERNEL fails
#        KERNEL_SEED=VARIANT  when this variant has no complete build of
#                             its own, start from a copy of VARIANT's last
#                             complete build (the same tree), so that make
#                             compiles only what the two configurations'
#                             difference touches (the test command's off
#                             kernel: the normal one less the capture)
#        KERNEL_SRC, KERNEL_TARBALL   see scripts/kernel-source.sh
# Prints the bzImage path as its last line; $ANTINOMIE_CACHE/kernels/VARIANT
# then points at the build directory (bzImage under arch/x86/boot/, vmlinux,
# .config), so that qemu/run.sh --variant VARIANT boots the last build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

config_only=0 deb_dir=""
case "${1:-}" in
--config-only)
	config_only=1
	shift
	;;
--deb)
	[ $# -ge 2 ] || die "--deb needs a directory"
	mkdir -p "$2" || die "cannot make $2"
	deb_dir=$(cd "$2" && pwd)
	shift 2
	;;
esac
variant=${1:-normal}
frags=$(sed -n "s/^$variant:[[:space:]]*//p" "$ANTINOMIE_ROOT/kconfig/variants")
[ -n "$frags" ] || die "unknown kernel variant '$variant' (see kconfig/variants)"

need_cmd make gcc ccache flex bison bc perl
# Held to the end: the build tree (with a test patch in it while this
# builds), the build directory and the link are this build's alone.
hold_kernel_build_lock
resolve_source
ensure_base_git
if [ -n "${ANTINOMIE_TREE:-}" ]; then
	tree=$(cd "$ANTINOMIE_TREE" && pwd) || die "ANTINOMIE_TREE=$ANTINOMIE_TREE does not exist"
	out=$ANTINOMIE_CACHE/out/tree-$(printf '%s' "$tree" | sha256sum | cut -c1-12)-$variant
else
	sync_build_tree
	tree=$BUILD_TREE
	out=$ANTINOMIE_CACHE/out/$SRC_KEY-$variant
	[ "$ANTINOMIE_BUILD_TREE_NAME" = build ] || out=$ANTINOMIE_CACHE/out/$SRC_KEY-$ANTINOMIE_BUILD_TREE_NAME-$variant
fi
link=$variant
# A tree built as it is is not the variant either (a bisection step, an
# edit): qemu/run.sh --variant VARIANT+tree boots the last one.
[ -z "${ANTINOMIE_TREE:-}" ] || link=$variant+tree
if [ -n "${KCONFIG_BASE:-}" ]; then
	[ -f "$KCONFIG_BASE" ] || die "KCONFIG_BASE=$KCONFIG_BASE does not exist"
	out=$out-base
	link=$link+base
fi
# What an extra fragment or a test patch derives from.
variant_out=$out
# A kernel with an extra fragment is not the variant: it has its own
# directory and link, so that --variant VARIANT still boots the variant.
if [ -n "${KCONFIG_EXTRA:-}" ]; then
	out=$out-extra
	link=$link+extra
fi
# Nor is one whose gcov instruments other objects.
gcov_list=$ANTINOMIE_ROOT/kconfig/coverage.objects
if [ -n "${KERNEL_GCOV_OBJECTS:-}" ]; then
	[ -f "$KERNEL_GCOV_OBJECTS" ] || die "KERNEL_GCOV_OBJECTS=$KERNEL_GCOV_OBJECTS does not exist"
	if ! cmp -s "$KERNEL_GCOV_OBJECTS" "$gcov_list"; then
		gcov_list=$KERNEL_GCOV_OBJECTS
		gcov_name=gcov-$(basename "$gcov_list" .objects)
		out=$out-$gcov_name
		link=$link+$gcov_name
	fi
fi
[ -r "$gcov_list" ] || die "cannot read the gcov object list $gcov_list"
test_patches=()
if [ -n "${KERNEL_TEST_PATCH:-}" ]; then
	[ -z "${ANTINOMIE_TREE:-}" ] || die "KERNEL_TEST_PATCH and ANTINOMIE_TREE cannot be combined"
	names=() applied=()
	IFS=: read -r -a patch_args <<<"$KERNEL_TEST_PATCH"
	for p in "${patch_args[@]}"; do
		[ -f "$p" ] || die "KERNEL_TEST_PATCH: $p does not exist"
		test_patches+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")")
		names+=("$(basename "$p" .patch)")
	done
	name=$(IFS=+ && echo "${names[*]}")
	out=$out-$name
	link=$link+$name
fi
files=()
for f in $frags; do
	[ -f "$ANTINOMIE_ROOT/kconfig/$f.config" ] || die "kconfig/$f.config is missing"
	files+=("$ANTINOMIE_ROOT/kconfig/$f.config")
done
if [ -n "${KCONFIG_EXTRA:-}" ]; then
	[ -f "$KCONFIG_EXTRA" ] || die "KCONFIG_EXTRA=$KCONFIG_EXTRA does not exist"
	files+=("$(cd "$(dirname "$KCONFIG_EXTRA")" && pwd)/$(basename "$KCONFIG_EXTRA")")
fi
# What the kernel in $out is made of: the source as committed in the
# tree (sync_build_tree left no edit in it; an ANTINOMIE_TREE may have
# some, so it is always built), the configuration's inputs, the gcov
# list, the test patches, this script, the toolchain and the variables
# of the environment that kbuild reads. A build of the same as the last
# complete one in $out ends here: make would find nothing to do, after
# seconds of looking (a regression run asks for its baseline each time),
# and a derived kernel would be copied and linked again.
build_inputs=$({
	echo "$variant"
	git -C "$tree" rev-parse 'HEAD^{tree}' 2>/dev/null || echo "no commit"
	for f in "$ANTINOMIE_ROOT/scripts/build-kernel.sh" "$gcov_list" "${files[@]}" \
		${KCONFIG_BASE:+"$KCONFIG_BASE"} "${test_patches[@]}"; do
		sha256sum <"$f"
	done
	command -v gcc ld
	gcc --version | head -n 1
	ld --version | head -n 1
	env | grep -E '^(KCFLAGS|KCPPFLAGS|KAFLAGS|KRUSTFLAGS|KBUILD_[A-Z_]+|LOCALVERSION|CROSS_COMPILE|LLVM|MAKEFLAGS)=' | sort || true
} | sha256sum | cut -d' ' -f1)
if [ $config_only -eq 0 ] && [ -z "$deb_dir" ] && [ -z "${ANTINOMIE_TREE:-}" ] &&
	[ -f "$out/arch/x86/boot/bzImage" ] && [ "$(cat "$out/.antinomie-built" 2>/dev/null)" = "$build_inputs" ]; then
	mkdir -p "$ANTINOMIE_CACHE/kernels"
	ln -sfn "$out" "$ANTINOMIE_CACHE/kernels/$link"
	stage "$link kernel up to date: $out was built from the same inputs"
	echo "$out/arch/x86/boot/bzImage"
	exit 0
fi
if [ ${#test_patches[@]} -gt 0 ]; then
	# In the build tree itself, so that every other object is a ccache hit
	# (same paths, same flags); taken out again, last first, however the
	# build ends, and sync_build_tree would notice a leftover.
	unapply_test_patches() {
		local i
		for ((i = ${#applied[@]} - 1; i >= 0; i--)); do
			git -C "$tree" apply -R "${applied[i]}" ||
				echo "warning: could not take ${applied[i]} out of $tree" >&2
		done
	}
	trap unapply_test_patches EXIT
	for p in "${test_patches[@]}"; do
		# git apply names the file and the line of the hunk that fails
		# ("patch failed: kernel/events/core.c:12566").
		git -C "$tree" apply --check "$p" 2>"$ANTINOMIE_CACHE/test-patch.log" ||
			die "test patch $p does not apply on the series${applied[0]:+ and the test patches before it}: $(grep -m2 '^error:' "$ANTINOMIE_CACHE/test-patch.log" | sed 's/^error: //' | paste -sd';' -)"
		stage "applying test patch $(basename "$p") on top of the series (for this build only)"
		git -C "$tree" apply "$p" || die "applying test patch $p failed"
		applied+=("$p")
	done
fi
# A kernel derived from the variant (an extra fragment, another gcov
# object list, test patches) starts as a copy of the variant's last complete build, so that make
# compiles only what the derivation touches (the changed sources, the
# objects that read a changed configuration symbol or whose flags
# changed) and links: the whole kernel again, even as ccache hits, takes
# minutes. A fresh copy whenever the variant has a complete build, so
# that the kernel is that build and this derivation, never an earlier
# derivation's leftovers. KERNEL_SEED does the same for a variant of
# its own that has never been built, from another variant's build.
seed_out="" seed_name=""
if [ -n "${KERNEL_SEED:-}" ]; then
	grep -q "^$KERNEL_SEED:" "$ANTINOMIE_ROOT/kconfig/variants" ||
		die "KERNEL_SEED=$KERNEL_SEED is not a variant of kconfig/variants"
	# shellcheck disable=SC2015 # die exits
	[ -z "${ANTINOMIE_TREE:-}${KCONFIG_BASE:-}" ] && [ "$out" = "$variant_out" ] ||
		die "KERNEL_SEED is for a variant's own build: not with ANTINOMIE_TREE, KCONFIG_BASE, KCONFIG_EXTRA, KERNEL_TEST_PATCH or KERNEL_GCOV_OBJECTS"
	[ -f "$out/.antinomie-built" ] || seed_out=${out%-"$variant"}-$KERNEL_SEED seed_name=$KERNEL_SEED
elif [ "$out" != "$variant_out" ]; then
	seed_out=$variant_out seed_name=$variant
fi
seeded=""
if [ $config_only -eq 0 ] && [ -n "$seed_out" ] && [ -f "$seed_out/.antinomie-built" ]; then
	stage "starting from the '$seed_name' build in $seed_out"
	{ rm -rf "$out" && cp -a "$seed_out" "$out"; } || die "cannot copy $seed_out to $out"
	# The seed's images: never booted under this kernel's name, should
	# this build fail (make links them again).
	rm -f "$out/vmlinux" "$out/arch/x86/boot/bzImage"
	seeded=1
fi
mkdir -p "$out" "$CCACHE_DIR"
# Not a complete build from here on, but for a check of an unchanged
# configuration.
[ $config_only -eq 1 ] || rm -f "$out/.antinomie-built"
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# Fixed build identity: the same source gives the same objects (ccache hits,
# comparable images across machines).
export KBUILD_BUILD_USER=antinomie KBUILD_BUILD_HOST=qemu \
	KBUILD_BUILD_TIMESTAMP="$KERNEL_VERSION" KBUILD_BUILD_VERSION=1
# Host programs (fixdep, kconfig, objtool) out of ccache's depend mode:
# kbuild's -MMD leaves the system headers they include out of the list
# that mode hashes, and a libc6-dev upgrade would reuse stale objects.
kmake() {
	make -C "$tree" O="$out" ARCH=x86_64 CC="ccache gcc" HOSTCC="env -u CCACHE_DEPEND ccache gcc" "$@"
}

# Reconfigure only when an input changed: the fragments, the tree's commit,
# or uncommitted edits to its Kconfig files.
config_stamp=$({
	cat "${files[@]}" ${KCONFIG_BASE:+"$KCONFIG_BASE"}
	git -C "$tree" rev-parse HEAD
	git -C "$tree" diff HEAD -- ':(glob)**/Kconfig*'
} | sha256sum | cut -d' ' -f1)
if [ -f "$out/.config" ] && [ "$(cat "$out/.antinomie-config-stamp" 2>/dev/null)" = "$config_stamp" ]; then
	stage "configuration of '$variant' unchanged"
else
	rm -f "$out/.antinomie-config-stamp" "$out/.antinomie-built"
	if [ -n "${KCONFIG_BASE:-}" ]; then
		stage "configuring '$variant' ($KCONFIG_BASE + $frags)"
		cp "$KCONFIG_BASE" "$out/.config" || die "cannot copy $KCONFIG_BASE"
		: >"$out/config.log"
	else
		stage "configuring '$variant' (tinyconfig + $frags)"
		kmake -s tinyconfig >"$out/config.log" 2>&1 || die "make tinyconfig failed (see $out/config.log)"
	fi
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${files[@]}" \
		>>"$out/config.log" 2>&1 || die "merge_config.sh failed (see $out/config.log)"
	kmake -s olddefconfig >>"$out/config.log" 2>&1 || die "make olddefconfig failed (see $out/config.log)"
fi

# merge_config.sh only warns when a requested value is dropped (unmet
# dependency, unknown symbol): make that fatal. A later fragment's value
# of a symbol replaces an earlier one's, as merge_config.sh merges them
# (KCONFIG_EXTRA can turn off what a variant's fragment turns on).
declare -A wanted=() wanted_by=()
for f in "${files[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) sym=${line%%=*} want=${line#*=} ;;
		"# CONFIG_"*" is not set") sym=${line#\# } sym=${sym%% *} want=n ;;
		*) continue ;;
		esac
		wanted[$sym]=$want wanted_by[$sym]=$(basename "$f")
	done < <(sed -e 's/[[:space:]]*$//' "$f")
done
bad=0
for sym in "${!wanted[@]}"; do
	got=$(grep -E "^$sym=|^# $sym is not set" "$out/.config" | head -n1 || true)
	case "$got" in
	"$sym="*) got=${got#*=} ;;
	*) got=n ;;
	esac
	if [ "${wanted[$sym]}" != "$got" ]; then
		printf 'error: %s: kernel option %s=%s requested by kconfig/%s did not stick (.config has %s)\n' \
			"$ANTINOMIE_PROG" "$sym" "${wanted[$sym]}" "${wanted_by[$sym]}" "$got" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] || exit 1
echo "$config_stamp" >"$out/.antinomie-config-stamp"
if [ $config_only -eq 1 ]; then
	stage "configuration OK: $out/.config"
	exit 0
fi

# gcov for the objects $gcov_list lists (kconfig/coverage.objects unless
# KERNEL_GCOV_OBJECTS says otherwise), and no other, when the
# configuration has it: kbuild instruments an object whose
# GCOV_PROFILE_<name>.o is y, and names are not unique (core.o is in a
# dozen directories), so each variable is y only in the listed
# directories ($(obj), expanded by kbuild per directory).
gcov_args=() gcov_objects=()
if grep -q '^CONFIG_GCOV_KERNEL=y$' "$out/.config"; then
	mapfile -t gcov_objects < <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$gcov_list")
	declare -A gcov_dirs=()
	for o in "${gcov_objects[@]}"; do
		gcov_dirs[$(basename "$o")]+=" $(dirname "$o")"
	done
	for name in "${!gcov_dirs[@]}"; do
		gcov_args+=("GCOV_PROFILE_$name=\$(if \$(filter${gcov_dirs[$name]},\$(obj)),y)")
	done
elif [ -n "${gcov_name:-}" ]; then
	die "KERNEL_GCOV_OBJECTS=$KERNEL_GCOV_OBJECTS, but the '$variant' configuration has no CONFIG_GCOV_KERNEL"
fi

# objtool's build names its outputs by their absolute paths, so in a
# copy make builds objtool again, and kbuild makes every object depend on
# the objtool binary's time (gen_objtooldep): every object would be
# compiled again. Unless the test patches change objtool's sources, the
# new objtool is the seed's, built again: it takes the seed's objtool's
# time.
objtool=$seed_out/tools/objtool/objtool
if [ -n "$seeded" ] && [ -x "$objtool" ] &&
	! for p in "${test_patches[@]}"; do git apply --numstat "$p"; done | cut -f3 | grep -q '^tools/'; then
	touch "$out/.antinomie-objtool-stamp"
	kmake tools/objtool >"$out/objtool.log" 2>&1 || die "building objtool failed (see $out/objtool.log)"
	find "$out/tools/objtool" -newer "$out/.antinomie-objtool-stamp" -exec touch -h -r "$objtool" {} +
	rm -f "$out/.antinomie-objtool-stamp"
fi
gcov_note=""
if grep -q '^CONFIG_GCOV_KERNEL=y$' "$out/.config"; then
	gcov_note=", gcov for ${#gcov_objects[@]} objects"
fi
stage "building bzImage in $out (-j$(nproc), ccache$gcov_note)"
kmake -j"$(nproc)" "${gcov_args[@]}" bzImage >"$out/build.log" 2>&1 &
pid=$!
t0=$(date +%s) last=$t0
while kill -0 $pid 2>/dev/null; do
	sleep 2
	now=$(date +%s)
	if [ $((now - last)) -ge 60 ]; then
		info "still building: $(fmt_secs $((now - t0))), $(grep -c '^  CC ' "$out/build.log" || true) objects compiled"
		last=$now
	fi
done
if ! wait $pid; then
	grep -E 'error|Error' "$out/build.log" | head -n 20 >&2 || true
	die "kernel build failed (full log: $out/build.log)"
fi
info "ccache: $(ccache -s 2>/dev/null | grep -E -m1 'Hits:|cache hit \(direct\)' | tr -s ' ' || echo n/a)"
# What a coverage report needs of this build, kept beside it: each
# instrumented object's notes (.gcno) and its source as built (a test
# patch is taken out of the tree again when this script ends).
rm -rf "$out/coverage"
for o in "${gcov_objects[@]}"; do
	[ -f "$out/${o%.o}.gcno" ] || continue # not in this configuration
	if ! install -D -m 0644 "$out/${o%.o}.gcno" "$out/coverage/${o%.o}.gcno" ||
		! install -D -m 0644 "$tree/${o%.o}.c" "$out/coverage/${o%.o}.c"; then
		die "cannot keep the coverage notes of $o in $out/coverage"
	fi
done
echo "$build_inputs" >"$out/.antinomie-built"
mkdir -p "$ANTINOMIE_CACHE/kernels"
ln -sfn "$out" "$ANTINOMIE_CACHE/kernels/$link"
stage "built $link kernel"
if [ -n "$deb_dir" ]; then
	need_cmd dpkg-buildpackage dpkg-deb fakeroot
	# The packages land beside the build directory; the headers package
	# (for out-of-tree modules) is left out, as the capture needs none,
	# and with it the build dependencies of its host tools (-d).
	# KDEB_PKGVERSION's revision is the build's KBUILD_BUILD_VERSION, so
	# that packaging relinks nothing.
	stamp=$out/.antinomie-deb-stamp
	touch "$stamp"
	stage "packaging: make bindeb-pkg (linux-image only)"
	kmake -j"$(nproc)" "${gcov_args[@]}" KDEB_PKGVERSION="$KERNEL_VERSION-$KBUILD_BUILD_VERSION" \
		DPKG_FLAGS="-d -Ppkg.linux-upstream.nokernelheaders" bindeb-pkg \
		>"$out/deb.log" 2>&1 || die "make bindeb-pkg failed (see $out/deb.log)"
	deb=$(find "$(dirname "$out")" -maxdepth 1 -name 'linux-image-*.deb' -newer "$stamp" ! -name '*-dbg_*' | head -n 1)
	[ -n "$deb" ] || die "make bindeb-pkg made no linux-image package (see $out/deb.log)"
	mv "$deb" "$deb_dir/" || die "cannot move $deb to $deb_dir"
	find "$(dirname "$out")" -maxdepth 1 -newer "$stamp" \
		\( -name '*.deb' -o -name '*.buildinfo' -o -name '*.changes' \) -delete
	info "$(dpkg-deb -f "$deb_dir/$(basename "$deb")" Package Version | paste -sd' ')"
	echo "$deb_dir/$(basename "$deb")"
	exit 0
fi
echo "$out/arch/x86/boot/bzImage"
