#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The regression corpus on the booted kernel, as a LAVA test: runs a
# bundle's run-corpus (scripts/regress.sh --bundle; qemu/guest/run-corpus),
# judges every workload x context it ran, and packs its results directory
# into one tarball, the artifact that `scripts/regress.sh --compare A B
# --rerun A2 B2` reads once unpacked (two jobs per kernel: the run and its
# rerun).
#
# Writes, in Linaro's test-definitions style, output/result.txt: one
# "NAME RESULT" line a test case, which the yaml's send-to-lava.sh turns
# into lava-test-case calls:
#   WORKLOAD.CONTEXT  pass when the run was made and its capture is whole
#                     (the checks of regress-report.py's side_problem: every
#                     result file there, not stopped by the timeout, the
#                     context set up, the reader's summary present, no
#                     record lost, none corrupt), fail otherwise; the
#                     reason is printed above the results
#   antinomie-corpus  the run as a whole: run-corpus exited 0 and left the
#                     corpus's files (entries, corpus.json, kernel) and a
#                     directory for every entry
#   artifact          the tarball output/antinomie-results.tar.gz (its
#                     top directory: results/) was made and, with -d or -a,
#                     handed over; skip when there was nothing to pack
# The WORKLOAD.CONTEXT verdicts are about the capture, not about the
# kernel's behaviour: that is what --compare of two jobs' artifacts says.
#
# usage: ./antinomie-corpus.sh [-b BUNDLE] [-d DEVICE] [-a DIR]
#   -b BUNDLE  the bundle's directory on the device (default
#              /opt/antinomie-bundle); its run-corpus runs as root
#   -d DEVICE  also write the artifact to this block device, as a tar
#              stream holding antinomie-results.tar.gz and SHA256SUMS (a
#              device with no network: a disk QEMU gives the guest, read
#              back on the host with tar -xf)
#   -a DIR     also copy the artifact into DIR (a directory shared with
#              the host, e.g. tuxrun --shared's /mnt/tuxrun)
# Exit status: 0 when the results were written (the test cases carry the
# verdicts), 1 on a usage error.
OUTPUT="$(pwd)/output"
RESULT_FILE="$OUTPUT/result.txt"
BUNDLE=/opt/antinomie-bundle
ARTIFACT_DEVICE=""
ARTIFACT_DIR=""

usage() {
	echo "usage: $0 [-b BUNDLE] [-d DEVICE] [-a DIR]" >&2
	exit 1
}
while getopts "b:d:a:h" opt; do
	case "$opt" in
	b) BUNDLE=$OPTARG ;;
	d) ARTIFACT_DEVICE=$OPTARG ;;
	a) ARTIFACT_DIR=$OPTARG ;;
	*) usage ;;
	esac
done

say() { echo "antinomie-corpus: $*"; }
# result NAME pass|fail|skip [WHY]: one line of result.txt; WHY is printed.
result() {
	[ -z "${3:-}" ] || say "$1: $2: $3"
	echo "$1 $2" >>"$RESULT_FILE"
}

# run_problem DIR CONTEXT: why the run in DIR cannot be compared (empty when
# it can), as scripts/regress-report.py's side_problem says it.
run_problem() {
	for f in status stdout stderr trace.antinomie reader.stderr reader.status; do
		[ -e "$1/$f" ] || {
			echo "no $f in the results"
			return
		}
	done
	if [ -e "$1/timed-out" ]; then
		echo "stopped by the $(cat "$1/timed-out") s timeout, so it did not finish"
		return
	fi
	# antinomie-context writes "context: NAME ..." first, once the
	# credentials are what the context claims.
	first=$(head -n 1 "$1/stderr")
	case "$first" in
	"context: $2 "*) ;;
	*)
		echo "the context was not set up: $(tail -n 1 "$1/stderr")"
		return
		;;
	esac
	# The reader's --summary json object, the last line of reader.stderr
	# that is one (reader/README.md); its "records" object holds no other.
	summary=$(grep '^{' "$1/reader.stderr" | tail -n 1)
	if [ -z "$summary" ]; then
		echo "the capture failed: the reader exited $(cat "$1/reader.status") with no summary"
		return
	fi
	records=$(echo "$summary" | sed -n 's/.*"records": *{\([^{}]*\)}.*/\1/p')
	lost=$(echo "$records" | sed -n 's/.*"lost": *\([0-9]*\).*/\1/p')
	if ! echo "$records" | grep -q '"lost_exact": *true'; then
		echo "the capture lost at least ${lost:-?} records (final counters unknown)"
	elif [ "$lost" != 0 ]; then
		echo "the capture lost ${lost:-?} records"
	elif ! echo "$summary" | grep -q '"capture_whole": *true'; then
		echo "the capture found corrupt records"
	fi
}

