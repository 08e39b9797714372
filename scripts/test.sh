#!/usr/bin/env bash
# Run every test of Antinomie, from whatever state the machine is in:
# installs the host packages it needs, then checks the Rust workspace, the
# kernel series, the kernel configurations, builds the patched kernel and the
# guest image, boots it under QEMU (smoke scenario + built-in KUnit; the
# kernel's perf_events selftests; the reader and its filter end to end;
# programs run with run-in-guest.sh; reader diff across a kernel change;
# the randomized campaign on the debug kernel),
# and proves that bad input fails with a one-line reason.
#
# usage: scripts/test.sh
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

names=() times=() results=()
summary() {
	echo
	echo "test summary (elapsed per step):"
	local i
	for i in "${!names[@]}"; do
		printf '  %-6s %6s  %s\n' "${results[$i]}" "$(fmt_secs "${times[$i]}")" "${names[$i]}"
	done
	printf '  total  %6s\n' "$(fmt_secs $(($(date +%s) - ANTINOMIE_T0)))"
}

# Each step's output, kept to say why it failed.
step_log=$(mktemp /tmp/antinomie-step.XXXXXX)
trap 'rm -f "$step_log" "$step_log.rc"' EXIT

# why NAME: the failed step's lines that report a failure, and its last
# lines. Printed last, as a CI report may keep only the tail of a run.
why() {
	echo
	echo "why '$1' failed: its failure lines (up to 20), then its last 10 lines:"
	grep -aE '^(not ok|# .*(FAIL|Expected)|error:|FAILED|failed)|panic|BUG:|WARNING:' \
		"$step_log" | tail -n 20 | sed 's/^/  | /' || true
	echo "  ..."
	tail -n 10 "$step_log" | sed 's/^/  | /'
}

# step NAME CMD...: run one step; stop at the first failure (later steps
# need what earlier ones built).
step() {
	local name=$1 t0 rc=0
	shift
	stage "$name"
	t0=$(date +%s)
	rm -f "$step_log.rc"
	{ "$@" 2>&1 || echo $? >"$step_log.rc"; } | tee "$step_log"
	[ ! -e "$step_log.rc" ] || rc=$(cat "$step_log.rc")
	names+=("$name")
	times+=($(($(date +%s) - t0)))
	if [ "$rc" -eq 0 ]; then
		results+=(ok)
	else
		results+=(FAILED)
		summary
		why "$name"
		echo "test: ${#names[@]} steps run, $((${#names[@]} - 1)) passed, 1 failed"
		echo "$((${#names[@]} - 1)) passed, 1 failed"
		exit 1
	fi
}

kernel_configs() {
	local v
	for v in $(sed -n 's/^\([a-z0-9_-]*\):.*/\1/p' kconfig/variants); do
		scripts/build-kernel.sh --config-only "$v" || return 1
	done
}

step "host packages" scripts/install-deps.sh
step "cargo fmt --check" cargo fmt --all --check
step "cargo clippy -D warnings" cargo clippy --workspace --all-targets --locked -- -D warnings
step "cargo test" cargo test --workspace --locked
step "kernel series: apply, export, checkpatch" scripts/check-series.sh
step "kernel configs: every option sticks" kernel_configs
step "kernel build (normal)" scripts/build-kernel.sh normal
step "capture off costs a NOP (vmlinux)" scripts/show-nop-path.sh
step "kernel selftests (static)" scripts/build-selftests.sh
step "guest initramfs" qemu/build-initramfs.sh "$ANTINOMIE_CACHE/selftests/root"
step "boot: smoke scenario + KUnit" qemu/run.sh --scenario smoke
step "boot: capture on the raw ABI" qemu/run.sh --quiet --scenario capture
step "boot: kselftest of the raw ABI" \
	qemu/run.sh --quiet --scenario kselftest-antinomie --timeout 900
step "boot: capture from early boot" qemu/run.sh --quiet --scenario capture-boot \
	--append "antinomie.enable=1 antinomie.ring_size=64K"
step "boot: perf_events selftests, capture off and on" \
	qemu/run.sh --quiet --scenario perf-selftests --timeout 900
step "boot: reader end to end" qemu/run.sh --quiet --scenario reader-e2e --timeout 900
step "boot: filters end to end" qemu/run.sh --quiet --scenario filter-e2e --timeout 900
step "run-in-guest: a dynamic program, a failing one, the perf_events selftests" \
	scripts/tests/run-in-guest.sh
step "regression workflow: reader diff on the normal kernel and a changed one" \
	scripts/tests/regression.sh
step "kernel build (off: CONFIG_ANTINOMIE=n)" scripts/build-kernel.sh off
step "boot (off): smoke + KUnit" qemu/run.sh --quiet --variant off --scenario smoke
step "kernel build (debug: -O2, PREEMPT, KASAN, UBSAN, lockdep, KFENCE)" scripts/build-kernel.sh debug
step "boot (debug): capture on the raw ABI, no splat" \
	qemu/run.sh --quiet --variant debug --scenario capture --timeout 900
step "boot (debug): kselftest of the raw ABI, no splat" \
	qemu/run.sh --quiet --variant debug --scenario kselftest-antinomie --timeout 1200
step "boot (debug): randomized campaign, capture off vs on, no splat" scripts/campaign.sh --calls 20000
step "failure modes" scripts/tests/failure-modes.sh
summary
echo "${#names[@]} passed, 0 failed"
