#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Kernel regression testing, end to end, as a kernel developer does it:
# the one command, scripts/regress.sh, on the default corpus
# (qemu/corpus/default.list: the seeded random workload and the decisions
# workload in every privilege context, the kernel's perf_events selftests
# and the result-dependent workload as root).
#   1. the normal kernel (gcov on the objects that decide
#      perf_event_open's result: kconfig/coverage.config) and the same
#      kernel with no object instrumented (--changed-gcov-objects
#      scripts/tests/regression/no-counters.objects: gcov's kernel code
#      stays, so only those objects are compiled again): exit 0, every
#      run equal, none lossy, so gcov's instrumentation changes no result;
#      each random-workload capture, tracepoints drawn with a real
#      tracepoint's id, agrees field by field with the workload's own log
#      (antinomie-e2e compare); the report's coverage is the baseline's,
#      counters for every run, every function of the table compiled in,
#      at least 95 % of the reachable decision lines executed;
#      report.ktap, read by the pinned tree's kunit_parser.py, and
#      kcidb.json, valid by kcidb-io, pass every run;
#   2. a deliberate one-line change to perf_copy_attr()
#      (scripts/tests/regression/perf-copy-attr-ver0.patch, never shipped):
#      exit 1; the differing runs are the three workloads' only, each
#      confirmed by its rerun; in the comparison the report shows (the
#      first run's, or the rerun's where that found fewer differing calls):
#      - random and decisions, in every context: reader diff reports
#        exactly the calls whose outcome the workload itself saw change
#        between the two kernels, every one and nothing else
#        (antinomie-e2e diff-check, from the workloads' own logs);
#      - dependent: reader diff names, per thread whose calls changed,
#        exactly one cause, the first call whose outcome that thread's log
#        shows changed, and every later difference of the thread as its
#        consequence (antinomie-e2e cause-check);
#      summary.txt, report.json and junit.xml say the same, and so do
#      report.ktap (kunit_parser.py) and kcidb.json (kcidb-io); the change's
#      one hunk in kernel/events/core.c is reported reached, by the random
#      workload as root among others, and random as root's differing
#      results are each E2BIG from perf_copy_attr() on the changed kernel;
#   3. a patch that does not apply: exit 125, the error naming the file
#      and the hunk;
#   4. the cheapest real change of scripts/tests/regression/changes/
#      (debian-perf-paranoid-3.patch: Debian's perf_event_paranoid level 3,
#      EACCES for every caller without CAP_SYS_ADMIN), with the random
#      workload as root, user-p2 and user-p3: exit 1; user-p3 differs and
#      reader diff reports exactly the calls whose outcome the workload saw
#      change (diff-check), each EACCES from __perf_event_open() on the
#      changed kernel (attribution); its check's hunk reached, its Kconfig
#      not measured; root and user-p2 are equal;
#   5. a run longer than --timeout, with no change (the baseline
#      compared with itself): exit 125, could not test, the reason naming
#      the timeout;
#   6. a change to a line the corpus never executes
#      (scripts/tests/regression/unreached.patch), with the random
#      workload as root: exit 2, not reached, the first line saying so;
#   7. a change that makes the kernel stall in a call
#      (scripts/tests/regression/stall.patch), with the decisions workload
#      as root and user-p2: exit 1, changed, not could not test: decisions
#      as root is a "splat", "stall in task_bp_pinned" in its reason
#      and the console in the report, confirmed by a boot of that run
#      alone on both kernels (the changed one stalled again, the baseline
#      ran it to the end);
#      user-p2, which the stalled boot never ran, could not test; the
#      first line says so; report.ktap and kcidb.json agree.
# Needs the normal kernel and the guest binaries (the test command makes
# them); builds each changed kernel from a copy of the normal kernel's
# build directory (scripts/build-kernel.sh), what the change touches and
# a link, in the background while the runs before its own boot.
#
# usage: scripts/tests/regress.sh [--seed S] [--contexts LIST] [--build-only]
#   --contexts LIST   the contexts to run (default: all nine; see
#                     scripts/regress.sh --contexts)
#   --build-only      build the changed kernels (at nice 19) and stop; a
#                     build that fails fails it. The test command runs it
#                     beside the debug kernel's boots, where a core would
#                     otherwise wait, and the runs then find them built.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../guest-lib.sh"
. "$(dirname "$0")/../kernel-lib.sh"
. "$(dirname "$0")/../ci-formats-lib.sh"

