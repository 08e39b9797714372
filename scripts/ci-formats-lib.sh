# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Checks of what scripts/regress-report.py writes for kernel CI systems,
# each with the consumer's own code: report.ktap read by the pinned tree's
# tools/testing/kunit/kunit_parser.py (the kernel's KTAP parser, which
# kunit.py reads KUnit's results with), kcidb.json validated by kcidb-io
# (KCIDB's I/O library, from the Python package index, in a venv under the
# cache). Used by scripts/tests/ci-formats.sh (fixture results) and
# scripts/tests/regress.sh (real runs). Source it after scripts/lib.sh and
# scripts/kernel-lib.sh, then call ci_formats_setup; a failed check dies
# with the reason.

# kcidb-io's release whose newest schema (5.3) regress-report.py writes.
KCIDB_IO_VERSION=141

# ci_formats_setup: KUNIT_DIR, the pinned tree's tools/testing/kunit, and
# KCIDB_PYTHON, a python with kcidb-io, installed on first use. The tree
# is the pristine source (resolve_source), which nothing modifies: the
# build tree would do as well (the series leaves tools/testing/kunit
# alone), but sync_build_tree rewrites it when the series changed, under
# a kernel build that may be using it.
ci_formats_setup() {
	resolve_source
	KUNIT_DIR=$SRC_DIR/tools/testing/kunit
	[ -f "$KUNIT_DIR/kunit_parser.py" ] || die "no kunit_parser.py in $KUNIT_DIR (is $SRC_DIR the pinned tree?)"
	python_venv "kcidb-io-$KCIDB_IO_VERSION" 'import kcidb_io' "kcidb-io==$KCIDB_IO_VERSION"
	KCIDB_PYTHON=$ANTINOMIE_CACHE/venv/kcidb-io-$KCIDB_IO_VERSION/bin/python
}

# ktap_results FILE: FILE read by kunit_parser.py. The counts on the first
# line ("passed P failed F skipped S crashed C errors E": errors are the
# parser's complaints, crashed the tests it found missing), then per test
# "STATUS NAME" and its diagnostic lines, each indented by two spaces.
# The parser's own report goes to FILE.kunit.log.
ktap_results() {
	python3 "$ANTINOMIE_ROOT/scripts/ktap-results.py" "$KUNIT_DIR" "$1" 3>&1 >"$1.kunit.log" 2>&1
}

# ktap_check FILE PASSED FAILED SKIPPED: kunit_parser.py reads FILE
# without a complaint and counts these results.
ktap_check() {
	local file=$1 want="passed $2 failed $3 skipped $4 crashed 0 errors 0" got
	got=$(ktap_results "$file") || die "kunit_parser.py failed on $file: $(tail -n 3 "$file.kunit.log")"
	got=$(head -n 1 <<<"$got")
	[ "$got" = "$want" ] ||
		die "kunit_parser.py reads $file as '$got', not '$want' (its report: $file.kunit.log)"
}

# kcidb_check FILE TESTS PASS FAIL ERROR: FILE is KCIDB I/O data of
# kcidb-io's newest schema, valid by its validator, with two checkouts,
# a build of each, and TESTS tests of the second build, whose statuses
# are PASS, FAIL and ERROR as counted. The ids each object names must be
# in the data: the schema does not check that.
kcidb_check() {
	local file=$1 want="checkouts 2 builds 2 tests $2 PASS $3 FAIL $4 ERROR $5" got
	got=$("$KCIDB_PYTHON" "$ANTINOMIE_ROOT/scripts/kcidb-check.py" "$file" 2>&1) || die "$file is not valid KCIDB data: $got"
	[ "$got" = "$want" ] || die "$file holds '$got', not '$want'"
}

# ci_formats_check_report DIR: DIR's report.ktap and kcidb.json hold
# report.json's results: a test per run, failed where the run differs,
# skipped (KTAP) or ERROR (KCIDB) where it could not test, passed
# otherwise.
ci_formats_check_report() {
	local dir=$1 counts total differ error
	counts=$(jq -r '"\(.runs_total) \(.runs_differing) \(.runs_could_not_test)"' "$dir/report.json") ||
		die "cannot read the counts of $dir/report.json"
	read -r total differ error <<<"$counts"
	ktap_check "$dir/report.ktap" $((total - differ - error)) "$differ" "$error"
	kcidb_check "$dir/kcidb.json" "$total" $((total - differ - error)) "$differ" "$error"
	info "report.ktap (kunit_parser.py) and kcidb.json (kcidb-io $KCIDB_IO_VERSION): $total tests, $differ failed, $error could not test"
}
