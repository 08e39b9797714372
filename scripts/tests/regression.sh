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
#      nothing else (antinomie-e2e diff-check, from the workloads' own logs).
# Needs the normal kernel and the guest binaries (the test command makes
# them); builds the changed kernel (ccache makes it one object).
#
# usage: scripts/tests/regression.sh [--seed S] [--calls N]
. "$(dirname "$0")/../lib.sh"

seed=20261130 calls=4000
while [ $# -gt 0 ]; do
	case "$1" in
	--seed) seed=$2; shift ;;
	--calls) calls=$2; shift ;;
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

# run NAME KERNEL_VARIANT: the workload under capture, results in $runs/NAME.
run() {
	local rc=0
	stage "run $1 on the '$2' kernel: antinomie-workload random --seed $seed --calls $calls"
	"$ANTINOMIE_ROOT/scripts/run-in-guest.sh" --variant "$2" --out "$runs/$1" --timeout 900 \
		-- "$bins/antinomie-workload" random --seed "$seed" --calls "$calls" || rc=$?
	[ $rc -eq 0 ] || die "run $1: the workload or the guest run failed, or its capture lost records (exit $rc)"
	# The reader's headline counts the loss by the kernel's final counters
	# (a LOST record may never be written): "... = C consumed + 0 lost".
	local headline
	headline=$(grep -m1 '^summary:' "$runs/$1/reader.stderr" || true)
	[ -n "$headline" ] || die "run $1: no summary in $runs/$1/reader.stderr"
	echo "$headline" | grep -qE ' consumed \+ 0 lost' ||
		die "run $1: the capture lost records, a diff would be inconclusive: $headline"
	info "$(grep -c . "$runs/$1/stdout") calls made, $(grep -c . "$runs/$1/reader.jsonl") captured"
}

run a normal
stage "the reader on random calls: run a's capture against the workload's log (antinomie-e2e compare)"
"$bins/antinomie-e2e" compare --workload "$runs/a/stdout" --reader "$runs/a/reader.jsonl" \
	>"$runs/compare.txt" 2>&1 || { tail -n 20 "$runs/compare.txt" >&2; die "the capture of run a differs from the workload's log"; }
tail -n 2 "$runs/compare.txt" | sed 's/^/    /'
run b normal
stage "reader diff a b (same kernel): must find nothing"
rc=0
"$bins/reader" diff "$runs/a/trace.antinomie" "$runs/b/trace.antinomie" >"$runs/ab.txt" 2>&1 || rc=$?
tail -n 5 "$runs/ab.txt" | sed 's/^/    /'
[ $rc -ne 3 ] || die "reader diff of a and b is inconclusive: a run lost records (see $runs/ab.txt)"
[ $rc -eq 0 ] || die "reader diff of two runs on the same kernel exited $rc (see $runs/ab.txt)"

stage "building the normal kernel with $(basename "$patch")"
KERNEL_TEST_PATCH=$patch "$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >/dev/null
run c "normal+$(basename "$patch" .patch)"

stage "reader diff a c (the changed kernel): must report exactly what changed"
rc=0
"$bins/reader" diff "$runs/a/trace.antinomie" "$runs/c/trace.antinomie" >"$runs/ac.txt" 2>&1 || rc=$?
[ $rc -ne 3 ] || die "reader diff of a and c is inconclusive: a run lost records (see $runs/ac.txt)"
[ $rc -eq 1 ] || die "reader diff of the changed kernel exited $rc, not 1 (see $runs/ac.txt)"
head -n 3 "$runs/ac.txt" | sed 's/^/    /'
tail -n 4 "$runs/ac.txt" | sed 's/^/    /'
"$bins/reader" diff --format json "$runs/a/trace.antinomie" "$runs/c/trace.antinomie" >"$runs/ac.json" || rc=$?
"$bins/antinomie-e2e" diff-check --workload-a "$runs/a/stdout" --workload-b "$runs/c/stdout" \
	--diff "$runs/ac.json" || die "reader diff's report differs from what the workloads saw change"
stage "regression workflow passed"