seed=20261130 contexts=all build_only=0
while [ $# -gt 0 ]; do
	case "$1" in
	--seed | --contexts) [ $# -ge 2 ] || die "$1 needs a value" ;;
	esac
	case "$1" in
	--seed) seed=$2; shift ;;
	--contexts) contexts=$2; shift ;;
	--build-only) build_only=1 ;;
	*) die "unknown option $1" ;;
	esac
	shift
done
regress=$ANTINOMIE_ROOT/scripts/regress.sh
changes=$ANTINOMIE_ROOT/scripts/tests/regression
no_counters=$changes/no-counters.objects
patch=$changes/perf-copy-attr-ver0.patch
real=$changes/changes/debian-perf-paranoid-3.patch
unreached=$changes/unreached.patch
stall=$changes/stall.patch
t=$ANTINOMIE_CACHE/regress-test
rm -rf "$t"
mkdir -p "$t"

# The changed kernels of the runs below, in the order the runs need them.
changed_kernels=("KERNEL_GCOV_OBJECTS=$no_counters" "KERNEL_TEST_PATCH=$patch"
	"KERNEL_TEST_PATCH=$real" "KERNEL_TEST_PATCH=$unreached" "KERNEL_TEST_PATCH=$stall")
# build_changed_kernel N: the Nth (from 1), at nice 19, its log in
# $t/prebuild-N.log.
build_changed_kernel() {
	env "${changed_kernels[$1 - 1]}" nice -n 19 "$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal \
		>"$t/prebuild-$1.log" 2>&1 </dev/null
}
if [ "$build_only" = 1 ]; then
	for n in $(seq "${#changed_kernels[@]}"); do
		what=${changed_kernels[$n - 1]}
		stage "changed kernel $n of ${#changed_kernels[@]}: ${what##*/}"
		build_changed_kernel "$n" ||
			{ tail -n 5 "$t/prebuild-$n.log" >&2; die "building the kernel with $what failed (see $t/prebuild-$n.log)"; }
	done
	exit 0
fi

