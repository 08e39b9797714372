# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Steps of a test command (scripts/test.sh): each named, timed and logged,
# the run ending at the first that fails with its name and why; and a
# lane, steps that run in the background meanwhile and are reported as
# steps of the run. Source it after lib.sh; do not run it.

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
# The lane's steps: N.name, N.log, then N.done ("SECONDS STATUS") as each ends.
lane=$(mktemp -d /tmp/antinomie-lane.XXXXXX)
lane_pid="" lane_joined=0
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	# A lane still running, down to its make, compilers and QEMU.
	if [ -n "$lane_pid" ] && [ "$lane_joined" -eq 0 ]; then
		stop_process_trees "$lane_pid"
	fi
	rm -rf "$step_log" "$step_log.rc" "$lane"
}
trap cleanup EXIT

# why NAME LOG: the failed step's lines that report a failure, and its last
# lines. Printed last, as a CI report may keep only the tail of a run.
why() {
	echo
	echo "why '$1' failed: its failure lines (up to 20), then its last 10 lines:"
	grep -aE '^(not ok|# .*(FAIL|Expected)|error:|FAILED|failed)|panic|BUG:|WARNING:' \
		"$2" | tail -n 20 | sed 's/^/  | /' || true
	echo "  ..."
	tail -n 10 "$2" | sed 's/^/  | /'
}

# record NAME SECONDS STATUS LOG: a step's result; the run ends at the
# first failure (later steps need what earlier ones built).
record() {
	names+=("$1")
	times+=("$2")
	if [ "$3" -eq 0 ]; then
		results+=(ok)
		return
	fi
	results+=(FAILED)
	summary
	why "$1" "$4"
	echo "test: ${#names[@]} steps run, $((${#names[@]} - 1)) passed, 1 failed"
	echo "$((${#names[@]} - 1)) passed, 1 failed"
	exit 1
}

# step NAME CMD...: run one step here. A lane's step that has failed
# meanwhile ends the run first, under its own name.
step() {
	local name=$1 t0 rc=0
	shift
	! lane_failed || lane_join
	stage "$name"
	t0=$(date +%s)
	rm -f "$step_log.rc"
	{ "$@" 2>&1 || echo $? >"$step_log.rc"; } | tee "$step_log"
	[ ! -e "$step_log.rc" ] || rc=$(cat "$step_log.rc")
	record "$name" $(($(date +%s) - t0)) "$rc" "$step_log"
}

# A lane: steps that run in the background, in order, while the steps
# here go on, stopping at the first that fails. A guest under TCG runs
# on one host thread, so a build (at nice 19) fits beside a boot, and a
# boot beside a build. lane_join reports each lane step as a step of this
# run, its output and time its own.
#
# lane_step NAME CMD...: in the lane, run one step; its output to N.log.
# shellcheck disable=SC2317 # called in the lane
lane_step() {
	local name=$1 n t0 rc=0
	shift
	n=$(find "$lane" -name '*.name' | wc -l)
	printf '%s\n' "$name" >"$lane/$n.name"
	t0=$(date +%s)
	"$@" </dev/null >"$lane/$n.log" 2>&1 || rc=$?
	echo "$(($(date +%s) - t0)) $rc" >"$lane/$n.done.tmp"
	mv "$lane/$n.done.tmp" "$lane/$n.done"
	return "$rc"
}
# lane_gate: in the lane, wait until the steps here open the gate.
# shellcheck disable=SC2317 # called in the lane
lane_gate() {
	while [ ! -e "$lane/gate" ]; do sleep 2; done
}
# lane_open: let the lane past its gate.
lane_open() {
	touch "$lane/gate"
}
# lane_start FUNCTION: run FUNCTION (lane_steps) as the lane.
lane_start() {
	"$1" &
	lane_pid=$!
	info "started in the background: $2"
}
# lane_failed: whether a lane step has ended with a failure.
lane_failed() {
	local status
	for status in "$lane"/*.done; do
		[ -e "$status" ] || continue
		[ "$(cut -d' ' -f2 "$status")" -eq 0 ] || return 0
	done
	return 1
}
# lane_join: wait for the lane (a line a minute naming the step it is
# in), then report its steps, as step() does, in their order.
lane_join() {
	local n=0 waited=0 status
	[ -n "$lane_pid" ] || return 0
	lane_open
	while kill -0 "$lane_pid" 2>/dev/null && ! lane_failed; do
		if [ $((waited % 60)) -eq 0 ]; then
			stage "waiting for the background steps: $(cat "$lane/$(($(find "$lane" -name '*.name' | wc -l) - 1)).name")"
		fi
		sleep 2
		waited=$((waited + 2))
	done
	lane_failed || wait "$lane_pid" || true
	lane_joined=1
	while [ -e "$lane/$n.name" ]; do
		status=$lane/$n.done
		[ -e "$status" ] || {
			echo "error: test: the background step ended with no exit status" >>"$lane/$n.log"
			echo "$waited 1" >"$status"
		}
		stage "$(cat "$lane/$n.name") (in the background)"
		cat "$lane/$n.log"
		record "$(cat "$lane/$n.name")" "$(cut -d' ' -f1 "$status")" "$(cut -d' ' -f2 "$status")" "$lane/$n.log"
		n=$((n + 1))
	done
}
