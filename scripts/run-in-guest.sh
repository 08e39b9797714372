#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run any program in the QEMU guest under capture and bring everything back
# to the host: boots the patched kernel with PROGRAM (static or dynamic: its
# shared libraries and loader are copied in) and every --add DIR in the
# image, runs it as `reader --lossless --cgroup CG -w TRACE -- PROGRAM`
# (in the cgroup CG, so that only its calls are captured, and only they
# wait) and writes to --out DIR:
#
#   trace.antinomie   the raw trace (decode again with `reader show`)
#   reader.txt        what the live reader printed (text, or as --reader-args say)
#   reader.jsonl      the whole trace as JSON Lines, decoded on the host
#   reader.stderr     the reader's summary as JSON (calls, per-CPU
#                     produced/consumed/lost, how the program ended)
#   reader.status     the reader's exit status
#   stdout, stderr    the program's
#   status            the program's exit status
#   control.stdout, control.stderr, control.status
#                     the program's, from the control run (--control)
#   console.log       the guest's serial console
#
# Results come back on a raw virtio disk: the guest writes one tar stream
# straight to /dev/vda and the host unpacks the disk image with tar, then
# checks every file against the guest's SHA256SUMS (scripts/guest-lib.sh,
# qemu/guest/capture.sh). No filesystem on either side (the guest kernel
# needs none), no network, no 9p server; a disk is as fast as the guest
# can write memory.
#
# usage: scripts/run-in-guest.sh [options] -- PROGRAM [ARGS...]
#   --variant NAME       kernel variant to boot (default: normal)
#   --kernel BZIMAGE     boot this kernel instead
#   --reader-args 'ARGS' extra arguments of the guest's `reader --`
#                        (e.g. '--filter "ret < 0"' or '--format json')
#   --add DIR            copy DIR over the image root (repeat for more)
#   --out DIR            where the results go (default: ./antinomie-run)
#   --append ARGS        kernel command line (e.g. antinomie.ring_size=4M)
#   --timeout SECS       stop a guest that runs longer (default: 900)
#   --mem SIZE           guest memory (default: 2G); results are staged in
#                        the guest's tmpfs, which holds at most half of it
#   --disk-size SIZE     the results disk (default: 2G, a sparse file)
#   --lossy              capture without lossless mode: calls never wait
#                        for the reader, and a ring that fills loses records
#   --allow-loss         exit with the program's status even when the
#                        capture lost records
#   --context NAME       run the program in a privilege context (root,
#                        perfmon, user-p4, user-p3, user-p2, user-p1,
#                        user-p0, user-m1, userns) through
#                        antinomie-context --other-user-task
#                        (qemu/workloads/src/bin/antinomie-context), in
#                        /tmp (writable whatever the uid); the reader stays
#                        root and the root shell writes the program's
#                        stdout, stderr and status; the context's read-back
#                        line starts its stderr; 125 when the context is
#                        not what it claims
#   --control            run the program twice in the same boot: first with
#                        capture off (the control), then under capture, and
#                        compare their verdicts (below)
# Lossless mode (the default) makes a call whose record finds its ring full
# wait for the reader, up to the kernel's antinomie.lossless_timeout_ms
# per record, so the program runs slower but its trace is whole; the
# program's results do not change.
# Exit status: the program's; 125 when the run itself failed (no results),
# or when the capture lost records (unless --allow-loss): such a trace
# cannot answer a call-by-call comparison. The capture summary (calls,
# lost) is printed last.
# With --control the exit status answers "did capture change the program's
# result?", as scripts/regress.sh answers for a kernel change: a program's
# verdicts are its exit status and every stdout line that starts with
# `verdict: `; 0 when the control's and the captured run's are the same
# (whatever the program's own status, which stays in status and
# control.status), 1 when they differ (they are printed: capture changed
# what the traced calls did, a bug), 125 as above.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/guest-lib.sh"
failures_cannot_test

variant=normal kernel="" reader_args="" out=./antinomie-run append=""
timeout_s=900 mem=2G disk_size=2G adds=() capture_mode=lossless allow_loss=0 context='' control=0
while [ $# -gt 0 ]; do
	case "$1" in
	--lossy) capture_mode=lossy; shift; continue ;;
	--allow-loss) allow_loss=1; shift; continue ;;
	--control) control=1; shift; continue ;;
	--) ;;
	--*) [ $# -ge 2 ] || die "$1 needs a value" ;;
	esac
	case "$1" in
	--variant) variant=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--reader-args) reader_args=$2; shift ;;
	--add) adds+=("$2"); shift ;;
	--out) out=$2; shift ;;
	--append) append=$2; shift ;;
	--timeout) timeout_s=$2; shift ;;
	--mem) mem=$2; shift ;;
	--disk-size) disk_size=$2; shift ;;
	--context) context=$2; shift ;;
	--) shift; break ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift
done
[ $# -ge 1 ] || die "usage: $0 [options] -- PROGRAM [ARGS...]"
# The host reads the reader's JSON summary: it must be there.
case " $reader_args " in
*" --summary"* | *" --no-summary"*) die "--reader-args: the summary is the host's to set (it reads the JSON one)" ;;
esac
known_contexts=$(IFS=, && echo "${ALL_CONTEXTS[*]}")
[ -z "$context" ] || is_context "$context" ||
	die "--context $context: not a context (${known_contexts//,/, })"
