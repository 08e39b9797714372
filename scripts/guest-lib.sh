# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Host side of a guest run whose results come back on a raw virtio disk
# (scripts/run-in-guest.sh, scripts/regress.sh): the guest writes one tar
# stream straight to /dev/vda (qemu/guest/capture.sh's hand_back) and the
# host unpacks the disk image with tar, then checks every file against the
# guest's SHA256SUMS. No filesystem on either side, no network, no 9p
# server. Source it after scripts/lib.sh; failures call the caller's die.

# failures_cannot_test: the command's own failures (a build, a boot, a
# missing tool) exit 125, "cannot test" to git bisect run, so that they
# never read as the verdict of the program or the kernel under test.
# errtrace (set -E): a command that fails inside a function runs the
# trap too, instead of ending the script with its own status (1 is
# "changed" to regress.sh's callers). Not in a subshell (a command
# substitution, a job in the background): its status goes to the shell
# that waits for it, which says what failed, once.
failures_cannot_test() {
	die() {
		printf 'error: %s: %s\n' "$ANTINOMIE_PROG" "$*" >&2
		exit 125
	}
	set -E
	trap '[ "$BASH_SUBSHELL" -gt 0 ] || die "failed at line $LINENO"' ERR
}

# The privilege contexts a program runs under (qemu/guest/capture.sh's
# antinomie-context sets each up).
ALL_CONTEXTS=(root perfmon user-p4 user-p3 user-p2 user-p1 user-p0 user-m1 userns)

# is_context NAME: NAME is one of the privilege contexts.
is_context() {
	local c
	for c in "${ALL_CONTEXTS[@]}"; do [ "$c" = "$1" ] && return 0; done
	return 1
}

# guest_run_collect KERNEL INITRD SCENARIO OUT TIMEOUT MEM DISK_SIZE APPEND:
# boot KERNEL with INITRD running SCENARIO and a sparse results disk of
# DISK_SIZE, the serial console to OUT/console.log; then unpack the results
# into OUT and check them.
guest_run_collect() {
	local kernel=$1 initrd=$2 scenario=$3 out=$4 timeout_s=$5 mem=$6 disk_size=$7 append=$8
	local disk rc=0 t0 ms
	need_cmd tar sha256sum truncate
	disk=$(mktemp "${TMPDIR:-/tmp}/antinomie-results.XXXXXX") || die "cannot create the results disk"
	stage "results disk: $disk_size (sparse)"
	truncate -s "$disk_size" "$disk" || { rm -f "$disk"; die "cannot create the results disk"; }
	"$ANTINOMIE_ROOT/qemu/run.sh" --kernel "$kernel" --initrd "$initrd" --scenario "$scenario" \
		--console scenario --log "$out/console.log" --timeout "$timeout_s" --mem "$mem" \
		--append "$append" \
		--qemu-arg -drive --qemu-arg "file=$disk,format=raw,if=none,id=results,cache=unsafe" \
		--qemu-arg -device --qemu-arg "virtio-blk-pci,drive=results" || rc=$?
	[ $rc -eq 0 ] || { rm -f "$disk"; die "the guest run failed (see above and $out/console.log)"; }

	stage "unpacking and checking the results"
	t0=$(date +%s%N)
	tar -xf "$disk" -C "$out" || { rm -f "$disk"; die "the results disk holds no readable tar archive"; }
	rm -f "$disk"
	(cd "$out" && sha256sum --quiet -c SHA256SUMS) || die "a result does not match the sha256 the guest wrote"
	ms=$((($(date +%s%N) - t0) / 1000000))
	info "$(wc -l <"$out/SHA256SUMS") files, sha256 verified, ${ms} ms to unpack and check"
}

# capture_json DIR FILTER: jq FILTER applied to the JSON summary of the
# guest's `reader -- PROGRAM` in DIR (reader.stderr's last line that is a
# JSON object; reader/README.md lists its keys), raw; fails, with the
# reader's last lines on stderr, when the capture left no summary.
capture_json() {
	local summary
	summary=$(grep '^{' "$1/reader.stderr" | tail -n 1)
	if [ -z "$summary" ]; then
		echo "no capture summary in $1/reader.stderr (the reader exited $(cat "$1/reader.status" 2>/dev/null || echo '?')): $(tail -n 3 "$1/reader.stderr" 2>/dev/null)" >&2
		return 1
	fi
	jq -r "$2" <<<"$summary"
}

# regress_shown_check OUT WORKLOAD CONTEXT CHECK: antinomie-e2e CHECK
# (diff-check or cause-check) of the comparison that scripts/regress.sh's
# report in OUT shows for WORKLOAD as CONTEXT (the first run's, or the
# rerun's) against the workload's own logs of both kernels. Its output
# goes to the file named by shown_check_out; returns its status.
regress_shown_check() {
	local out=$1 workload=$2 ctx=$3 what=$4 rerun d
	rerun=$(jq -r --arg w "$workload" --arg c "$ctx" '.runs[] | select(.workload == $w and .context == $c) |
		if .shown == "rerun" then "-rerun" else "" end' "$out/report.json")
	d=$out/diffs$rerun/$workload/$ctx
	shown_check_out=$d/$what.txt
	"${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release/antinomie-e2e" "$what" \
		--workload-a "$out/runs/baseline$rerun/$workload/$ctx/stdout" \
		--workload-b "$out/runs/changed$rerun/$workload/$ctx/stdout" \
		--diff "$d/diff.json" >"$shown_check_out" 2>&1
}
