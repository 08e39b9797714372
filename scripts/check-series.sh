#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Check kernel-patch/ the way CI does:
#  1. the series applies to the pin with git am, and re-exporting it gives
#     byte-identical patch files (the series is an export, never an edit),
#     and the cover letter beside it is written and matches it;
#  2. it applies with patch -p1 too (for quilt and plain-tarball users);
#  3. scripts/checkpatch.pl --strict is clean on every patch;
#  4. include/uapi/linux/antinomie.h in the series is abi/antinomie.h;
#  5. no configuration but x86-64 can select CONFIG_ANTINOMIE: with
#     PERF_EVENTS and MMU, merge_config + olddefconfig drop it on a 32-bit
#     one (ARCH=i386: its u64 positions need single 64-bit accesses) and on
#     a 64-bit one without syscall_get_nr()/syscall_get_arguments()
#     (ARCH=alpha, which has D-cache-safe mappings to check too);
#  6. every test patch (scripts/tests/regression/*.patch and changes/)
#     applies on the series, so a series change that moves their context
#     fails here, not after two kernel builds in the regression step.
# env: ANTINOMIE_PATCH_DIR  check another series directory (tests use it)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

pdir=${ANTINOMIE_PATCH_DIR:-$ANTINOMIE_ROOT/kernel-patch}
[ -f "$pdir/BASE" ] || die "$pdir/BASE is missing"
grep -q "$KERNEL_VERSION" "$pdir/BASE" || die "$pdir/BASE does not name Linux $KERNEL_VERSION"
resolve_source
ensure_base_git
load_series "$pdir"

tmp=$(mktemp -d)
# The configuration checks that run beside checkpatch (below), while they do.
refusing_pids=()
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	stop_process_trees "${refusing_pids[@]}"
	wait
	rm -rf "$tmp"
	git --git-dir="$BASE_GIT" worktree prune
}
trap cleanup EXIT

if [ -z "${ANTINOMIE_PATCH_DIR:-}" ]; then
	# The build tree is exactly base + this series, applied with git am.
	stage "git am: the build tree holds the series"
	sync_build_tree
	tree=$BUILD_TREE
else
	# First in an index of the pin, with no checkout of its 80 000 files:
	# a series that does not apply stops here in a second, naming its
	# patch and the hunk that fails (whitespace as am_patch takes it).
	stage "git apply --cached: applying ${#patches[@]} patch(es) to an index of the pin"
	GIT_INDEX_FILE=$tmp/index git --git-dir="$BASE_GIT" read-tree "$BASE_REF" ||
		die "cannot read $BASE_REF into an index"
	for p in "${patches[@]}"; do
		GIT_INDEX_FILE=$tmp/index git --git-dir="$BASE_GIT" apply --cached --whitespace=nowarn "$p" 2>"$tmp/apply.log" ||
			die "patch $(basename "$p") does not apply to Linux $KERNEL_VERSION: $(grep -m1 '^error:' "$tmp/apply.log" || head -n1 "$tmp/apply.log")"
	done
	stage "git am: applying ${#patches[@]} patch(es) to a scratch tree"
	tree=$tmp/tree
	scratch_worktree "$tree"
	apply_series "$tree" "$pdir"
fi

stage "re-exporting and comparing byte for byte"
mkdir "$tmp/export"
export_patches "$tree" "$tmp/export"
(cd "$tmp/export" && ls -- *.patch) >"$tmp/export/series"
diff -u "$pdir/series" "$tmp/export/series" >&2 ||
	die "series file differs from the export (see the diff above)"
for p in "${patches[@]}"; do
	cmp -s "$p" "$tmp/export/$(basename "$p")" || {
		diff -u "$p" "$tmp/export/$(basename "$p")" | head -n 40 >&2
		die "$(basename "$p") is not what git format-patch exports: regenerate it with scripts/export-series.sh"
	}
done

stage "cover letter: written, and its shortlog and diffstat those of the series"
cover=$pdir/$COVER_LETTER
[ -f "$cover" ] || die "$COVER_LETTER is missing (scripts/export-series.sh writes one to fill in)"
! grep -q -e '\*\*\* SUBJECT HERE \*\*\*' -e '\*\*\* BLURB HERE \*\*\*' "$cover" ||
	die "$COVER_LETTER still has format-patch's placeholders: write its subject and text"
! grep -qx "$COVER_LETTER" "$pdir/series" ||
	die "series lists $COVER_LETTER: git am and quilt would apply it"
export_cover_letter "$tree" "$tmp/export/$COVER_LETTER" "$cover"
cmp -s "$cover" "$tmp/export/$COVER_LETTER" || {
	diff -u "$cover" "$tmp/export/$COVER_LETTER" | head -n 40 >&2
	die "$COVER_LETTER does not match the series: regenerate it with scripts/export-series.sh"
}

stage "patch -p1: applying to a copy of the files the series touches"
plain=$tmp/plain
mkdir "$plain"
sed -n 's|^--- a/||p' "${patches[@]}" | sort -u | while read -r f; do
	if [ -f "$SRC_DIR/$f" ]; then
		mkdir -p "$plain/$(dirname "$f")"
		cp "$SRC_DIR/$f" "$plain/$f"
	fi
done
for p in "${patches[@]}"; do
	(cd "$plain" && patch -p1 -s --batch --forward --no-backup-if-mismatch <"$p") >"$tmp/patch.log" 2>&1 ||
		die "$(basename "$p") does not apply with patch -p1: $(head -n1 "$tmp/patch.log")"