for d in "${adds[@]}"; do
	[ -d "$d" ] || die "--add $d: not a directory"
done
if [ -z "$kernel" ]; then
	kernel=$ANTINOMIE_CACHE/kernels/$variant/arch/x86/boot/bzImage
	[ -f "$kernel" ] || die "no '$variant' kernel at $kernel (run scripts/build-kernel.sh $variant)"
fi
[ -f "$kernel" ] || die "no kernel at $kernel"
# Capture enabled from boot would be on during the control run too.
if [ $control -eq 1 ] && [[ " $append " == *" antinomie.enable="[1yY]* ]]; then
	die "--control needs capture off before the reader starts: drop antinomie.enable from --append"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/antinomie-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Nothing of an earlier run may pass for this one's.
rm -f "$out"/{trace.antinomie,reader.txt,reader.jsonl,reader.stderr,reader.status,stdout,stderr,status,SHA256SUMS,console.log} \
	"$out"/control.{stdout,stderr,status}

stage "laying $1 into the image"
extra=$work/extra
"$ANTINOMIE_ROOT/qemu/add-program.sh" "$extra" "$1" || die "cannot lay $1 into the image"
for d in "${adds[@]}"; do
	cp -a "$d"/. "$extra"/
done
mkdir -p "$extra/etc/antinomie/run"
# The command line, each word single-quoted for the guest's sh.
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
	echo "#!/bin/sh"
	printf 'exec %s' "$(quote "/usr/local/bin/$(basename "$1")")"
	shift
	for a in "$@"; do printf ' %s' "$(quote "$a")"; done
	echo
} >"$extra/etc/antinomie/run/program"
chmod 0755 "$extra/etc/antinomie/run/program"
# The guest's launch (qemu/guest/capture.sh) runs the program in it.
[ -z "$context" ] || echo "$context" >"$extra/etc/antinomie/run/context"
printf '%s\n' "$reader_args" >"$extra/etc/antinomie/run/reader-args"
echo "$capture_mode" >"$extra/etc/antinomie/run/capture-mode"
[ $control -eq 0 ] || : >"$extra/etc/antinomie/run/control"
img=$("$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$work/run.cpio" "$extra" | tail -n1) ||
	die "building the guest image failed"

guest_run_collect "$kernel" "$img" run "$out" "$timeout_s" "$mem" "$disk_size" "$append"
info "$(du -sk "$out/trace.antinomie" | cut -f1) KiB of trace"

stage "decoding the trace on the host (reader show --format json)"
reader=${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release/reader
"$reader" show "$out/trace.antinomie" --format json >"$out/reader.jsonl" 2>"$work/show.summary" ||
	die "reader show failed on the trace: $(tail -n 3 "$work/show.summary")"
info "$(wc -l <"$out/reader.jsonl") calls in $out/reader.jsonl"

status=$(cat "$out/status")
stage "results in $out; the program exited with status $status; capture summary ($capture_mode, from the trace):"
sed 's/^/    /' "$work/show.summary"
# Whether the capture is whole, from the live reader's JSON summary: the
# records lost by the kernel's final counters (a LOST record reported
# them or not), corrupt records, a capture that failed.
lost=$(capture_json "$out" 'if .records.lost_exact then .records.lost else "?" end') ||
	die "the capture failed: no summary (the program exited with status $status)"
whole=$(capture_json "$out" .capture_whole)
if [ "$lost" != 0 ] && [ $allow_loss -eq 0 ]; then
	die "the capture lost $lost records (? if the kernel's final counters are unknown): the trace is not whole (--allow-loss accepts that; the program exited with status $status)"
fi
[ "$lost" != 0 ] || [ "$whole" = true ] ||
	die "the capture is not whole although it lost nothing: corrupt records (see $out/reader.stderr; the program exited with status $status)"
[ $control -eq 1 ] || exit "$status"

# verdicts DIR PREFIX: a run's verdicts, one a line: its exit status, then
# its `verdict: ` lines in the order it printed them.
verdicts() {
	echo "exit status: $(cat "$1/${2}status")"
	grep '^verdict: ' "$1/${2}stdout" || true
}
[ -f "$out/control.status" ] || die "the guest made no control run (no control.status in the results)"
verdicts "$out" control. >"$work/control.verdicts"
verdicts "$out" "" >"$work/captured.verdicts"
n=$(wc -l <"$work/captured.verdicts")
if ! diff -U0 --label 'capture off (control)' --label 'capture on' \
	"$work/control.verdicts" "$work/captured.verdicts" >"$work/verdicts.diff"; then
	sed -n '3,$p' "$work/verdicts.diff" | grep -v '^@@' | sed 's/^/    /'
	echo "error: $ANTINOMIE_PROG: capture changed the program's verdicts (above: - capture off, + capture on; the runs' output in $out/control.stdout and $out/stdout): capture must not change a traced call" >&2
	exit 1
fi
stage "control: the same $n verdicts with capture off and on (exit status $status and $((n - 1)) verdict lines)"
exit 0
