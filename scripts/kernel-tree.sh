#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Make the development tree: a git worktree of the pinned source with
# kernel-patch/series applied as commits. Edit and commit there, then run
# scripts/export-series.sh. The series in the repo is an export, never an
# edit surface.
#
# usage: scripts/kernel-tree.sh [--force]
#   --force   reset the tree to the repo's series even if it has local work
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

force=0
[ "${1:-}" = "--force" ] && force=1

resolve_source
ensure_base_git
tree=$ANTINOMIE_CACHE/pin/$SRC_KEY/edit
ensure_worktree "$tree" antinomie
# Measurements live in git notes (exported below each patch's "---"):
# keep them through rebase and amend.
git -C "$tree" config notes.rewriteRef refs/notes/commits

if [ "$(git -C "$tree" rev-list --count "$BASE_REF..HEAD")" -gt 0 ] && [ $force -eq 0 ]; then
	if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no)" ]; then
		die "$tree has uncommitted changes; commit and export them, or use --force"
	fi
	stage "edit tree already has commits on the base; leaving it (use --force to reset it to the repo's series)"
else
	stage "applying kernel-patch/series as commits"
	apply_series "$tree"
fi
stage "edit tree ready: $tree"
git -C "$tree" log --oneline "$BASE_REF..HEAD" | sed 's/^/    /'
