#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Every tracked source file outside kernel-patch/ names its licence in an
# SPDX-License-Identifier line: the first line, or the second after a
# shebang. Source files are *.rs, *.c, *.h, *.py, *.sh and any file whose
# first line is a shebang (the guest's init and scenarios, .ci/run); data
# (fixtures, golden output, configs, corpora) carries none. The patches'
# new files carry the kernel's own lines, checked by checkpatch.
#
# usage: scripts/check-spdx.sh [TREE]   (default: this repository)
. "$(dirname "$0")/lib.sh"
need_cmd git

tree=${1:-$ANTINOMIE_ROOT}
cd "$tree" || die "cannot enter $tree"

n=0 missing=()
while read -r f; do
	[ -f "$f" ] || continue
	case $f in
	kernel-patch/*) continue ;;
	*.rs | *.c | *.h | *.py | *.sh) ;;
	*) head -c 3 "$f" | grep -q '^#!/' || continue ;;
	esac
	n=$((n + 1))
	first=$(head -n 1 "$f")
	case $first in
	*SPDX-License-Identifier:*) continue ;;
	'#!/'*) sed -n 2p "$f" | grep -q 'SPDX-License-Identifier:' && continue ;;
	esac
	missing+=("$f")
done < <(git ls-files)

[ "$n" -gt 0 ] || die "no source files found in $tree"
if [ ${#missing[@]} -gt 0 ]; then
	printf '%s: no SPDX-License-Identifier line\n' "${missing[@]}" >&2
	die "${#missing[@]} of $n source files name no licence"
fi
stage "SPDX: $n source files, each with its licence line"
