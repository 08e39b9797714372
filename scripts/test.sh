#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run the tests of Antinomie, from whatever state the machine is in. Three
# tiers, each a superset of the one before:
#
#   --host   install the host packages; cargo fmt, clippy, test and doc (with
#            the attr table checked against the pinned tree's uapi
#            header); the fuzz targets checked and their seeds written;
#            the two library crates packaged (cargo publish --dry-run);
#            the shell scripts, linted; an SPDX line in every source
#            file; the perf corpus's verdict scripts on written perf
#            output; the regression report's KTAP and KCIDB output, read
#            by kunit_parser.py and kcidb-io; the kernel series (apply,
#            export, checkpatch) and every kernel configuration. No
#            kernel build, no guest: a few minutes on a warm machine.
#   --guest  the host tier, then the normal kernel built and booted under
#            QEMU: smoke + KUnit, the capture and its kselftest, capture
#            from early boot, the kernel's perf_events selftests with
#            capture off and on, the reader and its filters end to end,
#            and programs run with run-in-guest.sh.
#   (none)   everything, what CI runs: the guest tier, then the
#            capture-off kernel, the failure modes (bad input fails with
#            a one-line reason), the debug kernel (KASAN, UBSAN, lockdep,
#            KFENCE) with its kselftest and the randomized campaign, and
#            scripts/regress.sh on an unchanged kernel, a deliberate and
#            a real change.
#
# usage: scripts/test.sh [--host | --guest]
. "$(dirname "$0")/lib.sh"
cd "$ANTINOMIE_ROOT"

