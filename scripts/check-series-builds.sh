#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every prefix of the series builds: apply kernel-patch/series one patch at
# a time to a scratch tree and, after each, compile what the series touches
# (kernel/events/, which holds core.c and the capture; init/ for Kconfig)
# with the normal kernel's configuration, and fail on an error or a compiler
# warning, naming the patch. A commit that builds only with a later one (a
# declaration, a Makefile line or a header moved to the wrong patch) breaks
# git bisect for everyone; building the whole series cannot show it.
#
# usage: scripts/check-series-builds.sh   (after scripts/build-kernel.sh normal)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

config=$ANTINOMIE_CACHE/kernels/normal/.config
[ -f "$config" ] || die "no normal kernel configuration at $config (run scripts/build-kernel.sh normal)"
need_cmd make gcc ccache flex bison bc perl
resolve_source
ensure_base_git
load_series "$ANTINOMIE_ROOT/kernel-patch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; git --git-dir="$BASE_GIT" worktree prune' EXIT
tree=$tmp/tree obj=$tmp/obj
scratch_worktree "$tree"
mkdir -p "$obj"
cp "$config" "$obj/.config"
n=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	name=$(basename "$p")
	am_patch "$tree" "$p"
	log=$tmp/build-$n.log
	if ! make -s -C "$tree" O="$obj" CC="ccache gcc" olddefconfig >"$log" 2>&1 ||
		! make -C "$tree" O="$obj" CC="ccache gcc" -j"$(nproc)" kernel/events/ init/ >>"$log" 2>&1; then
		grep -E -m 10 'error|Error' "$log" >&2 || tail -n 20 "$log" >&2
		die "the series up to $name does not build (kernel/events/, init/)"
	fi
	if grep -E ': warning: ' "$log" >"$tmp/warnings"; then
		cat "$tmp/warnings" >&2
		die "the series up to $name builds with warnings (above)"
	fi
	info "$name: kernel/events/ and init/ build, no warning"
done
stage "each of the ${#patches[@]} patches builds on the ones before it"
