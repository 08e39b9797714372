#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The documents name the kernel series as it is: wherever a tracked
# Markdown file counts the series' patches ("thirteen patches against the
# pin", or in digits), the count is the number of lines of kernel-patch/series; every
# patch it names by number ("patch 0007", "patches 0009-0012") is in the
# series; every patch file it names (kernel-patch/0005-....patch, or the
# bare file name) exists. A patch added, dropped or renumbered without the
# documents fails here, with the file and line to fix.
#
# usage: scripts/check-doc-refs.sh [TREE]   (default: this repository)
. "$(dirname "$0")/lib.sh"
need_cmd git

tree=${1:-$ANTINOMIE_ROOT}
cd "$tree" || die "cannot enter $tree"
[ -f kernel-patch/series ] || die "no kernel-patch/series in $tree"

count=$(grep -c . kernel-patch/series)
words=(zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
	sixteen seventeen eighteen nineteen twenty)
in_series() { grep -q "^$1-" kernel-patch/series; }

bad=() checked=0
while IFS=: read -r file line text; do
	checked=$((checked + 1))
	lower=${text,,}
	# Counts of the series' patches.
	while [[ $lower =~ (^|[^a-z0-9-])([a-z]+|[0-9]+)\ patches\ against\ the\ pin(.*)$ ]]; do
		n=${BASH_REMATCH[2]} lower=${BASH_REMATCH[3]}
		[[ $n =~ ^[0-9]+$ ]] || for i in "${!words[@]}"; do [ "${words[$i]}" = "$n" ] && n=$i; done
		[ "$n" = "$count" ] || bad+=("$file:$line: says $n patches; kernel-patch/series lists $count")
	done
	# Patches named by number, alone or as a range.
	rest=$text
	while [[ $rest =~ [Pp]atch(es)?\ (00[0-9][0-9])([-–](00[0-9][0-9]))?(.*)$ ]]; do
		first=${BASH_REMATCH[2]} last=${BASH_REMATCH[4]:-${BASH_REMATCH[2]}} rest=${BASH_REMATCH[5]}
		for ((p = 10#$first; p <= 10#$last; p++)); do
			in_series "$(printf %04d "$p")" || bad+=("$file:$line: names patch $(printf %04d "$p"), not in kernel-patch/series")
		done
	done
	# Patch files named by file name.
	rest=$text
	while [[ $rest =~ (00[0-9][0-9]-[A-Za-z0-9-]+\.patch)(.*)$ ]]; do
		name=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
		[ -f "kernel-patch/$name" ] || bad+=("$file:$line: names $name, which kernel-patch/ does not hold")
	done
done < <(git grep -n -I -i -E 'patch(es)? 00[0-9][0-9]|00[0-9][0-9]-[a-z0-9-]+\.patch|patches against the pin' -- '*.md')

if [ ${#bad[@]} -gt 0 ]; then
	printf '%s\n' "${bad[@]}" >&2
	die "${#bad[@]} reference(s) to the kernel series in the documents are wrong"
fi
stage "documents: $checked line(s) naming the series' $count patches, each right"
