#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# scripts/run-in-guest.sh as a user runs it:
#   1. a dynamically linked host program (strace -V): its libraries come
#      along, its output and status 0 come back;
#   2. a failing program (the host's dynamic `false`): status 1 becomes the
#      command's;
#   3. the kernel's perf_events selftests (--add of their directory, run by
#      a script): the trace comes back checked by sha256, `reader show`
#      decodes it on the host, and every perf_event_open the tests made
#      (their witness log) is in it;
#   4. a fast caller, antinomie-workload random (3000 varied calls in a
#      tight loop), from one thread and from four, each twice: at the
#      defaults (lossless capture) not one record is lost in any run (or
#      run-in-guest.sh exits 125), and `reader diff` of the two runs finds
#      them equal (exit 0);
#   5. the same calls forced to lose records (--lossy, 4 KiB rings):
#      run-in-guest.sh exits 125, the JSON summaries count the loss (the
#      live reader's and `reader show`'s), `reader diff` against a run of 4 exits 3
#      (inconclusive) and compares them with --allow-loss.
# Needs the normal kernel, the guest binaries and the selftests (the test
# command makes them).
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../guest-lib.sh
. "$(dirname "$0")/../guest-lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rig=$ANTINOMIE_ROOT/scripts/run-in-guest.sh
reader=${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release/reader
selftests=$ANTINOMIE_CACHE/selftests/root
[ -d "$selftests/opt/selftests/perf_events" ] || die "no perf_events selftests in $selftests (run scripts/build-selftests.sh)"

stage "[1] a dynamic host program: strace -V"
"$rig" --out "$tmp/strace" -- strace -V || die "[1] run-in-guest.sh -- strace -V failed"
grep -q '^strace -- version' "$tmp/strace/stdout" ||
	die "[1] strace -V printed no version: $(head -c 200 "$tmp/strace/stdout")"
info "guest said: $(head -n1 "$tmp/strace/stdout")"

stage "[2] a failing program: its status is the command's"
rc=0
"$rig" --out "$tmp/false" -- false || rc=$?
{ [ $rc -eq 1 ] && [ "$(cat "$tmp/false/status" 2>/dev/null)" = 1 ]; } ||
	die "[2] run-in-guest.sh -- false exited $rc, status file '$(cat "$tmp/false/status" 2>/dev/null)'; wanted 1 and 1"

stage "[3] the kernel's perf_events selftests, their trace decoded on the host"
mkdir -p "$tmp/tests"
cat >"$tmp/tests/perf-selftests" <<'SH'
#!/bin/sh
# Every perf_events selftest, each perf_event_open logged by the witness.
export ANTINOMIE_WITNESS=/root/witness.log
for t in /opt/selftests/perf_events/*; do
	[ -x "$t" ] || continue
	echo "== $t"
	"$t"
	echo "== $t: exit $?"
done
cat /root/witness.log >&2
SH
chmod +x "$tmp/tests/perf-selftests"
rc=0
"$rig" --add "$selftests" --out "$tmp/selftests" --timeout 900 -- "$tmp/tests/perf-selftests" || rc=$?
[ $rc -eq 0 ] || die "[3] the selftests run failed (exit $rc)"
"$reader" show "$tmp/selftests/trace.antinomie" --no-summary >"$tmp/selftests.txt" ||
	die "[3] reader show cannot decode the trace that came back"
made=$(grep -cE '^tid=[0-9]+ ret=' "$tmp/selftests/stderr" || true)
shown=$(grep -c 'perf_event_open(' "$tmp/selftests.txt" || true)
info "the selftests made $made perf_event_open calls (witness); the trace holds $shown"
[ "$made" -gt 0 ] || die "[3] the witness logged no perf_event_open call"
[ "$shown" -ge "$made" ] || die "[3] the trace holds $shown calls, fewer than the $made the selftests made"
for threads in 1 4; do
	for run in a b; do
		stage "[4] a fast caller, $threads thread(s), run $run: antinomie-workload random --calls 3000, nothing lost"
		out=$tmp/fast$threads$run
		rc=0
		"$rig" --out "$out" --timeout 900 -- \
			"$(dirname "$reader")/antinomie-workload" random --seed 20261203 --calls 3000 --threads $threads || rc=$?
		[ $rc -eq 0 ] || die "[4] the fast caller with $threads thread(s), run $run, exited $rc (125: records lost, or the run failed)"
		[ "$(capture_json "$out" .lossless.on)" = true ] ||
			die "[4] the reader's summary does not show lossless mode on: $(capture_json "$out" .lossless)"
		# The records lost by the kernel's final counters.
		[ "$(capture_json "$out" '[.records.lost_exact, .records.lost] | @tsv')" = "$(printf 'true\t0')" ] ||
			die "[4] run $run with $threads thread(s) lost records: $(capture_json "$out" .records)"
		info "$(capture_json "$out" '"\(.calls) calls; \(.records.produced) records produced = \(.records.consumed) consumed + \(.records.lost) lost; \(.lossless.waits) waited for room"')"
	done
	stage "[4] reader diff of the two runs with $threads thread(s): equal"
	rc=0
	"$reader" diff "$tmp/fast${threads}a/trace.antinomie" "$tmp/fast${threads}b/trace.antinomie" >"$tmp/fast$threads.diff" 2>&1 || rc=$?
	[ $rc -eq 0 ] || die "[4] reader diff of two runs of the same calls with $threads thread(s) exited $rc, not 0: $(head -n 3 "$tmp/fast$threads.diff")"
	info "$(tail -n 1 "$tmp/fast$threads.diff")"
done
stage "[5] the same calls with loss forced (--lossy, 4 KiB rings, the reader stopped meanwhile): exit 125, loss in every summary"
# The loss must not depend on how fast the reader drains: the program
# stops the reader while it makes the calls, as reader-e2e's stalled
# reader does, and lets it go on after. The reader is the parent of the
# shell that runs the program (qemu/guest/capture.sh).
mkdir -p "$tmp/stalled/usr/local/bin"
cp "$(dirname "$reader")/antinomie-workload" "$tmp/stalled/usr/local/bin/"
cat >"$tmp/tests/stalled-reader" <<'SH'
#!/bin/sh
reader=$(awk '/^PPid:/ { print $2 }' "/proc/$PPID/status")
[ "$(cat "/proc/$reader/comm")" = reader ] || { echo "pid $reader is not the reader" >&2; exit 2; }
kill -STOP "$reader"
antinomie-workload random --seed 20261203 --calls 3000 --threads 1
rc=$?
kill -CONT "$reader"
exit $rc
SH
chmod +x "$tmp/tests/stalled-reader"
rc=0
"$rig" --add "$tmp/stalled" --out "$tmp/lossy" --timeout 900 --lossy --append antinomie.ring_size=4K -- \
	"$tmp/tests/stalled-reader" || rc=$?
[ $rc -eq 125 ] || die "[5] a lossy capture made run-in-guest.sh exit $rc, not 125"
lost=$(capture_json "$tmp/lossy" .records.lost)
{ [ "$lost" -gt 0 ] && [ "$(capture_json "$tmp/lossy" .capture_whole)" = false ]; } ||
	die "[5] the live summary does not count the loss: $(capture_json "$tmp/lossy" .records)"
"$reader" show --summary json "$tmp/lossy/trace.antinomie" 2>"$tmp/lossy.show" >/dev/null || true
[ "$(grep '^{' "$tmp/lossy.show" | jq .records.lost)" = "$lost" ] ||
	die "[5] reader show's summary does not count the live run's $lost lost records: $(cat "$tmp/lossy.show")"
info "the lossy run lost $lost records; the live reader and reader show say so"
rc=0
"$reader" diff "$tmp/fast1a/trace.antinomie" "$tmp/lossy/trace.antinomie" >"$tmp/diff.txt" 2>&1 || rc=$?
{ [ $rc -eq 3 ] && grep -q 'inconclusive' "$tmp/diff.txt"; } ||
	die "[5] reader diff of a lossy run exited $rc, not 3 (inconclusive): $(head -n 3 "$tmp/diff.txt")"
rc=0
"$reader" diff --allow-loss --format json "$tmp/fast1a/trace.antinomie" "$tmp/lossy/trace.antinomie" >"$tmp/diff.jsonl" 2>"$tmp/diff.err" || rc=$?
differing=$(jq -r 'select(.event == "summary") | .calls.differing | numbers' "$tmp/diff.jsonl" 2>/dev/null || true)
{ [ $rc -le 1 ] && [ -n "$differing" ]; } ||
	die "[5] reader diff --allow-loss of a lossy run did not compare (exit $rc): $(head -n 3 "$tmp/diff.err")"
info "reader diff: exit 3 without --allow-loss; with it, $differing calls differ"
stage "run-in-guest passed"
