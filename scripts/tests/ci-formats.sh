#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The regression report for kernel CI systems (scripts/regress-report.py
# report: report.ktap, kcidb.json), read by their consumers' own code, on
# fixture results: the compare.json files and meta.json of
# scripts/tests/data/ci-formats/, cut from two runs of scripts/regress.sh
# (scripts/tests/regress.sh's real change and timeout) with one run made
# not reproducible, and a run in which the changed kernel reported a
# failure of its own twice (a mutant's RCU stall). Five workload x
# context runs: random as root equal, as user-p3 a difference its rerun
# confirmed, as user-p2 one the rerun did not show, sleeper as root
# stopped by the timeout (could not test), decisions as root a splat.
#   - the report exits 1 (changed) and writes every file;
#   - report.ktap, read by the pinned tree's kunit_parser.py: 2 passed,
#     2 failed (random.user-p3, its first differing call among its
#     diagnostic lines; decisions.root, the kernel's panic line among
#     its), 1 skipped (sleeper.root, with its reason), and no complaint
#     from the parser;
#   - kcidb.json, validated by kcidb-io: 2 checkouts, 2 builds, 5 tests
#     of the changed kernel's build: 2 PASS, 2 FAIL, 1 ERROR;
#   - both agree with report.json's counts (ci_formats_check_report, which
#     scripts/tests/regress.sh runs on its real reports);
#   - each check fails on a broken copy: a KTAP plan of 6 tests, a test
#     numbered out of order, no version line; a KCIDB status KCIDB does
#     not define, an id without its origin, a build of a checkout the
#     data does not hold.
# Needs the pinned source (scripts/kernel-source.sh) and kcidb-io from
# the Python package index (installed once into a venv under the cache);
# no kernel build, no guest.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../kernel-lib.sh"
. "$(dirname "$0")/../ci-formats-lib.sh"
need_cmd python3 jq

data=$ANTINOMIE_ROOT/scripts/tests/data/ci-formats
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ci_formats_setup

stage "the report of the fixture results"
out=$tmp/out
mkdir "$out"
rc=0
python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" report --first "$data/compare.json" \
	--rerun "$data/compare-rerun.json" --meta "$data/meta.json" --out "$out" || rc=$?
[ $rc -eq 1 ] || die "regress-report.py report exited $rc, not 1 (changed)"
for f in summary.txt report.json junit.xml report.ktap kcidb.json; do
	[ -s "$out/$f" ] || die "the report wrote no $f"
done
jq -e '[.runs[].outcome] == ["equal", "differ", "not-reproducible", "error", "splat"]' "$out/report.json" >/dev/null ||
	die "the fixture's outcomes are not equal, differ, not-reproducible, error, splat: $(jq -c '[.runs[].outcome]' "$out/report.json")"

stage "report.ktap read by $KUNIT_DIR/kunit_parser.py"
ktap_check "$out/report.ktap" 2 2 1
ktap_results "$out/report.ktap" >"$tmp/ktap" || die "kunit_parser.py failed on $out/report.ktap"
for want in "SUCCESS random.root" "FAILURE random.user-p3" "SUCCESS random.user-p2" "SKIPPED sleeper.root" \
	"FAILURE decisions.root"; do
	grep -qx "$want" "$tmp/ktap" || die "kunit_parser.py does not read '$want' in $out/report.ktap"
done
# Each test's diagnostic lines are the ones just above its result line.
first_call=$(jq -r '.[1].first_differences[0]' "$data/compare.json")
awk '/^FAILURE random.user-p3$/ { on = 1; next } /^[A-Z]/ { on = 0 } on' "$tmp/ktap" | grep -qF "$first_call" ||
	die "random.user-p3's diagnostic lines do not hold its first differing call ($first_call)"
awk '/^SKIPPED sleeper.root$/ { on = 1; next } /^[A-Z]/ { on = 0 } on' "$tmp/ktap" |
	grep -qF "could not test: baseline kernel: stopped by the 2 s timeout" ||
	die "sleeper.root's diagnostic lines do not say why it could not test"
awk '/^FAILURE decisions.root$/ { on = 1; next } /^[A-Z]/ { on = 0 } on' "$tmp/ktap" |
	grep -qF "Kernel panic - not syncing: RCU Stall" ||
	die "decisions.root's diagnostic lines do not hold the changed kernel's panic"
info "$(head -n 1 "$tmp/ktap"); the first differing call, the reason and the panic in the diagnostics"

stage "kcidb.json validated by kcidb-io $KCIDB_IO_VERSION"
kcidb_check "$out/kcidb.json" 5 2 2 1
info "2 checkouts, 2 builds, 5 tests: 2 PASS, 2 FAIL, 1 ERROR"

stage "both against report.json's counts, as scripts/tests/regress.sh checks its runs"
ci_formats_check_report "$out"

# must_fail NAME CHECK ARGS...: CHECK on a broken copy must die; its
# reason is shown.
must_fail() {
	local name=$1 why
	shift
	if ("$@") >"$tmp/log" 2>&1; then
		die "the check passed $name"
	fi
	why=$(grep -m1 '^error: ' "$tmp/log") || die "the check failed $name without a reason: $(tail -n 3 "$tmp/log")"
	info "$name: ${why#"error: $ANTINOMIE_PROG: "}"
}

stage "each check fails on broken output"
sed 's/^1\.\.5$/1..6/' "$out/report.ktap" >"$tmp/plan.ktap"
must_fail "a KTAP plan of 6 tests for 5" ktap_check "$tmp/plan.ktap" 2 2 1
sed 's/^ok 3 /ok 4 /' "$out/report.ktap" >"$tmp/number.ktap"
must_fail "a KTAP test numbered out of order" ktap_check "$tmp/number.ktap" 2 2 1
sed 1d "$out/report.ktap" >"$tmp/version.ktap"
must_fail "KTAP without its version line" ktap_check "$tmp/version.ktap" 2 2 1
for broken in '.tests[1].status = "FAILED"' '.tests[0].id |= sub("^antinomie:"; "")' \
	'.builds[1].checkout_id = "antinomie:elsewhere"'; do
	jq "$broken" "$out/kcidb.json" >"$tmp/broken.json" || die "jq '$broken' failed"
	must_fail "KCIDB data with $broken" kcidb_check "$tmp/broken.json" 5 2 2 1
done
stage "the report's KTAP and KCIDB output passed their consumers' checks"