need_cmd jq
bins=${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release
for b in reader antinomie-workload antinomie-e2e antinomie-context; do
	[ -x "$bins/$b" ] || die "$bins/$b is missing (run qemu/build-initramfs.sh)"
done
ci_formats_setup

# Built in the background while the runs before boot (their guests leave
# part of the two cores idle, and their compares and reports one): each
# run's own build then finds its kernel up to date
# (scripts/build-kernel.sh), or waits for the build tree while it is
# built. A build that fails here is left to its run, which builds again
# and reports why.
prebuild() {
	local n
	for n in $(seq "${#changed_kernels[@]}"); do
		build_changed_kernel "$n" || true
	done
}
prebuild &
prebuild_pid=$!
trap 'stop_job_tree "$prebuild_pid"' EXIT

# regress NAME WANT [ARGS...]: the one command, results in $t/NAME; its exit
# status must be WANT. The corpus is $corpus, the contexts $contexts.
corpus=$ANTINOMIE_ROOT/qemu/corpus/default.list
regress() {
	local name=$1 want=$2 rc=0
	shift 2
	stage "scripts/regress.sh ${*:-(no change)} (want exit $want)"
	"$regress" --out "$t/$name" --seed "$seed" --contexts "$contexts" \
		--corpus "$corpus" "$@" >"$t/$name.log" 2>&1 || rc=$?
	[ $rc -eq "$want" ] || { tail -n 30 "$t/$name.log" >&2; die "scripts/regress.sh $* exited $rc, not $want (see $t/$name.log)"; }
	# The report's first lines; awk reads to the end, so no writer of the
	# pipe dies of SIGPIPE under pipefail.
	awk '/: report: /{ on = 1 } on && n++ < 20' "$t/$name.log"
}

# contexts_of WORKLOAD DIR: the contexts WORKLOAD ran in.
contexts_of() {
	jq -r --arg w "$1" '.runs[] | select(.workload == $w) | .context' "$2/report.json"
}
random_contexts() {
	contexts_of random "$1"
}

regress same 0 --changed-gcov-objects "$no_counters"
# The changed kernel: gcov's kernel code, and none of the objects the
# baseline instruments with counters (gcc names each function's
# __gcov0.FUNCTION), whether built by this run or found up to date.
# build_dir LOG: the build directory of the bzImage a build's log ends with.
build_dir() {
	local bzimage
	bzimage=$(tail -n 1 "$1")
	echo "${bzimage%/arch/x86/boot/bzImage}"
}
# counters DIR OBJECT: how many counters OBJECT of the build in DIR has
# (awk reads nm's output to the end: grep -q would make it die of SIGPIPE).
counters() {
	[ -f "$1/$2" ] || die "[1] $1/$2 does not exist"
	nm -- "$1/$2" | awk '/ __gcov0\./ { n++ } END { print n + 0 }'
}
baseline_dir=$(build_dir "$t/same/build-baseline.log")
changed_dir=$(build_dir "$t/same/build-changed.log")
grep -q '^CONFIG_GCOV_KERNEL=y$' "$changed_dir/.config" ||
	die "[1] the changed kernel ($changed_dir) has no CONFIG_GCOV_KERNEL"
while read -r o; do
	[ "$(counters "$baseline_dir" "$o")" -gt 0 ] || die "[1] the baseline's $o has no gcov counters"
	[ "$(counters "$changed_dir" "$o")" -eq 0 ] || die "[1] the changed kernel's $o has gcov counters"
done < <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$ANTINOMIE_ROOT/kconfig/coverage.objects")
jq -e '.result == "equal" and .runs_differing == 0 and .runs_could_not_test == 0' "$t/same/report.json" >/dev/null ||
	die "[1] report.json does not say equal: $(jq -c '{result, runs_differing, runs_could_not_test}' "$t/same/report.json")"
# Coverage: the baseline's (the changed kernel has no counters), with counters
# for every run, every function of the table compiled in this kernel (a
# name the source no longer has fails here), at least 95 % of the
# decision lines a TCG guest can reach executed by the default corpus,
# none the out-of-reach table names executed, and every entry of the
# table naming a line of the pinned source (else the table is wrong),
# and no change (the same sources).
jq -e '.coverage.changed == null and .coverage.baseline.runs_without_counters == [] and
	(.coverage.baseline.functions | length > 0 and all(.defined)) and
	(.coverage.baseline.total.reachable_decision_lines | .[0] * 100 >= .[1] * 95) and
	(.coverage.baseline.functions | all(.out_of_reach_executed == [] and .out_of_reach_unmatched == [])) and
	.coverage.change.hunks == []' "$t/same/report.json" >/dev/null ||
	die "[1] the coverage is not the baseline's whole: $(jq -c '.coverage | {changed: (.changed == null), missing: .baseline.runs_without_counters[:3], not_compiled: [.baseline.functions[] | select(.defined | not) | .function], total: .baseline.total, out_of_reach_executed: [.baseline.functions[] | select(.out_of_reach_executed != []) | .function], hunks: (.change.hunks | length)}' "$t/same/report.json")"
grep -q "^coverage of perf_event_open's decisions (gcov, baseline kernel): reachable decision lines [0-9]*/[0-9]* " "$t/same/summary.txt" ||
	die "[1] summary.txt has no coverage line"
info "[1] $(grep "^coverage of perf_event_open" "$t/same/summary.txt")"
[ -n "$(random_contexts "$t/same")" ] || die "[1] the random workload did not run"
[ -n "$(contexts_of decisions "$t/same")" ] || die "[1] the decisions workload did not run"
# The normal kernel has tracepoints: the random workload draws them with a
# real one's id, which the corpus scenario reads as root.
tp_id=$(grep -a -m1 -o 'ANTINOMIE_TRACEPOINT_ID=[0-9]*' "$t/same/runs/baseline/console.log" | cut -d= -f2 || true)
[ -n "$tp_id" ] || die "[1] the corpus scenario exported no tracepoint id (see $t/same/runs/baseline/console.log)"
for ctx in $(random_contexts "$t/same"); do
	run=$t/same/runs/baseline/random/$ctx
	grep -q "; tracepoint id $tp_id\$" "$run/stderr" ||
		die "[1] random as $ctx did not draw tracepoint $tp_id: $(grep -m1 'tracepoint id' "$run/stderr" || echo 'no tracepoint line')"
	"$bins/reader" show "$run/trace.antinomie" --format json --no-summary >"$run/reader.jsonl" ||
		die "[1] reader show cannot decode $run/trace.antinomie"
	# Paranoid 2 and above without CAP_PERFMON (user-p4, user-p3, user-p2;
	# userns, whose caps hold in its namespace only) has no access to
	# kernel data, which the comparator's model of perf_copy_attr() needs
	# to know.
	access=()
	case $ctx in user-p4 | user-p3 | user-p2 | userns) access=(--no-kernel-access) ;; esac
	"$bins/antinomie-e2e" compare "${access[@]}" --workload "$run/stdout" --reader "$run/reader.jsonl" >"$run/compare.txt" 2>&1 ||
		{ tail -n 20 "$run/compare.txt" >&2; die "[1] the capture of random as $ctx differs from the workload's log"; }
	info "random as $ctx: $(tail -n 1 "$run/compare.txt")"
