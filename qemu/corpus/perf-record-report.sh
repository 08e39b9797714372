#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `perf record` then `perf report` on what it wrote, with what of their
# result does not depend on timing as verdict lines on stdout:
#   verdict: perf-record exit N
#   verdict: perf-report exit N
#   verdict: perf-report EVENT samples = N     an --exact event's samples
#   verdict: perf-report EVENT samples         any other event that has some
# Samples of time (cpu-clock) are as many as the run's length allows:
# reduced to "samples". An exact count is one a deterministic workload
# fixes, e.g. a syscall tracepoint sampled at every hit (-c 1).
#
# usage: perf-record-report.sh [--exact EVENT]... PERF-RECORD-ARGS...
#   (perf record runs with -o FILE added, in a directory of its own)
# Exit status: perf report's when perf record succeeded, else perf record's.
. "$(dirname "$0")/exact-events.sh"
read_exact_events "$@"
shift "$exact_words"
dir=$(mktemp -d) || exit 2
trap 'rm -rf "$dir"' EXIT
perf record -o "$dir/perf.data" "$@"
status=$?
echo "verdict: perf-record exit $status"
[ $status -eq 0 ] || exit $status
perf report -i "$dir/perf.data" --stdio --sort comm >"$dir/report" 2>"$dir/report.err"
status=$?
cat "$dir/report" "$dir/report.err" >&2
echo "verdict: perf-report exit $status"
# One header per event: "# Samples: 12  of event 'syscalls:sys_enter_openat'"
# (perf scales large counts: 1K, 2M; exact events keep theirs small).
sed -n "s/^# Samples: \([^ ]*\)  *of event '\(.*\)'\$/\2 \1/p" "$dir/report" |
	while read -r event samples; do
		if is_exact "$event"; then
			echo "verdict: perf-report $event samples = $samples"
		elif [ "$samples" != 0 ]; then
			echo "verdict: perf-report $event samples"
		fi
	done
exit $status
