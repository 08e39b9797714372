#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `perf stat` with what of its result does not depend on timing as verdict
# lines on stdout:
#   verdict: perf-stat EVENT = COUNT     an --exact event's count
#   verdict: perf-stat EVENT counted     any other event that counted
#   verdict: perf-stat EVENT not-counted | not-supported
# Counts of time (task-clock, cpu-clock) and of what the scheduler and the
# memory manager decide (context switches, migrations, page faults) change
# from run to run, capture or not: they are reduced to "counted". An exact
# count is one a deterministic workload fixes, e.g. the syscall
# tracepoints of a busybox applet.
#
# usage: perf-stat-verdicts.sh [--exact EVENT]... PERF-STAT-ARGS...
#   (perf stat runs with -x, -o FILE added: CSV, apart from the workload's
#   own output)
# Exit status: perf stat's (the workload's, or perf's error).
. "$(dirname "$0")/exact-events.sh"
read_exact_events "$@"
shift "$exact_words"
csv=$(mktemp) || exit 2
trap 'rm -f "$csv"' EXIT
perf stat -x, -o "$csv" "$@"
status=$?
cat "$csv" >&2
echo "verdict: perf-stat exit $status"
# CSV: count,unit,event,run time,percentage,...; comment and empty lines
# carry the start time.
grep -v -e '^#' -e '^$' "$csv" | while IFS=, read -r count _unit event _rest; do
	case "$count" in
	"<not counted>") echo "verdict: perf-stat $event not-counted" ;;
	"<not supported>") echo "verdict: perf-stat $event not-supported" ;;
	*)
		if is_exact "$event"; then
			echo "verdict: perf-stat $event = $count"
		else
			echo "verdict: perf-stat $event counted"
		fi
		;;
	esac
done
exit $status