done
ci_formats_check_report "$t/same"

# outcome WORKLOAD CONTEXT: the outcome the report $r gives that run.
outcome() {
	jq -r --arg w "$1" --arg c "$2" '.runs[] | select(.workload == $w and .context == $c) | .outcome' "$r"
}

regress changed 1 --patch "$patch"
r=$t/changed/report.json
jq -e '.result == "changed" and .runs_could_not_test == 0' "$r" >/dev/null ||
	die "[2] report.json does not say changed: $(jq -c '{result, runs_differing, runs_could_not_test}' "$r")"
# A difference the rerun did not show (not-reproducible) is not reported.
others=$(jq -r '.runs[] | select((.outcome == "differ" or .outcome == "error") and .workload != "random" and .workload != "decisions" and .workload != "dependent") | "\(.workload) as \(.context): \(.outcome)"' "$r")
[ -z "$others" ] || die "[2] runs other than the three workloads' are reported: $others"
# check NAME WORKLOAD CONTEXT CHECK: antinomie-e2e CHECK (diff-check or
# cause-check) of the comparison the report of regress NAME shows for
# WORKLOAD as CONTEXT (the first run's, or its rerun's) against the
# workload's own logs.
check() {
	local name=$1 workload=$2 ctx=$3 what=$4
	regress_shown_check "$t/$name" "$workload" "$ctx" "$what" ||
		{ tail -n 20 "$shown_check_out" >&2; die "[$name] $workload as $ctx: reader diff's report differs from what the workload saw change ($what)"; }
	info "$workload as $ctx: $(jq -r --arg w "$workload" --arg c "$ctx" '.runs[] | select(.workload == $w and .context == $c) |
		"\(.outcome), \(.calls.differing) of \(.calls.a) calls differ"' "$t/$name/report.json"); $what: $(tail -n 1 "$shown_check_out")"
}
for w in random decisions; do
	for ctx in $(contexts_of "$w" "$t/changed"); do
		check changed "$w" "$ctx" diff-check
	done
done
# The change alters what a root caller gets, so every workload must see it
# there.
for w in random decisions dependent; do
	[ "$(outcome "$w" root)" = differ ] ||
		die "[2] $w as root: the change made no confirmed difference"
done
[ "$(jq -r '.runs[] | select(.workload == "dependent") | .context' "$r")" = root ] ||
	die "[2] the dependent workload did not run as root (and only as root)"
check changed dependent root cause-check
differ=$(jq '.runs_differing' "$r")
[ "$differ" -gt 0 ] || die "[2] the change made no confirmed difference"
[ "$(jq '.runs | map(select(.outcome == "differ")) | map(has("confirmed_by_rerun")) | all' "$r")" = true ] ||
	die "[2] a difference is reported without its rerun"
failures=$(grep -c '<failure ' "$t/changed/junit.xml" || true)
[ "$failures" = "$differ" ] || die "[2] junit.xml has $failures failures, report.json $differ differing runs"
grep -q '^regress: CHANGED (exit 1)' "$t/changed/summary.txt" || die "[2] summary.txt does not open with the result"
# The change is one hunk of perf_copy_attr(), which every random run
# executes.
jq -e '.coverage.change | (.hunks | length == 1) and .hunks[0].file == "kernel/events/core.c" and
	.hunks_reached == 1 and (.hunks[0].reached_by | index("random as root (changed)")) and .files_not_measured == []' "$r" >/dev/null ||
	die "[2] the change is not reported as one reached hunk of core.c: $(jq -c '.coverage.change | {hunks: [.hunks[] | {file, changed_lines, reached}], files_not_measured}' "$r")"
