#!/usr/bin/env bash
# Kernel regression testing, end to end, as a user does it: the seeded
# random workload (antinomie-workload random) under capture with
# scripts/run-in-guest.sh, and `reader diff` on the traces brought back.
# run-in-guest.sh captures in lossless mode and exits 125 if records were
# lost anyway, so every diff compares whole traces.
#   1. the normal kernel, twice: the first capture agrees field by field
#      with the workload's log (antinomie-e2e compare), and reader diff
#      finds nothing (exit 0; neither run may lose records: the reader's
#      summary counts them, and reader diff of a lossy run exits 3);
#   2. a kernel built with a deliberate one-line change to perf_copy_attr()
#      (scripts/tests/regression/perf-copy-attr-ver0.patch, never shipped):
#      reader diff exits 1 and reports exactly the calls whose outcome the
#      workload itself saw change between the two kernels, every one and
#      nothing else (antinomie-e2e diff-check, from the workloads' own logs);
#   3. a workload whose calls depend on earlier results (antinomie-workload
#      dependent: retries after E2BIG, group leaders reused as group_fd,
#      fallbacks, four threads) on the normal kernel twice (reader diff exit
#      0) and on the changed kernel: reader diff exits 1 and names, per
#      thread whose calls changed, exactly one cause, the first call whose
#      outcome the workload itself saw change, and reports every later
#      difference of that thread as its consequence (antinomie-e2e
#      cause-check, from the workloads' own logs).
# Needs the normal kernel and the guest binaries (the test command makes
# them); builds the changed kernel (ccache makes it one object).
#
# usage: scripts/tests/regression.sh [--seed S] [--calls N] [--rounds R]
#   --rounds R   rounds per thread of the dependent workload (default 150)
. "$(dirname "$0")/../lib.sh"

seed=20261130 calls=4000 rounds=150
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift ;;
	--calls) calls=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	*) die "unknown option $1" ;;
	esac
	shift
done
bins=${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release
for b in reader antinomie-workload antinomie-e2e; do
	[ -x "$bins/$b" ] || die "$bins/$b is missing (run qemu/build-initramfs.sh)"
done
patch=$ANTINOMIE_ROOT/scripts/tests/regression/perf-copy-attr-ver0.patch
runs=$ANTINOMIE_CACHE/regression
rm -rf "$runs"
mkdir -p "$runs"

# run NAME KERNEL_VARIANT WORKLOAD ARGS...: the workload under capture,
# results in $runs/NAME.
run() {
	local name=$1 variant=$2 rc=0
	shift 2
	stage "run $name on the '$variant' kernel: antinomie-workload $*"
	"$ANTINOMIE_ROOT/scripts/run-in-guest.sh" --variant "$variant" --out "$runs/$name" --timeout 900 \
		-- "$bins/antinomie-workload" "$@" || rc=$?
	[ $rc -eq 0 ] || die "run $name: the workload or the guest run failed, or its capture lost records (exit $rc)"
	# The reader's headline counts the loss by the kernel's final counters
	# (a LOST record may never be written): "... = C consumed + 0 lost".
	local headline
	headline=$(grep -m1 '^summary:' "$runs/$name/reader.stderr" || true)
	[ -n "$headline" ] || die "run $name: no summary in $runs/$name/reader.stderr"
	echo "$headline" | grep -qE ' consumed \+ 0 lost' ||
		die "run $name: the capture lost records, a diff would be inconclusive: $headline"
	info "$(grep -c . "$runs/$name/stdout") calls made, $(grep -c . "$runs/$name/reader.jsonl") captured"
}
random=(random --seed "$seed" --calls "$calls")
dependent=(dependent --seed "$seed" --rounds "$rounds" --threads 4)

# same_kernel X Y: reader diff of two runs on one kernel finds nothing.
same_kernel() {
	local rc=0
	stage "reader diff $1 $2 (same kernel): must find nothing"
	"$bins/reader" diff "$runs/$1/trace.antinomie" "$runs/$2/trace.antinomie" >"$runs/$1$2.txt" 2>&1 || rc=$?
	tail -n 5 "$runs/$1$2.txt" | sed 's/^/    /'
	[ $rc -ne 3 ] || die "reader diff of $1 and $2 is inconclusive: a run lost records (see $runs/$1$2.txt)"
	[ $rc -eq 0 ] || die "reader diff of two runs on the same kernel exited $rc (see $runs/$1$2.txt)"
}

# changed_kernel X Y: reader diff of a run on the normal kernel and one on
# the changed kernel exits 1; its JSON report is left in $runs/XY.json.
changed_kernel() {
	local rc=0
	stage "reader diff $1 $2 (the changed kernel): must report exactly what changed"
	"$bins/reader" diff "$runs/$1/trace.antinomie" "$runs/$2/trace.antinomie" >"$runs/$1$2.txt" 2>&1 || rc=$?
	[ $rc -ne 3 ] || die "reader diff of $1 and $2 is inconclusive: a run lost records (see $runs/$1$2.txt)"
	[ $rc -eq 1 ] || die "reader diff of the changed kernel exited $rc, not 1 (see $runs/$1$2.txt)"
	head -n 3 "$runs/$1$2.txt" | sed 's/^/    /'
	grep -A2 '^summary:' "$runs/$1$2.txt" | sed 's/^/    /'
	rc=0
	"$bins/reader" diff --format json "$runs/$1/trace.antinomie" "$runs/$2/trace.antinomie" >"$runs/$1$2.json" || rc=$?
	[ $rc -eq 1 ] || die "reader diff --format json of $1 and $2 exited $rc, not 1"
}

run a normal "${random[@]}"
stage "the reader on random calls: run a's capture against the workload's log (antinomie-e2e compare)"
"$bins/antinomie-e2e" compare --workload "$runs/a/stdout" --reader "$runs/a/reader.jsonl" \
	>"$runs/compare.txt" 2>&1 || { tail -n 20 "$runs/compare.txt" >&2; die "the capture of run a differs from the workload's log"; }
tail -n 2 "$runs/compare.txt" | sed 's/^/    /'
run b normal "${random[@]}"
same_kernel a b
run da normal "${dependent[@]}"
run db normal "${dependent[@]}"
same_kernel da db

stage "building the normal kernel with $(basename "$patch")"
KERNEL_TEST_PATCH=$patch "$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >/dev/null
changed=normal+$(basename "$patch" .patch)
run c "$changed" "${random[@]}"
changed_kernel a c
"$bins/antinomie-e2e" diff-check --workload-a "$runs/a/stdout" --workload-b "$runs/c/stdout" \
	--diff "$runs/ac.json" || die "reader diff's report differs from what the workloads saw change"
run dc "$changed" "${dependent[@]}"
changed_kernel da dc
"$bins/antinomie-e2e" cause-check --workload-a "$runs/da/stdout" --workload-b "$runs/dc/stdout" \
	--diff "$runs/dadc.json" || die "reader diff's causes and consequences differ from what the workloads saw change"
stage "regression workflow passed"
