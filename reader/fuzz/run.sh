#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzzes one reader target for a fixed time with AFL++, through afl.rs
# (cargo-afl): coverage-guided, on the stable toolchain (cargo-fuzz's
# libFuzzer needs nightly). The corpus is seeded from the golden files
# (fuzz-seeds); a crash fails the run and must become a regression test.
#
# usage: reader/fuzz/run.sh ring|trace|filter [SECONDS]   (default 60)
#   ring    a golden ring image, drained, merged, paired, shown as text and JSON
#   trace   a trace file, streamed (TraceReader) and shown the same way
#   filter  a --filter expression: parsed, printed back, evaluated
# Needs: cargo install cargo-afl && cargo afl config --build
. "$(dirname "$0")/../../scripts/lib.sh"

target=${1:-}
secs=${2:-60}
case $target in
ring | trace | filter) ;;
*) die "usage: reader/fuzz/run.sh ring|trace|filter [SECONDS]" ;;
esac
[[ $secs =~ ^[0-9]+$ ]] || die "SECONDS must be a whole number, not '$secs'"
need_cmd cargo
cargo afl --version >/dev/null 2>&1 ||
	die "cargo-afl is missing: cargo install cargo-afl && cargo afl config --build"

fuzz=$ANTINOMIE_ROOT/reader/fuzz
work=$ANTINOMIE_CACHE/fuzz
mkdir -p "$work"

stage "seeds from the golden files"
rm -rf "$work/seeds"
(cd "$fuzz" && cargo run -q --locked --bin fuzz-seeds -- "$work/seeds") ||
	die "writing the seeds failed"
info "$(find "$work/seeds/$target" -type f | wc -l) seeds for $target"

stage "building fuzz-$target with AFL++ instrumentation"
(cd "$fuzz" && cargo afl build -q --locked --release --bin "fuzz-$target") ||
	die "cargo afl build failed"

stage "fuzzing fuzz-$target for ${secs}s"
out=$work/out-$target
rm -rf "$out"
log=$work/afl-$target.log
AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
	cargo afl fuzz -i "$work/seeds/$target" -o "$out" -V "$secs" \
	"$fuzz/target/release/fuzz-$target" >"$log" 2>&1 ||
	die "afl-fuzz failed (see $log)"

stats=$out/default/fuzzer_stats
[ -f "$stats" ] || die "afl-fuzz wrote no $stats (see $log)"
stat() { awk -F: -v k="$1" '$1 ~ "^"k" *$" { gsub(/ /, "", $2); print $2 }' "$stats"; }
crashes=$(stat saved_crashes)
info "$(stat execs_done) executions, $(stat corpus_count) corpus entries, $(stat bitmap_cvg) coverage, $crashes crashes, $(stat saved_hangs) hangs"
[ "$crashes" = 0 ] || die "$crashes crashing inputs under $out/default/crashes: make each a regression test"
stage "done: no crash"
