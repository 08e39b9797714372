#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The real kernel changes of scripts/tests/regression/changes/ through the
# one command, each judged against what its own header says it changes.
# For every change: scripts/regress.sh --patch CHANGE with the seeded
# random workload (qemu/corpus/default.list's "random" line) in every
# privilege context; then, per context,
#   - the outcome must be "differ" in exactly the contexts the change's
#     "Differs as:" header line names, "equal" in every other one (no run
#     may be lossy or fail: "could not test" fails the check);
#   - reader diff's report must name exactly the calls whose outcome the
#     workload's own logs show changed between the two kernels, every one
#     and nothing else (antinomie-e2e diff-check), in every context, equal
#     ones included (there: none).
# Prints one line per change x context (with, for a differing one, where
# its differing results came from on each kernel: the report's attribution)
# and one per change (its hunks reached), and the whole table at the end;
# exits 1 when a change's result is not its expectation, 0 when every
# change matched.
# Needs what scripts/regress.sh needs; builds each changed kernel (from a
# copy of the normal build: what the change touches and a link).
#
# usage: scripts/tests/regression/check-changes.sh [--seed S]
#            [--contexts LIST] [--out DIR] [CHANGE.patch]...
#   CHANGE.patch   the changes to check (default: every changes/*.patch)
#   --contexts     the contexts (default: all nine)
#   --out DIR      where each change's report goes, DIR/NAME (default: a
#                  fresh directory under $ANTINOMIE_CACHE)
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../guest-lib.sh"

seed=20261130 contexts=all out=$ANTINOMIE_CACHE/check-changes changes=()
while [ $# -gt 0 ]; do
	case "$1" in
	--seed | --contexts | --out) [ $# -ge 2 ] || die "$1 needs a value" ;;
	esac
	case "$1" in
	--seed) seed=$2; shift ;;
	--contexts) contexts=$2; shift ;;
	--out) out=$2; shift ;;
	-*) die "unknown option $1 (see the header of $0)" ;;
	*) changes+=("$1") ;;
	esac
	shift
done
need_cmd jq
# Every change's run needs the reader and the guest's programs: built
# once here, or each change would only say it could not test.
stage "the guest's programs (qemu/build-initramfs.sh)"
mkdir -p "$ANTINOMIE_CACHE/check-changes-image"
"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$ANTINOMIE_CACHE/check-changes-image/initramfs.cpio" \
	>"$ANTINOMIE_CACHE/check-changes-image.log" 2>&1 </dev/null ||
	die "building the guest's programs failed (see $ANTINOMIE_CACHE/check-changes-image.log)"
[ ${#changes[@]} -gt 0 ] || changes=("$ANTINOMIE_ROOT"/scripts/tests/regression/changes/*.patch)
[ "$contexts" != all ] || contexts=$(IFS=, && echo "${ALL_CONTEXTS[*]}")
IFS=, read -r -a wanted <<<"$contexts"

# expected_differ PATCH: the contexts its "Differs as:" line names ("none":
# empty); a change without the line cannot be checked.
expected_differ() {
	local line
	line=$(grep -m1 '^Differs as: ' "$1") || die "$1 has no 'Differs as:' line saying where it changes calls"
	line=${line#Differs as: }
	[ "$line" = none ] || echo "$line"
}

rm -rf "$out"
mkdir -p "$out"
grep '^random ' "$ANTINOMIE_ROOT/qemu/corpus/default.list" >"$out/random.list" ||
	die "qemu/corpus/default.list has no random line"
table=$out/table.txt
printf '%-42s %-8s %-7s %9s %s\n' change context outcome differing "diff-check; producers (baseline -> changed)" >"$table"
# producers: jq of a report's run: where its attributed differing calls'
# results came from on each kernel, counted ("" for an equal run).
producers='if .attribution then "; " + (if .attribution.unknown then "unknown: \(.attribution.unknown)" else
	[.attribution.calls[] | "\(.baseline.producer // "?") -> \(.changed.producer // "?") \(.changed.ret)"] |
	group_by(.) | map("\(length) x \(.[0])") | join(", ") end) else "" end'
failed=0
for change in "${changes[@]}"; do
	[ -f "$change" ] || die "$change: no such file"
	name=$(basename "$change" .patch)
	read -r -a differ <<<"$(expected_differ "$change")"
	stage "$name: scripts/regress.sh (want differ as: ${differ[*]:-none})"
	rc=0
	"$ANTINOMIE_ROOT/scripts/regress.sh" --out "$out/$name" --seed "$seed" --contexts "$contexts" \
		--corpus "$out/random.list" --patch "$change" >"$out/$name.log" 2>&1 || rc=$?
	report=$out/$name/report.json
	if [ $rc -eq 125 ] || [ ! -f "$report" ]; then
		tail -n 20 "$out/$name.log" >&2
		die "$name: scripts/regress.sh could not test (exit $rc, see $out/$name.log)"
	fi
	bad=0
	for ctx in "${wanted[@]}"; do
		want=equal
		for d in "${differ[@]}"; do [ "$d" = "$ctx" ] && want=differ; done
		run=$(jq -c --arg c "$ctx" '.runs[] | select(.workload == "random" and .context == $c)' "$report")
		[ -n "$run" ] || die "$name: the report has no run of random as $ctx"
		got=$(jq -r .outcome <<<"$run")
		check=ok
		regress_shown_check "$out/$name" random "$ctx" diff-check || check=MISMATCH
		printf '%-42s %-8s %-7s %9s %s\n' "$name" "$ctx" "$got" \
			"$(jq -r '"\(.calls.differing)/\(.calls.a)"' <<<"$run")" \
			"$check: $(tail -n 1 "$shown_check_out")$(jq -r "$producers" <<<"$run")" | tee -a "$table"
		if [ "$got" != "$want" ] || [ $check != ok ]; then
			info "$name as $ctx: want $want with diff-check ok; see $shown_check_out"
			bad=1
		fi
	done
	info "$name: $(jq -r '.coverage.change // null | if . == null then "no coverage in the report" else
		"\(.hunks_reached) of \(.hunks | length) hunks reached" +
		(if .files_not_measured != [] then "; not measured: \(.files_not_measured | join(", "))" else "" end) end' "$report")" |
		tee -a "$table"
	[ $bad -eq 0 ] || failed=$((failed + 1))
done
stage "${#changes[@]} changes x ${#wanted[@]} contexts, $failed change(s) not as expected"
cat "$table"
[ $failed -eq 0 ] || die "$failed change(s) did not change exactly what their headers say"
