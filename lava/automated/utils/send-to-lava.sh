#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Turns a test's output/result.txt ("NAME RESULT" a line, RESULT one of
# pass, fail, skip, unknown) into LAVA test cases: lava-test-case when the
# LAVA test shell provides it, else the signal it would send, on the
# console. The same interface as Linaro test-definitions'
# automated/utils/send-to-lava.sh, so that a definition here also runs
# from a copy of that repository (where theirs is at the same path).
#
# usage: send-to-lava.sh RESULT_FILE
result_file=$1
if [ ! -f "$result_file" ]; then
	echo "send-to-lava.sh: no result file $result_file" >&2
	exit 1
fi
have_lava_test_case=""
command -v lava-test-case >/dev/null 2>&1 && have_lava_test_case=1
while read -r name result _; do
	case "$result" in
	pass | fail | skip | unknown) ;;
	*) continue ;;
	esac
	if [ -n "$have_lava_test_case" ]; then
		lava-test-case "$name" --result "$result"
	else
		echo "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=$name RESULT=$result>"
	fi
done <"$result_file"
