#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the regression corpus catches: small kernel mutants of
# perf_event_open's decisions (scripts/tests/regression/mutants.py: an
# errno changed, a bound moved by one, a condition negated, a check
# dropped; and refactors that must come out equal), drawn with a seed
# from the normal kernel's instrumented sources, each run through the one
# command as a user's patch would be: scripts/regress.sh --patch MUTANT.
# A behaviour mutant is caught when the report says changed (exit 1);
# not reached (2) and equal (0) are misses, apart in the table, as the
# first says the corpus never ran the line and the second that it ran it
# and no call's outcome moved (or that the mutant is equivalent). A
# refactor is right when equal or not reached. Could not test (125: a
# mutant that breaks the build or the boot) counts in neither.
# Prints a line per mutant as it goes and the table at the end; exits 0
# (the numbers are the result), 1 when a run failed in another way.
# Not a step of the test command: each mutant is a kernel build and at
# least two boots of the corpus.
#
# usage: scripts/tests/regression/mutants.sh [--seed S] [--count N]
#            [--refactors M] [--corpus LIST]... [--contexts LIST] [--out DIR]
#   --seed S        the draw (default 20261206)
#   --count N       behaviour mutants (default 20)
#   --refactors M   refactors (default 5)
#   --corpus LIST   passed to scripts/regress.sh (default: its default
#                   corpus); repeat for several
#   --contexts LIST passed to scripts/regress.sh (default: all nine)
#   --out DIR       where the mutants, each report and the table go
#                   (default: $ANTINOMIE_CACHE/mutants)
. "$(dirname "$0")/../../lib.sh"

seed=20261206 count=20 refactors=5 out=$ANTINOMIE_CACHE/mutants corpus=() contexts=()
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value (see the header of $0)"
	case "$1" in
	--seed) seed=$2 ;;
	--count) count=$2 ;;
	--refactors) refactors=$2 ;;
	--corpus) corpus+=(--corpus "$2") ;;
	--contexts) contexts=(--contexts "$2") ;;
	--out) out=$2 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift 2
done
need_cmd python3 jq

stage "the normal kernel, whose instrumented sources the mutants change"
"$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$ANTINOMIE_CACHE/mutants-build.log" 2>&1 </dev/null ||
	die "building the normal kernel failed (see $ANTINOMIE_CACHE/mutants-build.log)"
sources=$ANTINOMIE_CACHE/kernels/normal/coverage
[ -d "$sources" ] || die "$sources is missing: the normal kernel has no gcov (kconfig/coverage.config)"
rm -rf "$out"
mkdir -p "$out"
python3 "$ANTINOMIE_ROOT/scripts/tests/regression/mutants.py" --sources "$sources" --seed "$seed" \
	--count "$count" --refactors "$refactors" --out "$out/mutants" || die "drawing the mutants failed"

table=$out/table.txt
printf '%-22s %-9s %-60s %s\n' mutant kind site result >"$table"
failed=0
for m in "$out"/mutants/*.patch; do
	name=$(basename "$m" .patch)
	kind=$(sed -n 's/^Kind: //p' "$m")
	site=$(head -n 1 "$m" | sed 's/^Mutant [0-9]* of seed [0-9]*: //')
	stage "$name: $site"
	rc=0
	"$ANTINOMIE_ROOT/scripts/regress.sh" --patch "$m" "${corpus[@]}" "${contexts[@]}" \
		--out "$out/$name" >"$out/$name.log" 2>&1 </dev/null || rc=$?
	case "$kind:$rc" in
	behaviour:1) result=caught ;;
	behaviour:2) result="missed: not reached" ;;
	behaviour:0) result="missed: reached, every call equal" ;;
	refactor:0 | refactor:2) result=equal ;;
	refactor:1) result="false alarm: changed" ;;
	*:125) result="could not test: $(grep -m1 'error:' "$out/$name.log" | cut -c1-120)" ;;
	*)
		result="failed: exit $rc (see $out/$name.log)"
		failed=1
		;;
	esac
	info "$result"
	printf '%-22s %-9s %-60s %s\n' "$name" "$kind" "$site" "$result" >>"$table"
done

behaviour=$(grep -c ' behaviour ' "$table" || true)
caught=$(grep -c ' caught$' "$table" || true)
unreached=$(grep -c 'missed: not reached' "$table" || true)
equal=$(grep -c 'missed: reached' "$table" || true)
untested=$(grep ' behaviour ' "$table" | grep -c 'could not test' || true)
refactor_total=$(grep -c ' refactor ' "$table" || true)
refactor_equal=$(grep ' refactor ' "$table" | grep -c ' equal$' || true)
{
	echo
	echo "behaviour mutants: $caught of $((behaviour - untested)) caught; $unreached not reached, $equal reached but equal, $untested could not test"
	echo "refactors: $refactor_equal of $refactor_total equal"
} >>"$table"
stage "mutants of seed $seed: $out/table.txt"
cat "$table"
exit $failed
