#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What the regression corpus catches: small kernel mutants of
# perf_event_open's decisions (scripts/tests/regression/mutants.py: an
# errno changed, a bound moved by one, a condition negated, a check
# dropped; and refactors that must come out equal), drawn with a seed
# from the normal kernel's instrumented sources, each run through the one
# command as a user's patch would be: scripts/regress.sh --patch MUTANT.
# A behaviour mutant is caught when the report says changed (exit 1:
# calls or verdicts differ, or the changed kernel reported a failure of
# its own, a stall or an Oops, where the baseline ran to the end);
# not reached (2) and equal (0) are misses, apart in the table with what
# the coverage report says of the mutated lines (reached, reached only as
# far as their guard, not reached, not measured): an equal mutant whose
# lines ran moved no call's outcome, or is equivalent. A refactor is
# right when equal. Could not test (125: a mutant that breaks the build,
# the boot, or makes a run take longer than --timeout) counts in neither.
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
#   --corpus LIST   passed to scripts/regress.sh (default:
#                   qemu/corpus/default.list); repeat for several
#   --contexts LIST passed to scripts/regress.sh (default: all nine)
#   --from K        go on with the run in --out from its K-th mutant
#                   (its mutants and the table's rows before K are kept)
#   --timeout S     one run's longest time in the guest (default 60: a
#                   default-corpus run takes seconds; a mutant can hang)
#   --out DIR       where the mutants, each report and the table go
#                   (default: $ANTINOMIE_CACHE/mutants); a directory this
#                   script made, or a new one
. "$(dirname "$0")/../../lib.sh"

seed=20261206 count=20 refactors=5 from=1 timeout=60 out=$ANTINOMIE_CACHE/mutants corpus=() contexts=()
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value (see the header of $0)"
	case "$1" in
	--seed) seed=$2 ;;
	--count) count=$2 ;;
	--refactors) refactors=$2 ;;
	--corpus) corpus+=(--corpus "$2") ;;
	--contexts) contexts=(--contexts "$2") ;;
	--timeout) timeout=$2 ;;
	--from) from=$2 ;;
	--out) out=$2 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift 2
done
need_cmd python3 jq
[[ "$from" =~ ^[1-9][0-9]*$ ]] || die "--from $from: not a mutant's number"
[ ${#corpus[@]} -gt 0 ] || corpus=(--corpus "$ANTINOMIE_ROOT/qemu/corpus/default.list")

stage "the normal kernel, whose instrumented sources the mutants change"
"$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$ANTINOMIE_CACHE/mutants-build.log" 2>&1 </dev/null ||
	die "building the normal kernel failed (see $ANTINOMIE_CACHE/mutants-build.log)"
# Every mutant's run needs the reader and the guest's programs: built
# once here, or each mutant would only say it could not test.
stage "the guest's programs (qemu/build-initramfs.sh)"
mkdir -p "$ANTINOMIE_CACHE/mutants-image"
"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$ANTINOMIE_CACHE/mutants-image/initramfs.cpio" \
	>"$ANTINOMIE_CACHE/mutants-image.log" 2>&1 </dev/null ||
	die "building the guest's programs failed (see $ANTINOMIE_CACHE/mutants-image.log)"
sources=$ANTINOMIE_CACHE/kernels/normal/coverage
[ -d "$sources" ] || die "$sources is missing: the normal kernel has no gcov (kconfig/coverage.config)"
table=$out/table.txt
if [ "$from" -gt 1 ]; then
	# Going on: the same directory, its mutants and its table so far.
	if [ ! -f "$out/.antinomie-mutants" ] || [ ! -f "$table" ]; then
		die "--from $from: $out holds no earlier run of this script to go on with"
	fi
	sed -i '/^$/,$d' "$table"
	awk -v from="$from" 'NR == 1 || $1 + 0 < from' "$table" >"$table.tmp" && mv "$table.tmp" "$table"
else
	# Only a directory this script made is emptied.
	if [ -e "$out" ]; then
		[ -f "$out/.antinomie-mutants" ] || [ -z "$(ls -A "$out")" ] ||
			die "--out $out exists and is not a mutants directory: give a new one"
		rm -rf "$out"
	fi
	mkdir -p "$out" || die "cannot make $out"
	touch "$out/.antinomie-mutants"
	python3 "$ANTINOMIE_ROOT/scripts/tests/regression/mutants.py" --sources "$sources" --seed "$seed" \
		--count "$count" --refactors "$refactors" --out "$out/mutants" || die "drawing the mutants failed"
	printf '%-22s %-9s %-60s %s\n' mutant kind site result >"$table"
fi
failed=0
for m in "$out"/mutants/*.patch; do
	name=$(basename "$m" .patch)
	[ $((10#${name%%-*})) -ge "$from" ] || continue
	kind=$(sed -n 's/^Kind: //p' "$m")
	site=$(head -n 1 "$m" | sed 's/^Mutant [0-9]* of seed [0-9]*: //')
	stage "$name: $site"
	rc=0
	"$ANTINOMIE_ROOT/scripts/regress.sh" --patch "$m" "${corpus[@]}" "${contexts[@]}" --timeout "$timeout" \
		--out "$out/$name" >"$out/$name.log" 2>&1 </dev/null || rc=$?
	# What the coverage report says of the mutated lines.
	reach=$(jq -r '.coverage.change.hunks // [] | map(if .reached then (if .reached_via == "guard" then "reached as far as its guard" else "reached" end)
		elif .measured_lines > 0 then "not reached" else "not measured" end) | unique | join(", ") | if . == "" then "no coverage" else . end' \
		"$out/$name/report.json" 2>/dev/null || echo "no report")
	case "$kind:$rc" in
	behaviour:1)
		result=caught
		# A change can be caught by the kernel's own report of a failure
		# (a stall, an Oops) instead of by a call's result.
		if jq -e '.runs | any(.outcome == "splat")' "$out/$name/report.json" >/dev/null 2>&1; then
			result="caught: the changed kernel reported a failure of its own"
		fi
		;;
	behaviour:2) result="missed: not reached" ;;
	behaviour:0) result="missed: equal; lines $reach" ;;
	refactor:0) result=equal ;;
	refactor:2) result="not reached" ;;
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
caught=$(grep -cE ' caught(:|$)' "$table" || true)
unreached=$(grep -c 'missed: not reached' "$table" || true)
equal=$(grep -c 'missed: equal' "$table" || true)
untested=$(grep ' behaviour ' "$table" | grep -c 'could not test' || true)
refactor_total=$(grep -c ' refactor ' "$table" || true)
refactor_equal=$(grep ' refactor ' "$table" | grep -c ' equal$' || true)
{
	echo
	echo "behaviour mutants: $caught of $((behaviour - untested)) caught; $unreached not reached, $equal equal, $untested could not test"
	echo "refactors: $refactor_equal of $refactor_total equal"
} >>"$table"
stage "mutants of seed $seed: $out/table.txt"
cat "$table"
exit $failed