mkdir -p "$OUTPUT" || exit 1
rm -rf "$OUTPUT/results" "$OUTPUT/antinomie-results.tar.gz" "$RESULT_FILE"
: >"$RESULT_FILE" || exit 1
say "kernel $(uname -rv); bundle $BUNDLE"

rc=0
if [ ! -x "$BUNDLE/run-corpus" ]; then
	result antinomie-corpus fail "no $BUNDLE/run-corpus: not a bundle (scripts/regress.sh --bundle)"
else
	"$BUNDLE/run-corpus" "$OUTPUT/results" >"$OUTPUT/run-corpus.log" 2>&1 || rc=$?
	cat "$OUTPUT/run-corpus.log"
	entries=$OUTPUT/results/entries
	if [ ! -f "$entries" ]; then
		result antinomie-corpus fail "run-corpus exited $rc and left no list of entries ($entries)"
	else
		missing=0
		while read -r name context _; do
			[ -n "$name" ] || continue
			dir=$OUTPUT/results/$name/$context
			if [ ! -d "$dir" ]; then
				missing=$((missing + 1))
				result "$name.$context" fail "no results directory ($dir)"
				continue
			fi
			why=$(run_problem "$dir" "$context")
			if [ -n "$why" ]; then
				result "$name.$context" fail "$why"
			else
				result "$name.$context" pass
			fi
		done <"$entries"
		if [ "$rc" -ne 0 ]; then
			result antinomie-corpus fail "run-corpus exited $rc"
		elif [ ! -f "$OUTPUT/results/corpus.json" ] || [ ! -f "$OUTPUT/results/kernel" ]; then
			result antinomie-corpus fail "the results lack corpus.json or kernel"
		elif [ "$missing" -ne 0 ]; then
			result antinomie-corpus fail "$missing entries left no results directory"
		else
			result antinomie-corpus pass
		fi
	fi
fi

# The artifact: whatever results there are, packed, so that a failed run
# can be looked at too.
tarball=$OUTPUT/antinomie-results.tar.gz
if [ ! -d "$OUTPUT/results" ]; then
	result artifact skip "no results to pack"
elif ! tar -czf "$tarball" -C "$OUTPUT" results; then
	result artifact fail "tar could not pack $OUTPUT/results"
else
	(cd "$OUTPUT" && sha256sum antinomie-results.tar.gz >SHA256SUMS)
	say "artifact $tarball: $(wc -c <"$tarball") bytes, sha256 $(cut -d ' ' -f 1 "$OUTPUT/SHA256SUMS")"
	why=""
	if [ -n "$ARTIFACT_DIR" ]; then
		{ mkdir -p "$ARTIFACT_DIR" && cp "$tarball" "$OUTPUT/SHA256SUMS" "$ARTIFACT_DIR/"; } ||
			why="cannot copy it into $ARTIFACT_DIR"
	fi
	if [ -n "$ARTIFACT_DEVICE" ]; then
		if [ ! -b "$ARTIFACT_DEVICE" ]; then
			why="$why${why:+; }$ARTIFACT_DEVICE is not a block device"
		elif ! tar -cf "$ARTIFACT_DEVICE" -C "$OUTPUT" antinomie-results.tar.gz SHA256SUMS; then
			why="$why${why:+; }cannot write it to $ARTIFACT_DEVICE (large enough?)"
		else
			sync
		fi
	fi
	if [ -n "$why" ]; then
		result artifact fail "$why"
	else
		result artifact pass
	fi
fi
say "results in $RESULT_FILE:"
cat "$RESULT_FILE"
exit 0
