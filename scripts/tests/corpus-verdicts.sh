#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The perf corpus's verdict scripts (qemu/corpus/perf-stat-verdicts.sh,
# perf-record-report.sh) on the host, on perf output written here: a
# `perf` on PATH that records the arguments it got and prints what perf
# stat -x, and perf report --stdio print. Each script runs under the
# host's sh and under busybox sh (the guest's shell) and must print
# exactly the verdicts the rules give (an --exact event's count, any
# other reduced to a word, a zero sample count left out), hand perf its
# arguments without the --exact options, and exit 2 naming itself on a
# --exact without an event.
. "$(dirname "$0")/../lib.sh"
need_cmd busybox

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=$ANTINOMIE_ROOT/qemu/corpus
passed=0 failed=0

mkdir "$tmp/bin"
# The stand-in perf: its arguments, a line a call, to $tmp/perf.args;
# for `stat -x, -o FILE` the CSV into FILE, for `record -o FILE` an empty
# FILE, for `report` the report on stdout.
cat >"$tmp/bin/perf" <<EOF_PERF
#!/bin/sh
echo "\$*" >>"$tmp/perf.args"
case "\$1" in
stat)
	cat >"\$4" <<'CSV'
# started on Thu Jan  1 00:00:00 1970

1.52,msec,task-clock,1518421,100.00,0.612,CPUs utilized
3,,context-switches,1518421,100.00,1.976,K/sec
<not counted>,,cpu-migrations,0,0.00,,
<not supported>,,alignment-faults,0,100.00,,
12,,syscalls:sys_enter_openat,1518421,100.00,7.903,K/sec
CSV
	;;
record) : >"\$3" ;;
report)
	cat <<'REPORT'
# Samples: 1K  of event 'cpu-clock'
# Event count (approx.): 20575000
# Samples: 0  of event 'dummy'
# Samples: 12  of event 'syscalls:sys_enter_openat'
REPORT
	;;
esac
EOF_PERF
chmod +x "$tmp/bin/perf"
PATH=$tmp/bin:$PATH

# check NAME WANT-STATUS WANT-STDOUT WANT-PERF-ARGS SHELL SCRIPT ARGS...
check() {
	local name=$1 want_status=$2 want_out=$3 want_args=$4 shell=$5 rc=0
	shift 5
	rm -f "$tmp/perf.args"
	# shellcheck disable=SC2086 # SHELL is a command and its arguments
	$shell "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	local args=""
	[ ! -e "$tmp/perf.args" ] || args=$(sed 's/ -o [^ ]*/ -o FILE/; s/ -i [^ ]*/ -i FILE/' "$tmp/perf.args")
	if [ "$rc" -eq "$want_status" ] && [ "$(cat "$tmp/out")" = "$want_out" ] && [ "$args" = "$want_args" ]; then
		echo "ok     $name ($shell)"
		passed=$((passed + 1))
	else
		echo "FAILED $name ($shell): exit $rc (wanted $want_status), perf got '$args' (wanted '$want_args'), stdout then stderr:"
		sed 's/^/  | /' "$tmp/out" "$tmp/err"
		failed=$((failed + 1))
	fi
}

stage "verdict scripts on written perf output, under sh and busybox sh"
for shell in sh "busybox sh"; do
	check "perf stat: an --exact count kept, the others reduced" 0 "verdict: perf-stat exit 0
verdict: perf-stat task-clock counted
verdict: perf-stat context-switches counted
verdict: perf-stat cpu-migrations not-counted
verdict: perf-stat alignment-faults not-supported
verdict: perf-stat syscalls:sys_enter_openat = 12" \
		"stat -x, -o FILE -e task-clock,syscalls:sys_enter_openat -- cat /etc/passwd" \
		"$shell" "$corpus/perf-stat-verdicts.sh" --exact syscalls:sys_enter_openat \
		-e task-clock,syscalls:sys_enter_openat -- cat /etc/passwd
	check "perf stat: no --exact, every count reduced" 0 "verdict: perf-stat exit 0
verdict: perf-stat task-clock counted
verdict: perf-stat context-switches counted
verdict: perf-stat cpu-migrations not-counted
verdict: perf-stat alignment-faults not-supported
verdict: perf-stat syscalls:sys_enter_openat counted" \
		"stat -x, -o FILE -- true" "$shell" "$corpus/perf-stat-verdicts.sh" -- true
	check "perf record + report: exact samples kept, others reduced, an event without samples left out" 0 "verdict: perf-record exit 0
verdict: perf-report exit 0
verdict: perf-report cpu-clock samples
verdict: perf-report syscalls:sys_enter_openat samples = 12" \
		"record -o FILE -e cpu-clock -c 1 -- cat /etc/passwd
report -i FILE --stdio --sort comm" \
		"$shell" "$corpus/perf-record-report.sh" --exact syscalls:sys_enter_openat \
		-e cpu-clock -c 1 -- cat /etc/passwd
	check "perf stat: --exact without an event exits 2" 2 "" "" \
		"$shell" "$corpus/perf-stat-verdicts.sh" --exact
	grep -qx 'perf-stat-verdicts: --exact needs an event' "$tmp/err" ||
		die "perf-stat-verdicts.sh's --exact error does not name it: $(cat "$tmp/err")"
	check "perf record: --exact without an event exits 2" 2 "" "" \
		"$shell" "$corpus/perf-record-report.sh" --exact
	grep -qx 'perf-record-report: --exact needs an event' "$tmp/err" ||
		die "perf-record-report.sh's --exact error does not name it: $(cat "$tmp/err")"
done

stage "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || die "$failed of $((passed + failed)) verdict checks failed"
