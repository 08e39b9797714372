#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# with-bpf.sh VARIANT PROGRAM [ARGS...]: runs PROGRAM with the BPF
# contender (antinomie-bpf --variant VARIANT, draining live) attached, in
# the guest; e.g. under scripts/run-in-guest.sh, so that capture and the
# contender trace the same calls (scripts/bpf-contender-check.py compares
# them). stdout: the program's. stderr: the program's, then the
# contender's summary and its records (antinomie-bpf dump), each line
# prefixed "bpf| ". Exit status: the program's, or 125 if the contender
# failed.
[ $# -ge 2 ] || { echo "usage: with-bpf.sh tp|raw PROGRAM [ARGS...]" >&2; exit 125; }
variant=$1
shift
records=/tmp/with-bpf.records
rm -f /tmp/with-bpf.ready
antinomie-bpf --variant "$variant" --out $records --ready /tmp/with-bpf.ready 2>/tmp/with-bpf.err &
pid=$!
i=0
until [ -e /tmp/with-bpf.ready ]; do
	i=$((i + 1))
	if [ $i -ge 400 ] || ! kill -0 $pid 2>/dev/null; then
		echo "with-bpf.sh: antinomie-bpf did not attach: $(cat /tmp/with-bpf.err)" >&2
		exit 125
	fi
	sleep 0.05
done
rc=0
"$@" || rc=$?
kill -INT $pid
if ! wait $pid; then
	echo "with-bpf.sh: antinomie-bpf failed: $(cat /tmp/with-bpf.err)" >&2
	exit 125
fi
antinomie-bpf dump $records >/tmp/with-bpf.dump || {
	echo "with-bpf.sh: antinomie-bpf dump failed" >&2
	exit 125
}
cat /tmp/with-bpf.err /tmp/with-bpf.dump | sed 's/^/bpf| /' >&2
exit $rc
