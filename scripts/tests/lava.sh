#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The LAVA test definition (lava/automated/linux/antinomie-corpus/), run
# as a lab would run it: scripts/lava-corpus-job.sh boots the normal
# kernel under tuxrun and the distribution's lava-dispatcher (QEMU, no
# network) with a bundle as the root file system.
#   1. outside LAVA, no bundle: the definition's script reports the run as
#      a whole "fail" and the artifact "skip", and send-to-lava.sh turns
#      result.txt into LAVA's test case signals;
#   2. a small corpus (the random workload as root and user-p2, the
#      dependent one as root), two jobs on the normal kernel: every test
#      case passes (one per workload x context, the run, the artifact),
#      and `scripts/regress.sh --compare` of the two jobs' artifacts
#      (each pair its own rerun) says equal, exit 0, as regress.sh says of
#      an unchanged kernel;
#   3. the same bundle with a run whose context cannot be set up: its test
#      case fails, naming the reason, the others pass, the artifact is
#      still written, and lava-corpus-job.sh exits 1.
# Needs the normal kernel and the guest binaries (the test command makes
# them); installs lava-dispatcher and tuxrun (scripts/lava-corpus-job.sh).
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kernel=$(readlink -f "$ANTINOMIE_CACHE/kernels/normal")/arch/x86/boot/bzImage
[ -f "$kernel" ] || die "no normal kernel ($kernel): scripts/build-kernel.sh normal makes it"

stage "[1] the definition's script without a bundle: the run fails, nothing to pack"
# A copy of the layout: the script writes output/ where it runs, and
# send-to-lava.sh is found relative to the definition, as in the yaml.
mkdir -p "$tmp/layout" && cp -a "$ANTINOMIE_ROOT/lava/automated" "$tmp/layout/"
(cd "$tmp/layout/automated/linux/antinomie-corpus" &&
	./antinomie-corpus.sh -b "$tmp/none" >"$tmp/nobundle.log" 2>&1 &&
	../../utils/send-to-lava.sh ./output/result.txt >"$tmp/signals.log" 2>&1) ||
	die "[1] the definition's script or send-to-lava.sh failed: $(tail -n 3 "$tmp/nobundle.log" "$tmp/signals.log" 2>/dev/null)"
expected='<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=antinomie-corpus RESULT=fail>
<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=artifact RESULT=skip>'
[ "$(cat "$tmp/signals.log")" = "$expected" ] ||
	die "[1] without a bundle the signals were not the expected ones: $(cat "$tmp/signals.log")"
grep -q "no $tmp/none/run-corpus" "$tmp/nobundle.log" || die "[1] the script did not say why the run failed"
info "antinomie-corpus fail (no run-corpus), artifact skip, as LAVA signals"

stage "[2] a small corpus, two jobs on the normal kernel; their artifacts compared"
# shellcheck disable=SC2016 # ${SEED} and the tracepoint id are the corpus list's.
printf '%s\n' 'random root,user-p2 antinomie-workload random --seed ${SEED} --calls 300 ${ANTINOMIE_TRACEPOINT_ID:+--tracepoint-id $ANTINOMIE_TRACEPOINT_ID}' \
	'dependent root antinomie-workload dependent --seed ${SEED} --rounds 20 --threads 2' >"$tmp/small.list"
"$ANTINOMIE_ROOT/scripts/regress.sh" --bundle "$tmp/bundle" --corpus "$tmp/small.list" \
	--contexts root,user-p2 --out "$tmp/bundle-out" >"$tmp/bundle.log" 2>&1 ||
	die "[2] regress.sh --bundle failed: $(tail -n 3 "$tmp/bundle.log")"
# job NAME BUNDLE: scripts/lava-corpus-job.sh's exit status, its output
# in $tmp/NAME.
job() {
	local rc=0
	"$ANTINOMIE_ROOT/scripts/lava-corpus-job.sh" --kernel "$kernel" --bundle "$2" --out "$tmp/$1" \
		--timeout 10 >"$tmp/$1.log" 2>&1 || rc=$?
	return $rc
}
for j in a b; do
	rc=0
	job "$j" "$tmp/bundle" || rc=$?
	[ $rc -eq 0 ] || die "[2] job $j exited $rc, not 0: $(tail -n 8 "$tmp/$j.log")"
done
cases=$(grep -o 'lava-test-case [^ ]*: [a-z]*' "$tmp/a.log")
expected='lava-test-case random.root: pass
lava-test-case random.user-p2: pass
lava-test-case dependent.root: pass
lava-test-case antinomie-corpus: pass
lava-test-case artifact: pass'
[ "$cases" = "$expected" ] || die "[2] job a's test cases are not the expected ones: $cases"
info "job a: $(tr '\n' ';' <<<"$cases")"
rc=0
"$ANTINOMIE_ROOT/scripts/regress.sh" --compare "$tmp/a/results" "$tmp/b/results" \
	--rerun "$tmp/a/results" "$tmp/b/results" --out "$tmp/report" >"$tmp/compare.log" 2>&1 || rc=$?
[ $rc -eq 0 ] || die "[2] regress.sh --compare of the two jobs' artifacts exited $rc, not 0: $(tail -n 5 "$tmp/compare.log")"
info "regress.sh --compare of the artifacts: $(head -n 1 "$tmp/report/summary.txt")"

stage "[3] a run whose context cannot be set up fails its test case"
cp -a "$tmp/bundle" "$tmp/broken"
echo 'broken no-such-context true' >>"$tmp/broken/etc/antinomie/corpus/entries"
rc=0
job c "$tmp/broken" || rc=$?
[ $rc -eq 1 ] || die "[3] the job with a broken run exited $rc, not 1: $(tail -n 8 "$tmp/c.log")"
grep -q 'lava-test-case broken.no-such-context: fail' "$tmp/c.log" ||
	die "[3] the broken run's test case did not fail: $(grep 'lava-test-case' "$tmp/c.log")"
grep -q 'broken.no-such-context: fail: the context was not set up' "$tmp/c/lava-log.txt" ||
	die "[3] the job's log does not say why the broken run failed"
[ "$(grep -c 'lava-test-case .*: pass' "$tmp/c.log")" -eq 5 ] ||
	die "[3] the other test cases did not all pass: $(grep 'lava-test-case' "$tmp/c.log")"
[ -f "$tmp/c/results/broken/no-such-context/stderr" ] || die "[3] the artifact lacks the broken run's results"
info "broken.no-such-context fail (the context was not set up), the 5 others pass, the artifact written"
stage "LAVA test definition passed"
