#!/usr/bin/env bash
# Build the patched kernel for the QEMU guest, out of tree, with ccache.
#
# usage: scripts/build-kernel.sh [--config-only] [VARIANT]
#   VARIANT from kconfig/variants (default: normal); --config-only stops
#   after the configuration has been made and checked.
# env:   KCONFIG_EXTRA=FILE   one more fragment, merged last (experiments,
#                             a changed kernel: its own directory and link,
#                             VARIANT+extra)
#   ANTINOMIE_TREE=DIR   build DIR as it is (e.g. the edit tree, with
#                             uncommitted edits) instead of base + series
#        KERNEL_TEST_PATCH=FILE[:FILE...]   changes for a test, never
#                             shipped (e.g. scripts/tests/regression/*.patch):
#                             applied in order on top of the series only
#                             while this build runs; the kernel is
#                             VARIANT+NAME (NAME: the files' names without
#                             .patch, joined by +); a patch that does not
#                             apply fails the build naming its file and hunk
#        KERNEL_SRC, KERNEL_TARBALL   see scripts/kernel-source.sh
# Prints the bzImage path as its last line; $ANTINOMIE_CACHE/kernels/VARIANT
# then points at the build directory (bzImage under arch/x86/boot/, vmlinux,
# .config), so that qemu/run.sh --variant VARIANT boots the last build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

config_only=0
if [ "${1:-}" = "--config-only" ]; then
	config_only=1
	shift
fi
variant=${1:-normal}
frags=$(sed -n "s/^$variant:[[:space:]]*//p" "$ANTINOMIE_ROOT/kconfig/variants")
[ -n "$frags" ] || die "unknown kernel variant '$variant' (see kconfig/variants)"

need_cmd make gcc ccache flex bison bc perl
resolve_source
ensure_base_git
if [ -n "${ANTINOMIE_TREE:-}" ]; then
	tree=$(cd "$ANTINOMIE_TREE" && pwd) || die "ANTINOMIE_TREE=$ANTINOMIE_TREE does not exist"
	out=$ANTINOMIE_CACHE/out/tree-$(printf '%s' "$tree" | sha256sum | cut -c1-12)-$variant
else
	sync_build_tree
	tree=$BUILD_TREE
	out=$ANTINOMIE_CACHE/out/$SRC_KEY-$variant
fi
link=$variant
# A kernel with an extra fragment is not the variant: it has its own
# directory and link, so that --variant VARIANT still boots the variant.
if [ -n "${KCONFIG_EXTRA:-}" ]; then
	out=$out-extra
	link=$variant+extra
fi
if [ -n "${KERNEL_TEST_PATCH:-}" ]; then
	[ -z "${ANTINOMIE_TREE:-}" ] || die "KERNEL_TEST_PATCH and ANTINOMIE_TREE cannot be combined"
	test_patches=() names=() applied=()
	IFS=: read -r -a patch_args <<<"$KERNEL_TEST_PATCH"
	for p in "${patch_args[@]}"; do
		[ -f "$p" ] || die "KERNEL_TEST_PATCH: $p does not exist"
		test_patches+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")")
		names+=("$(basename "$p" .patch)")
	done
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
	name=$(IFS=+ && echo "${names[*]}")
	out=$out-$name
	link=$variant+$name
fi
mkdir -p "$out" "$CCACHE_DIR"
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# Fixed build identity: the same source gives the same objects (ccache hits,
# comparable images across machines).
export KBUILD_BUILD_USER=antinomie KBUILD_BUILD_HOST=qemu \
	KBUILD_BUILD_TIMESTAMP="$KERNEL_VERSION" KBUILD_BUILD_VERSION=1
kmake() {
	make -C "$tree" O="$out" ARCH=x86_64 CC="ccache gcc" HOSTCC="ccache gcc" "$@"
}

files=()
for f in $frags; do
	[ -f "$ANTINOMIE_ROOT/kconfig/$f.config" ] || die "kconfig/$f.config is missing"
	files+=("$ANTINOMIE_ROOT/kconfig/$f.config")
done
if [ -n "${KCONFIG_EXTRA:-}" ]; then
	[ -f "$KCONFIG_EXTRA" ] || die "KCONFIG_EXTRA=$KCONFIG_EXTRA does not exist"
	files+=("$(cd "$(dirname "$KCONFIG_EXTRA")" && pwd)/$(basename "$KCONFIG_EXTRA")")
fi
# Reconfigure only when an input changed: the fragments, the tree's commit,
# or uncommitted edits to its Kconfig files.
config_stamp=$({
	cat "${files[@]}"
	git -C "$tree" rev-parse HEAD
	git -C "$tree" diff HEAD -- ':(glob)**/Kconfig*'
} | sha256sum | cut -d' ' -f1)
if [ -f "$out/.config" ] && [ "$(cat "$out/.antinomie-config-stamp" 2>/dev/null)" = "$config_stamp" ]; then
	stage "configuration of '$variant' unchanged"
else
	stage "configuring '$variant' (tinyconfig + $frags)"
	rm -f "$out/.antinomie-config-stamp"
	kmake -s tinyconfig >"$out/config.log" 2>&1 || die "make tinyconfig failed (see $out/config.log)"
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${files[@]}" \
		>>"$out/config.log" 2>&1 || die "merge_config.sh failed (see $out/config.log)"
	kmake -s olddefconfig >>"$out/config.log" 2>&1 || die "make olddefconfig failed (see $out/config.log)"
fi

# merge_config.sh only warns when a requested value is dropped (unmet
# dependency, unknown symbol): make that fatal.
bad=0
for f in "${files[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) sym=${line%%=*} want=${line#*=} ;;
		"# CONFIG_"*" is not set") sym=${line#\# } sym=${sym%% *} want=n ;;
		*) continue ;;
		esac
		got=$(grep -E "^$sym=|^# $sym is not set" "$out/.config" | head -n1 || true)
		case "$got" in
		"$sym="*) got=${got#*=} ;;
		*) got=n ;;
		esac
		if [ "$want" != "$got" ]; then
			printf 'error: %s: kernel option %s=%s requested by kconfig/%s did not stick (.config has %s)\n' \
				"$ANTINOMIE_PROG" "$sym" "$want" "$(basename "$f")" "$got" >&2
			bad=1
		fi
	done < <(sed -e 's/[[:space:]]*$//' "$f")
done
[ $bad -eq 0 ] || exit 1
echo "$config_stamp" >"$out/.antinomie-config-stamp"
if [ $config_only -eq 1 ]; then
	stage "configuration OK: $out/.config"
	exit 0
fi

stage "building bzImage in $out (-j$(nproc), ccache)"
kmake -j"$(nproc)" bzImage >"$out/build.log" 2>&1 &
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
mkdir -p "$ANTINOMIE_CACHE/kernels"
ln -sfn "$out" "$ANTINOMIE_CACHE/kernels/$link"
stage "built $link kernel"
echo "$out/arch/x86/boot/bzImage"
