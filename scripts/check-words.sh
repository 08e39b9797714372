#!/usr/bin/env bash
# The word check: no tracked file may speak of how the project is
# developed (who did the work, in which sitting, for which tracker entry).
# The repository says what the code and documents are and why; that
# history belongs in git. Fails listing FILE:LINE: WORD for every hit.
#
# Words matched case-insensitively, as whole words (see WORDS below).
# In a *.patch file only the commit message and the lines the patch adds
# are checked: its context and removed lines are the kernel's own text.
#
# usage: scripts/check-words.sh [TREE]   (default: this repository; TREE
#        must be a git work tree, and only its tracked files are read)
. "$(dirname "$0")/lib.sh"
need_cmd git grep awk

tree=${1:-$ANTINOMIE_ROOT}
git -C "$tree" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
	die "$tree is not a git work tree"

# One extended regular expression per word or phrase; grep -w makes each a
# whole-word match, so that look-alikes (a process id, "issued") do not
# match. They are written in rot13 and decoded here, so that the
# repository itself never spells them, this file included.
WORDS_ROT13=(
	'frffvbaf?'
	'ntragf?'
	'ratvarref?'
	'vffhrf? ?#?[0-9]+'
	"gur vffhr'f"
	'prbf?'
	'erivrjref?'
	'serfu[- ]pbagrkg'
	'pybfvat abgrf?'
	'fgbcf? ?#?[0-9]+'
)
rot13() { tr 'A-Za-z' 'N-ZA-Mn-za-m'; }

patterns=()
for w in "${WORDS_ROT13[@]}"; do
	patterns+=(-e "$(rot13 <<<"$w")")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Everything but patches: git grep reads the tracked files, skips binaries.
excluded=(':(exclude,glob)**/*.patch')
git -C "$tree" grep -n -I -i -w -E "${patterns[@]}" -- . "${excluded[@]}" \
	>"$tmp/hits" || [ $? -eq 1 ] || die "git grep failed in $tree"

# Patches: blank out the lines that are not ours, so that grep -n still
# gives each checked line its own number. The message runs up to the
# first "---" line or diff header; after it only added lines count.
while IFS= read -r -d '' p; do
	awk '
		!in_diff && /^(---$|--- |diff --git )/ { in_diff = 1 }
		!in_diff { print; next }
		/^\+/ && !/^\+\+\+ / { print; next }
		{ print "" }
	' "$tree/$p" | grep -n -i -w -E "${patterns[@]}" | sed "s|^|$p:|" >>"$tmp/hits" || true
done < <(git -C "$tree" ls-files -z -- ':(glob)**/*.patch')

[ -s "$tmp/hits" ] || exit 0
# FILE:LINE: WORD, one line per word found.
while IFS= read -r hit; do
	where=${hit%%:*}
	rest=${hit#*:}
	where=$where:${rest%%:*}
	grep -o -i -w -E "${patterns[@]}" <<<"${rest#*:}" | sed "s|^|$where: |"
done <"$tmp/hits"
die "$(wc -l <"$tmp/hits") line(s) above speak of how the project is developed"
