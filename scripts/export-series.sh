#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Export the commits of a kernel tree on top of the pinned base as
# kernel-patch/*.patch and kernel-patch/series (git format-patch, stable
# output: zero commit ids, no signature, no renames, fixed abbrev), and
# the cover letter kernel-patch/0000-cover-letter.patch beside the series
# (not in series: git am and quilt skip it). The cover letter's subject
# and text are written by hand and kept; its shortlog and diffstat are
# regenerated.
#
# usage: scripts/export-series.sh [TREE] [OUTDIR]
#   TREE defaults to the edit tree; OUTDIR to kernel-patch/.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

tree=${1:-}
outdir=${2:-$ANTINOMIE_ROOT/kernel-patch}
if [ -z "$tree" ]; then
	resolve_source
	tree=$ANTINOMIE_CACHE/pin/$SRC_KEY/edit
fi
[ -e "$tree/.git" ] || die "$tree is not a git tree (run scripts/kernel-tree.sh)"
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	die "$tree has uncommitted changes; commit them first"
n=$(git -C "$tree" rev-list --count "$BASE_REF..HEAD")
[ "$n" -gt 0 ] || die "$tree has no commits on top of the base"

stage "exporting $n commit(s) from $tree"
mkdir -p "$outdir"
# The cover letter's subject and text are kept; the rest is regenerated.
cover_text=$(mktemp)
trap 'rm -f "$cover_text"' EXIT
if [ -f "$outdir/$COVER_LETTER" ]; then
	cp "$outdir/$COVER_LETTER" "$cover_text"
else
	: >"$cover_text"
fi
rm -f "$outdir"/*.patch
export_patches "$tree" "$outdir"
find "$outdir" -maxdepth 1 -name '*.patch' -printf '%f\n' | LC_ALL=C sort | grep -vx "$COVER_LETTER" >"$outdir/series"
if [ -s "$cover_text" ]; then
	export_cover_letter "$tree" "$outdir/$COVER_LETTER" "$cover_text"
else
	export_cover_letter "$tree" "$outdir/$COVER_LETTER"
	info "wrote $COVER_LETTER with placeholders: write its subject and text"
fi
sed 's/^/    /' "$outdir/series"
echo "    ($COVER_LETTER beside it, not in series)"
