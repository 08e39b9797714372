#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Lint every shell script in the repository with shellcheck: the host
# scripts, the guest's init and its scenarios (busybox sh), and .ci/run. A
# script is a tracked file whose first line is a sh or bash shebang; the
# libraries they source (scripts/lib.sh, kernel-lib.sh, deps.sh) are
# checked through them (-x), as they are used.
#
# usage: scripts/check-shell.sh
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"
need_cmd shellcheck git

scripts=()
while read -r f; do
	head -n 1 "$f" | grep -qE '^#!(/usr)?/bin/(env )?(ba|da)?sh\b' && scripts+=("$f")
done < <(git ls-files)
[ ${#scripts[@]} -gt 0 ] || die "no shell scripts found under $ANTINOMIE_ROOT"
stage "shellcheck of ${#scripts[@]} scripts"
# Two shellchecks at a time, a few scripts each (one is single-threaded),
# each one's findings to a file of its own, shown whole.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's.
printf '%s\0' "${scripts[@]}" |
	xargs -0 -P 2 -n 4 sh -c 'shellcheck -x -P SCRIPTDIR -f gcc "$@" >"$(mktemp "$0/XXXXXX")" 2>&1' "$out" || rc=$?
cat "$out"/*
[ "$rc" -eq 0 ] || die "shellcheck found the problems above"
stage "shellcheck: ${#scripts[@]} scripts clean"
