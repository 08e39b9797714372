#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The distribution's `perf test` with one verdict line per test on stdout:
#   verdict: perf-test NUMBER RESULT
# NUMBER as perf numbers its tests (4, 4.1), RESULT Ok, FAILED or Skip.
# Only the verdict is kept: a skip's reason is in perf's own output, which
# goes to stderr as perf test prints it, and is not compared.
#
# usage: perf-test-verdicts.sh [--skip-name NAME]... [PERF-TEST-ARGS...]
# --skip-name skips the test perf lists under exactly NAME (perf test -s
# takes numbers, which differ between perf versions).
# Exit status: perf test's; 2 when it printed no verdict at all (perf
# missing or broken: nothing was tested) or lists no test NAME.
skip=
tests=
while [ "$1" = --skip-name ]; do
	# "NUMBER NAME" per top-level test, listed once.
	[ -n "$tests" ] || tests=$(perf test list 2>&1 |
		sed -n -E 's/^ *([0-9]+): (.*[^ ]) *$/\1 \2/p')
	number=$(printf '%s\n' "$tests" |
		while read -r n name; do
			if [ "$name" = "$2" ]; then echo "$n"; fi
		done)
	if [ -z "$number" ]; then
		echo "perf-test-verdicts: perf test lists no test named '$2'" >&2
		exit 2
	fi
	skip=${skip:+$skip,}$number
	shift 2
done
log=$(mktemp) || exit 2
trap 'rm -f "$log"' EXIT
# perf test prints everything on stderr, results as "  4.1: NAME : Ok",
# a test with subtests as "  4: NAME :" with no result of its own.
perf test ${skip:+-s "$skip"} "$@" >"$log" 2>&1
status=$?
cat "$log" >&2
sed -n -E 's/^ *([0-9]+(\.[0-9]+)?): .*: (Ok|FAILED|Skip)([ !(].*)?$/verdict: perf-test \1 \3/p' "$log" >"$log.verdicts"
cat "$log.verdicts"
n=$(wc -l <"$log.verdicts")
rm -f "$log.verdicts"
if [ "$n" -eq 0 ]; then
	echo "perf-test-verdicts: perf test printed no verdict (exit status $status)" >&2
	exit 2
fi
echo "perf-test-verdicts: $n verdicts, perf test exited $status" >&2
exit $status
