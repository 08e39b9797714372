#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The documents name the kernel series as it is. In every tracked Markdown
# file, on one line:
#  - a count of the series' patches, "N patches against the pin" (N in
#    digits or words), is the number of lines of kernel-patch/series;
#  - a patch named by its number, "patch 0007", "patches 0009-0012" (or
#    with an en dash), "patches 0001, 0004 and 0007", is in the series;
#  - a patch file named, 0005-....patch, is in kernel-patch/;
#  - a table whose rows start "| 00NN |" lists exactly the series' numbers.
# A patch added, dropped or renumbered without the documents fails here,
# with the file and line to fix. Numbers a line break splits from their
# "patch" are not seen.
#
# usage: scripts/check-doc-refs.sh [TREE]   (default: this repository)
. "$(dirname "$0")/lib.sh"
need_cmd git

tree=${1:-$ANTINOMIE_ROOT}
cd "$tree" || die "cannot enter $tree"
[ -f kernel-patch/series ] || die "no kernel-patch/series in $tree"

count=$(grep -c . kernel-patch/series)
series_numbers=$(cut -c1-4 kernel-patch/series | sort | paste -sd ' ')
words=(zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
	sixteen seventeen eighteen nineteen twenty)
number_words=$(
	IFS='|'
	echo "${words[*]}"
)
in_series() { grep -q "^$1-" kernel-patch/series; }
shopt -s nocasematch
dash='(-|–)'

bad=() checked=0
while IFS=: read -r file line text; do
	checked=$((checked + 1))
	# Counts of the series' patches.
	rest=$text
	while [[ $rest =~ (^|[^a-z0-9-])([0-9]+|$number_words)\ patches\ against\ the\ pin(.*)$ ]]; do
		n=${BASH_REMATCH[2],,} rest=${BASH_REMATCH[3]}
		for i in "${!words[@]}"; do [ "${words[$i]}" = "$n" ] && n=$i; done
		[ "$n" = "$count" ] || bad+=("$file:$line: says $n patches; kernel-patch/series lists $count")
	done
	# Patches named by number: one, a range, or a list.
	rest=$text
	while [[ $rest =~ patch(es)?\ (00[0-9][0-9])($dash(00[0-9][0-9]))?(.*)$ ]]; do
		first=${BASH_REMATCH[2]} last=${BASH_REMATCH[5]:-${BASH_REMATCH[2]}} rest=${BASH_REMATCH[6]}
		named=()
		for ((p = 10#$first; p <= 10#$last; p++)); do named+=("$(printf %04d "$p")"); done
		while [[ $rest =~ ^(,|,?\ and|,?\ or)\ (00[0-9][0-9])([^-0-9].*|)$ ]]; do
			named+=("${BASH_REMATCH[2]}") rest=${BASH_REMATCH[3]}
		done
		for p in "${named[@]}"; do
			in_series "$p" || bad+=("$file:$line: names patch $p, not in kernel-patch/series")
		done
	done
	# Patch files named by file name.
	rest=$text
	while [[ $rest =~ (00[0-9][0-9]-[A-Za-z0-9_-]+\.patch)(.*)$ ]]; do
		name=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
		[ -f "kernel-patch/$name" ] || bad+=("$file:$line: names $name, which kernel-patch/ does not hold")
	done
done < <(git grep -n -I -i -E 'patch(es)? 00[0-9][0-9]|00[0-9][0-9]-[a-z0-9_-]+\.patch|patches against the pin' -- '*.md')

# Tables of the patches: their rows' numbers are the series'.
while read -r file; do
	checked=$((checked + 1))
	rows=$(sed -n 's/^| \(00[0-9][0-9]\) |.*/\1/p' "$file" | sort | paste -sd ' ')
	[ "$rows" = "$series_numbers" ] ||
		bad+=("$file: its table of the patches lists ${rows:-none}; kernel-patch/series has $series_numbers")
done < <(git grep -l -E '^\| 00[0-9][0-9] \|' -- '*.md')

if [ ${#bad[@]} -gt 0 ]; then
	printf '%s\n' "${bad[@]}" >&2
	die "${#bad[@]} reference(s) to the kernel series in the documents are wrong"
fi
stage "documents: $checked line(s) and table(s) naming the series' $count patches, each right"