info "[2] $(grep -A1 '^change: ' "$t/changed/summary.txt" | paste -sd' ')"
# Where the changed results came from: every differing call of random as
# root that the rerun attributed gets E2BIG from perf_copy_attr() on the
# changed kernel, and a known producer on the baseline.
jq -e '[.runs[] | select(.workload == "random" and .context == "root") | .attribution.calls[]] |
	length > 0 and all(.changed.ret == -7 and .changed.producer == "perf_copy_attr" and (.baseline | has("producer")))' "$r" >/dev/null ||
	die "[2] random as root: the differing results are not all E2BIG from perf_copy_attr(): $(jq -c '[.runs[] | select(.workload == "random" and .context == "root") | .attribution | (.unknown // (.calls[:3] | map({b: .baseline, c: .changed})))]' "$r")"
info "[2] random as root: $(grep -m1 -A1 "where the first differing calls" "$t/changed/summary.txt" | tail -n 1 | sed 's/^ *//')"
# And every differing run's calls have a producer on each kernel that
# made them: no probe trace lost events, none is out of step with the
# capture (a call one kernel did not make, null there, has none).
# A run whose verdicts alone differ has no call to attribute.
known='def known: . == null or has("producer");
	def whole: (.attribution.calls // []) | length > 0 and all(.baseline | known) and all(.changed | known);'
jq -e "$known"' [.runs[] | select(.outcome == "differ" and .calls.differing > 0)] | all(whole)' "$r" >/dev/null ||
	die "[2] a differing run's results have no producer (see $t/changed/attribution.log): $(jq -c "$known"' [.runs[] |
		select(.outcome == "differ" and .calls.differing > 0 and (whole | not)) |
		"\(.workload) as \(.context): \(.attribution.unknown // ([.attribution.calls[]? | .baseline.unknown // .changed.unknown // empty] | first) // "no attribution")"][:3]' "$r")"
ci_formats_check_report "$t/changed"

stage "[3] a patch that does not apply"
sed 's/^ \tif (!size)$/ \tif (!size_that_is_not_there)/' "$patch" >"$t/stale.patch"
cmp -s "$patch" "$t/stale.patch" && die "[3] could not make a stale copy of $patch"
rc=0
"$regress" --out "$t/stale" --contexts root --patch "$t/stale.patch" >"$t/stale.log" 2>&1 || rc=$?
[ $rc -eq 125 ] || die "[3] a patch that does not apply made scripts/regress.sh exit $rc, not 125"
grep -q "stale.patch does not apply.*kernel/events/core.c:[0-9]" "$t/stale.log" ||
	die "[3] the error does not name the patch and its hunk: $(grep error: "$t/stale.log" | head -n 3)"
info "$(grep -m1 'does not apply' "$t/stale.log")"

# [4] A real change, on the random workload only: it refuses callers
# without CAP_SYS_ADMIN at paranoid 3, and leaves every other context as
# it was.
grep '^random ' "$ANTINOMIE_ROOT/qemu/corpus/default.list" >"$t/random.list"
corpus=$t/random.list contexts=root,user-p2,user-p3
regress real 1 --patch "$real"
r=$t/real/report.json
jq -e '.result == "changed" and .runs_could_not_test == 0' "$r" >/dev/null ||
	die "[4] report.json does not say changed: $(jq -c '{result, runs_differing, runs_could_not_test}' "$r")"
for ctx in root user-p2; do
	[ "$(outcome random "$ctx")" = equal ] || die "[4] random as $ctx: $(outcome random "$ctx"), not equal: the change is for paranoid 3 only"
done
[ "$(outcome random user-p3)" = differ ] || die "[4] random as user-p3: $(outcome random user-p3), not differ"
# The new check is in the open body: every differing call's EACCES comes
# from __perf_event_open() itself (capable() has no probe). The patch's
# Kconfig is outside the instrumented sources, and its hunk with the
# check was reached.
jq -e '[.runs[] | select(.workload == "random" and .context == "user-p3") | .attribution.calls[]] |
	length > 0 and all(.changed.ret == -13 and .changed.producer == "__perf_event_open")' "$r" >/dev/null ||
	die "[4] random as user-p3: the differing results are not all EACCES from __perf_event_open(): $(jq -c '[.runs[] | select(.context == "user-p3") | .attribution | (.unknown // (.calls[:3] | map(.changed)))]' "$r")"