tier=full
case ${1:-} in
--host) tier=host ;;
--guest) tier=guest ;;
"") ;;
*) die "usage: scripts/test.sh [--host | --guest]" ;;
esac
[ $# -le 1 ] || die "usage: scripts/test.sh [--host | --guest]"

. scripts/steps-lib.sh

# shellcheck disable=SC2317 # called through step()
kernel_configs() {
	local v
	sed -n 's/^\([a-z0-9_-]*\):.*/\1/p' kconfig/variants | while read -r v; do
		scripts/build-kernel.sh --config-only "$v" </dev/null || return 1
	done
}

# finish: the summary and the closing count; the end of a passed run.
finish() {
	summary
	echo "test ($tier): ${#names[@]} passed, 0 failed"
	echo "${#names[@]} passed, 0 failed"
	exit 0
}

# cargo test, with the test that checks the attr table against the pinned
# tree's uapi header (ignored in a plain cargo test) required to run.
# The tests are compiled first (doctests aside): on an empty cache the
# debug kernel's build may still be fetching the source meanwhile.
# shellcheck disable=SC2317 # called through step()
cargo_test() {
	local src
	cargo test --workspace --locked --no-run || return 1
	src=$(scripts/kernel-source.sh | tee /dev/stderr | tail -n 1) || return 1
	ANTINOMIE_KERNEL_SRC=$src cargo test --workspace --locked -- --include-ignored
}

# The fuzz crate (its own workspace and lock file) against the library as
# it is: its targets type-checked, and its seeds written from the golden
# files. Linking a target needs cargo-afl's AFL++ runtime
# (reader/fuzz/run.sh); checking does not.
# shellcheck disable=SC2317 # called through step()
fuzz_crate() {
	local out t rc=0
	cargo check --manifest-path reader/fuzz/Cargo.toml --locked --all-targets || return 1
	out=$(mktemp -d /tmp/antinomie-seeds.XXXXXX)
	cargo run -q --manifest-path reader/fuzz/Cargo.toml --locked --bin fuzz-seeds -- "$out/seeds" || rc=1
	for t in ring trace filter; do
		[ "$rc" -ne 0 ] || [ -n "$(ls -A "$out/seeds/$t" 2>/dev/null)" ] || {
			echo "error: fuzz-seeds wrote no seeds for $t" >&2
			rc=1
		}
	done
	rm -rf "$out"
	return "$rc"
}

# The two crates others can depend on, packaged and built from their
# packages alone as a registry would (`cargo publish --dry-run`: nothing is
# uploaded). The tree as it is, committed or not.
# shellcheck disable=SC2317 # called through step()
publishable_crates() {
	cargo publish --dry-run --locked --allow-dirty -p antinomie-abi -p antinomie-reader
}

step "host packages" scripts/install-deps.sh
# The debug kernel shares no object with the others (its compiler flags
# are its own): it builds in the background from here on, at nice 19, in
# a build tree of its own (so that the main steps' builds never wait for
# its tree's lock). It takes what the steps leave idle: the host tier's
# single-threaded tools, the builds' links, and from the image on the
# second core, for a TCG guest runs on one host thread. nice holds
# because the lane keeps the test command's SID: under setsid(1) it
# would be a scheduler autogroup of its own, which nice does not reach,
# and take half the machine from the steps. Its boots wait at a gate
# for the image and the real machine's package (a guest starved of its
# host thread by a build at nice 0 beside it reports an RCU stall),
# then run beside the guest tier's other boots and the off
# kernel's steps, one guest a core. The failure modes run on whichever
# line is free first, the lane after its boots or the main steps before
# they wait for the lane (claim): they are partly a wait (a guest that
# hangs until its timeout), and after both lines they left the second
# core idle for a minute. The regression step waits for the lane to end:
# its own two guests at once must not share the two cores with a third.
# shellcheck disable=SC2317 # the lane
debug_lane() {
	# The source's fetch and unpack at nice 0: cargo test waits for them.
	# (Its import into git, which the series check may wait for, is
	# build-kernel.sh's, at nice 19.)
	lane_step "kernel build (debug: -O2, PREEMPT, KASAN, UBSAN, lockdep, KFENCE)" \
		sh -c 'scripts/kernel-source.sh &&
			exec env ANTINOMIE_BUILD_TREE_NAME=build-background nice -n 19 scripts/build-kernel.sh debug' &&
		lane_gate &&
		lane_step "boot (debug): the raw ABI beside the kselftest, no splat" \
			qemu/run.sh --quiet --variant debug --scenario capture --timeout 900 \
			--log "$ANTINOMIE_CACHE/console-debug.log" &&
		# stack_depot_disable=on: KASAN's stack depot refills its pool at
		# random, which would make the fault-injection points a call takes
		# vary from run to run (see
		# tools/testing/selftests/antinomie/fidelity_test.c).
		lane_step "boot (debug): kselftest of the raw ABI, no splat" \
			qemu/run.sh --quiet --variant debug --scenario kselftest-antinomie --timeout 1200 \
			--append stack_depot_disable=on --log "$ANTINOMIE_CACHE/console-debug.log" &&
		lane_step "boot (debug): randomized campaign, capture off vs on, no splat" \
			scripts/campaign.sh --calls 20000 &&
		{ ! claim failure-modes || lane_step "failure modes" scripts/tests/failure-modes.sh; }
}
[ "$tier" != full ] || lane_start debug_lane "the debug kernel's build (nice 19), then its boots (and the failure modes, if the steps here have not begun them)"
step "cargo fmt --check" cargo fmt --all --check
step "cargo clippy -D warnings" cargo clippy --workspace --all-targets --locked -- -D warnings
step "cargo test (attr table against the pinned uapi header)" cargo_test
step "cargo doc: the crates' documentation builds without warnings" \
	env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
step "fuzz targets: built against the library, seeds written" fuzz_crate
step "cargo publish --dry-run: antinomie-abi and antinomie-reader build from their packages" publishable_crates
step "shellcheck" scripts/check-shell.sh
step "SPDX: every source file names its licence" scripts/check-spdx.sh
step "documents: the kernel series as it is" scripts/check-doc-refs.sh
step "perf corpus: the verdict scripts on written perf output" scripts/tests/corpus-verdicts.sh
step "regression report for CI systems: KTAP read by kunit_parser.py, KCIDB validated by kcidb-io" \
	scripts/tests/ci-formats.sh
step "regression report: a changed kernel's own report of a failure, on written consoles" \
	scripts/tests/kernel-failure-report.sh
step "the test command's steps: each reported, a failure ending the run, the background lane stopped with it" \
	scripts/tests/steps.sh
step "kernel series: apply, export, checkpatch" scripts/check-series.sh
step "kernel configs: every option sticks" kernel_configs
[ "$tier" != host ] || finish

step "kernel build (normal)" scripts/build-kernel.sh normal
step "two commands on one cache at once (two kernel builds; two first unpacks of the source): one waits, each right" scripts/tests/build-lock.sh
step "capture off costs a NOP per hook site (vmlinux)" scripts/show-nop-path.sh
step "kernel series: every patch builds on the ones before it" scripts/check-series-builds.sh
step "kernel selftests (static)" scripts/build-selftests.sh
step "guest initramfs" qemu/build-initramfs.sh "$ANTINOMIE_CACHE/selftests/root"
step "boot: smoke scenario + KUnit" qemu/run.sh --scenario smoke
step "real machine: the kernel as a Debian package boots and captures; a machine's config as base; a static reader" \
	scripts/tests/real-machine.sh
lane_open
step "boot: the raw ABI beside the kselftest (poll() wake-up)" qemu/run.sh --quiet --scenario capture
step "boot: kselftest of the raw ABI" \
	qemu/run.sh --quiet --scenario kselftest-antinomie --timeout 900
step "boot: capture from early boot, lossless with no reader" qemu/run.sh --quiet --scenario capture-boot \
	--append "antinomie.enable=1 antinomie.lossless=1 antinomie.ring_size=64K"
step "boot: perf_events selftests, capture off and on" \
	qemu/run.sh --quiet --scenario perf-selftests --timeout 900
step "boot: reader end to end" qemu/run.sh --quiet --scenario reader-e2e --timeout 900
step "boot: filters end to end" qemu/run.sh --quiet --scenario filter-e2e --timeout 900
step "boot: reader -- COMMAND, the command's calls and no other's" \
	qemu/run.sh --quiet --scenario reader-run --timeout 600
step "run-in-guest: a dynamic program, a failing one, the perf_events selftests, a fast caller losing nothing" \
	scripts/tests/run-in-guest.sh
step "LAVA: the corpus test definition run by tuxrun and lava-dispatcher; two jobs' artifacts compared" \
	scripts/tests/lava.sh
[ "$tier" != guest ] || finish

# The normal kernel less the capture, from a copy of the normal build:
# make compiles what reads CONFIG_ANTINOMIE and links. At nice 19: the
# lane's debug guests or its failure modes may have the other core.
step "kernel build (off: CONFIG_ANTINOMIE=n, from the normal build)" \
	env KERNEL_SEED=normal nice -n 19 scripts/build-kernel.sh off
step "boot (off): smoke + KUnit" qemu/run.sh --quiet --variant off --scenario smoke
if claim failure-modes; then
	step "failure modes" scripts/tests/failure-modes.sh
else
	info "failure modes: begun by the background steps, which got to them first"
fi
# The regression step's changed kernels, at nice 19 beside the lane's
# debug boots (one guest a core), which otherwise leave the second core
# idle while the steps here wait for the lane.
step "kernel builds (the regression step's changed kernels, from the normal build)" \
	scripts/tests/regress.sh --build-only
lane_join
step "regression testing: scripts/regress.sh on the normal kernel and a changed one" \
	scripts/tests/regress.sh
finish