done

if [ -z "${ANTINOMIE_PATCH_DIR:-}" ]; then
	stage "test patches: each applies on the series"
	for p in "$ANTINOMIE_ROOT"/scripts/tests/regression/*.patch "$ANTINOMIE_ROOT"/scripts/tests/regression/changes/*.patch; do
		git -C "$tree" apply --check "$p" 2>"$tmp/apply.log" ||
			die "test patch ${p#"$ANTINOMIE_ROOT"/} does not apply on the series: $(grep -m1 '^error:' "$tmp/apply.log" | sed 's/^error: //'); regenerate it against the series"
	done
fi

# refuses_antinomie ARCH SYMBOL...: a tinyconfig of ARCH with PERF_EVENTS
# and kconfig/antinomie.config merged has every SYMBOL=y (else the check
# would prove nothing) and no CONFIG_ANTINOMIE.
refuses_antinomie() {
	local arch=$1 dir=$tmp/$1 want
	shift
	stage "ARCH=$arch: CONFIG_ANTINOMIE cannot be selected"
	mkdir "$dir"
	make -C "$tree" -s O="$dir" ARCH="$arch" tinyconfig >"$dir.log" 2>&1 ||
		die "make ARCH=$arch tinyconfig failed: $(tail -n1 "$dir.log")"
	(cd "$tree" && ARCH=$arch scripts/kconfig/merge_config.sh -m -O "$dir" "$dir/.config" \
		"$tmp/perf.config" "$ANTINOMIE_ROOT/kconfig/antinomie.config") >>"$dir.log" 2>&1 ||
		die "merge_config.sh for ARCH=$arch failed: $(tail -n1 "$dir.log")"
	make -C "$tree" -s O="$dir" ARCH="$arch" olddefconfig >>"$dir.log" 2>&1 ||
		die "make ARCH=$arch olddefconfig failed: $(tail -n1 "$dir.log")"
	for want in "$@" CONFIG_PERF_EVENTS CONFIG_MMU; do
		grep -qx "$want=y" "$dir/.config" ||
			die "the ARCH=$arch configuration lacks $want=y; the CONFIG_ANTINOMIE check would prove nothing"
	done
	if grep -q '^CONFIG_ANTINOMIE' "$dir/.config"; then
		die "an ARCH=$arch configuration selects $(grep '^CONFIG_ANTINOMIE' "$dir/.config" | tr '\n' ' ')(init/Kconfig must depend on X86_64)"
	fi
}
# Each configuration is a single-threaded make, as checkpatch is a
# single-threaded perl: both run beside it, their output shown after it.
printf 'CONFIG_PERF_EVENTS=y\n' >"$tmp/perf.config"
# ARCH SYMBOL...: each architecture checked, and what its configuration
# must have for the check to prove anything.
refusing=("i386 CONFIG_X86_32" "alpha CONFIG_ALPHA CONFIG_64BIT")
for arch_symbols in "${refusing[@]}"; do
	read -r -a args <<<"$arch_symbols"
	refuses_antinomie "${args[@]}" >"$tmp/refuses-${args[0]}.log" 2>&1 &
	refusing_pids+=($!)
done

stage "checkpatch.pl --strict"
# Two patches at a time, each checkpatch's output and status to its own
# files, reported in the series' order. spdxcheck.py needs Debian's
# python3 (python3-ply, python3-git), not whatever python3 comes first on
# PATH.
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's.
for i in "${!patches[@]}"; do printf '%s\0%s\0' "$i" "${patches[$i]}"; done |
	(cd "$tree" && PATH=/usr/bin:/bin:$PATH xargs -0 -P 2 -n 2 sh -c \
		'perl scripts/checkpatch.pl --strict --quiet --no-summary --show-types "$2" >"$0/cp-$1.log" 2>&1; echo $? >"$0/cp-$1.rc"' "$tmp") ||
	true # a patch with no status is reported below
bad=0
for i in "${!patches[@]}"; do
	p=${patches[$i]}
	if [ "$(cat "$tmp/cp-$i.rc" 2>/dev/null)" != 0 ]; then
		cat "$tmp/cp-$i.log" >&2
		echo "error: check-series: checkpatch --strict: $(basename "$p") has problems (above)" >&2
		bad=1
	elif [ -s "$tmp/cp-$i.log" ]; then
		cat "$tmp/cp-$i.log" >&2
		echo "error: check-series: checkpatch --strict: $(basename "$p") is not clean (above)" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] || exit 1

stage "uapi header matches abi/antinomie.h"
cmp -s "$ANTINOMIE_ROOT/abi/antinomie.h" "$tree/include/uapi/linux/antinomie.h" ||
	die "include/uapi/linux/antinomie.h in the series differs from abi/antinomie.h"
arches=()
for i in "${!refusing[@]}"; do
	arches+=("${refusing[$i]%% *}")
	rc=0
	wait "${refusing_pids[$i]}" || rc=$?
	unset 'refusing_pids[i]'
	cat "$tmp/refuses-${arches[$i]}.log"
	[ "$rc" -eq 0 ] || exit 1
done
stage "series OK: ${#patches[@]} patch(es), export byte-identical, test patches apply, checkpatch --strict clean, no CONFIG_ANTINOMIE on $(IFS=/ && echo "${arches[*]}")"