jq -e '.coverage.change.files_not_measured == ["security/Kconfig"] and
	any(.coverage.change.hunks[]; .reached and (.added | index("return -EACCES;")))' "$r" >/dev/null ||
	die "[4] the change's lines are not as they are: $(jq -c '.coverage.change | {files_not_measured, hunks: [.hunks[] | {changed_lines, reached}]}' "$r")"
check real random user-p3 diff-check

# [5] A run the timeout stops did not finish: could not test, never a
# difference, whatever the two kernels' partial runs show.
echo 'sleeper root sleep 30' >"$t/sleeper.list"
corpus=$t/sleeper.list contexts=root
regress timeout 125 --timeout 2
r=$t/timeout/report.json
jq -e '.result == "could-not-test" and .runs_could_not_test == 1' "$r" >/dev/null ||
	die "[5] report.json does not say could not test: $(jq -c '{result, runs_could_not_test}' "$r")"
reason=$(jq -r '.runs[0].reason' "$r")
[[ "$reason" == *"stopped by the 2 s timeout"* ]] || die "[5] the reason does not name the timeout: $reason"
info "[5] sleeper as root: $reason"

# [6] A change the corpus never executes: equal, and says it saw nothing.
corpus=$t/random.list contexts=root
regress unreached 2 --patch "$unreached"
r=$t/unreached/report.json
jq -e '.result == "not-reached" and .runs_differing == 0 and .coverage.change.hunks_reached == 0 and
	(.coverage.change.hunks | length) > 0' "$r" >/dev/null ||
	die "[6] report.json does not say not reached: $(jq -c '{result, hunks: [.coverage.change.hunks[] | {file, changed_lines, reached}]}' "$r")"
grep -q "^regress: NOT-REACHED (exit 2): .*the corpus executed none of the change's lines" "$t/unreached/summary.txt" ||
	die "[6] summary.txt's first line does not say not reached: $(head -n 1 "$t/unreached/summary.txt")"
info "[6] $(head -n 1 "$t/unreached/summary.txt")"
# [7] A change that stalls the changed kernel in a call: a finding, with
# the kernel's own report, not a command that could not test.
grep '^decisions ' "$ANTINOMIE_ROOT/qemu/corpus/default.list" >"$t/decisions.list"
corpus=$t/decisions.list contexts=root,user-p2
regress stall 1 --patch "$stall"
r=$t/stall/report.json
jq -e '.result == "changed" and .runs_differing == 1 and .runs_could_not_test == 1 and
	([.runs[] | select(.outcome == "splat") | "\(.workload) \(.context)"] == ["decisions root"])' "$r" >/dev/null ||
	die "[7] report.json does not say decisions as root changed the kernel: $(jq -c '{result, runs: [.runs[] | {workload, context, outcome}]}' "$r")"
reason=$(jq -r '.runs[] | select(.outcome == "splat") | .reason' "$r")
[[ "$reason" == *"(stall in task_bp_pinned), and the same when it ran alone"* ]] ||
	die "[7] the reason does not name the stall and its confirmation: $reason"
jq -e '.runs[] | select(.outcome == "splat") | .kernel_report | any(test("task_bp_pinned"))' "$r" >/dev/null ||
	die "[7] the changed kernel's console in the report does not show where it stalled (task_bp_pinned)"
# The confirming boots ran: the changed kernel failed again, the
# baseline ran decisions as root to the end.
[ -s "$t/stall/runs/changed-splat/kernel-reports" ] ||
	die "[7] the changed kernel's second boot has no report of a failure: the splat was not confirmed"
[ "$(cat "$t/stall/runs/baseline-splat/decisions/root/status" 2>/dev/null)" = 0 ] ||
	die "[7] the baseline's second boot did not run decisions as root to the end"
grep -q "^regress: CHANGED (exit 1): .*the changed kernel reported a failure of its own" "$t/stall/summary.txt" ||
	die "[7] summary.txt's first line does not say the changed kernel failed: $(head -n 1 "$t/stall/summary.txt")"
ci_formats_check_report "$t/stall"
info "[7] decisions as root: $reason"
wait "$prebuild_pid"
stage "regression testing with the one command passed"
