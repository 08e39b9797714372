#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The cheapest entry of the real-program corpus end to end, and the control
# run that judges it:
#   1. the distribution's perf (scripts/corpus-programs.sh) runs
#      qemu/corpus/perf.list's perf-stat-sw under `scripts/run-in-guest.sh
#      --control`: capture off, then on, in one boot; exit 0 means the
#      same exit status and `verdict:` lines both times and 0 records lost;
#      the captured run's perf_event_open calls are in the trace;
#   2. a program whose verdict differs between the two runs by
#      construction (it prints its working directory, which the control
#      run gets a directory of its own for): --control exits 1 and prints
#      both verdicts.
# Needs the normal kernel and the guest binaries (the test command makes
# them).
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rig=$ANTINOMIE_ROOT/scripts/run-in-guest.sh
list=$ANTINOMIE_ROOT/qemu/corpus/perf.list

stage "[1] perf-stat-sw of $(basename "$list") with --control"
"$ANTINOMIE_ROOT/scripts/corpus-programs.sh" "$tmp/programs" || die "[1] cannot lay perf into the image"
# The entry's command, as the list gives it: its first word is the program.
read -r -a cmd < <(awk '$1 == "perf-stat-sw" { $1 = ""; $2 = ""; print }' "$list")
[ ${#cmd[@]} -gt 0 ] || die "[1] no perf-stat-sw entry in $list"
rc=0
"$rig" --control --add "$tmp/programs" --out "$tmp/stat" -- \
	"$ANTINOMIE_ROOT/qemu/corpus/${cmd[0]}" "${cmd[@]:1}" || rc=$?
[ $rc -eq 0 ] || die "[1] run-in-guest.sh --control exited $rc (1: capture changed a verdict; 125: the run failed or lost records)"
verdicts=$(grep -c '^verdict: ' "$tmp/stat/stdout" || true)
[ "$verdicts" -ge 9 ] ||
	die "[1] perf stat gave $verdicts verdict lines, not its exit and one per event: $(head -c 300 "$tmp/stat/stdout")"
grep -qx 'verdict: perf-stat exit 0' "$tmp/stat/stdout" || die "[1] perf stat failed in the guest: $(tail -n 5 "$tmp/stat/stderr")"
calls=$(wc -l <"$tmp/stat/reader.jsonl")
[ "$calls" -gt 0 ] || die "[1] the trace holds no perf_event_open call of perf stat"
info "$verdicts verdicts equal with capture off and on; $calls calls captured"

stage "[2] a verdict that differs between the runs: --control exits 1"
cat >"$tmp/cwd-verdict" <<'SH'
#!/bin/sh
# The control run and the captured one work in different directories.
echo "verdict: cwd $(pwd)"
SH
chmod +x "$tmp/cwd-verdict"
rc=0
"$rig" --control --out "$tmp/cwd" -- "$tmp/cwd-verdict" >"$tmp/cwd.log" 2>&1 || rc=$?
[ $rc -eq 1 ] || die "[2] a changed verdict made run-in-guest.sh --control exit $rc, not 1: $(tail -n 3 "$tmp/cwd.log")"
grep -q "capture changed the program's verdicts" "$tmp/cwd.log" ||
	die "[2] no message names the change: $(tail -n 3 "$tmp/cwd.log")"
grep -q '^ *+verdict: cwd /root$' "$tmp/cwd.log" || die "[2] the captured run's verdict is not printed"
info "$(grep -m1 'capture changed' "$tmp/cwd.log" | cut -c1-100)…"
stage "corpus-perf passed"
