# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Steps of a test command (scripts/test.sh): each named, timed and logged,
# the run ending at the first that fails with its name and why; and a
# lane, steps that run in the background meanwhile and are reported as
# steps of the run. Source it after lib.sh; do not run it.

names=() times=() cpus=() results=()
summary() {
	echo
	echo "test summary (per step: elapsed, then the CPU time of its processes):"
	local i cpu=0
	for i in "${!names[@]}"; do
		printf '  %-6s %6s %6s  %s\n' "${results[$i]}" "$(fmt_secs "${times[$i]}")" "$(fmt_secs "${cpus[$i]}")" "${names[$i]}"
		cpu=$((cpu + cpus[i]))
	done
	printf '  total  %6s %6s\n' "$(fmt_secs $(($(date +%s) - ANTINOMIE_T0)))" "$(fmt_secs "$cpu")"
}
# cpu_secs FILE: the CPU time (user + system, whole seconds) in the
# output of the `times` builtin in FILE, the shell's own and its waited-for
# children's: a step's processes, when a subshell ran the step and then
# `times` (a process left running in the background is not counted).
cpu_secs() {
	awk '{
		gsub(",", ".")
		for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
	}
	END { printf "%d\n", s + 0.5 }' "$1" 2>/dev/null || echo 0
}

# Each step's output, kept to say why it failed.
step_log=$(mktemp /tmp/antinomie-step.XXXXXX)
# The lane's steps: N.name, N.log, then N.done ("SECONDS STATUS") as each
# ends; "end" holds the lane's own exit status once it has ended.
lane=$(mktemp -d /tmp/antinomie-lane.XXXXXX)
lane_pid=""
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	# A lane still running, down to its make, compilers and QEMU (one
	# that has ended is not: its pid may be another process's by now).
	if [ -n "$lane_pid" ] && [ ! -e "$lane/end" ]; then
		stop_process_trees "$lane_pid"
	fi
	rm -rf "$step_log" "$step_log.rc" "$step_log.cpu" "$lane"
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

# record NAME SECONDS STATUS LOG CPU-SECONDS: a step's result; the run
# ends at the first failure (later steps need what earlier ones built).
record() {
	names+=("$1")
	times+=("$2")
	cpus+=("$5")
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
	rm -f "$step_log.rc" "$step_log.cpu"
	{
		"$@" 2>&1 || echo $? >"$step_log.rc"
		times >"$step_log.cpu"
	} | tee "$step_log"
	[ ! -e "$step_log.rc" ] || rc=$(cat "$step_log.rc")
	record "$name" $(($(date +%s) - t0)) "$rc" "$step_log" "$(cpu_secs "$step_log.cpu")"
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
	(
		"$@" </dev/null >"$lane/$n.log" 2>&1 || rc=$?
		times >"$lane/$n.cpu"
		exit "$rc"
	) || rc=$?
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
# claim NAME: whether this line (the steps here or the lane) is the first
# to claim NAME, for a step that either may run, whichever is free first
# (mkdir is atomic: one of two claims gets it).
claim() {
	mkdir "$lane/claim-$1" 2>/dev/null
}
# lane_start FUNCTION DESCRIPTION: run FUNCTION (lane_steps) as the lane.
lane_start() {
	(
		rc=0
		"$1" || rc=$?
		echo "$rc" >"$lane/end.tmp"
		mv "$lane/end.tmp" "$lane/end"
	) &
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
# lane_running: the name of the lane's step that is running, if any.
lane_running() {
	local last
	last=$(($(find "$lane" -name '*.name' | wc -l) - 1))
	if [ "$last" -ge 0 ] && [ ! -e "$lane/$last.done" ]; then
		cat "$lane/$last.name"
	else
		echo "between two steps"
	fi
}
# lane_join: wait for the lane (a line a minute naming the step it is
# in), then report its steps, as step() does, in their order; a lane that
# ended otherwise than its steps did (killed, or failing between two) is
# a failed step of its own.
lane_join() {
	local n=0 waited=0 status end
	[ -n "$lane_pid" ] || return 0
	lane_open
	while [ ! -e "$lane/end" ] && kill -0 "$lane_pid" 2>/dev/null && ! lane_failed; do
		if [ $((waited % 60)) -eq 0 ]; then
			stage "waiting for the background steps: $(lane_running)"
		fi
		sleep 2
		waited=$((waited + 2))
	done
	while [ -e "$lane/$n.name" ]; do
		status=$lane/$n.done
		[ -e "$status" ] || {
			echo "error: $ANTINOMIE_PROG: the background step ended with no exit status" >>"$lane/$n.log"
			echo "$waited 1" >"$status"
		}
		stage "$(cat "$lane/$n.name") (in the background)"
		cat "$lane/$n.log"
		record "$(cat "$lane/$n.name")" "$(cut -d' ' -f1 "$status")" "$(cut -d' ' -f2 "$status")" "$lane/$n.log" \
			"$(cpu_secs "$lane/$n.cpu")"
		n=$((n + 1))
	done
	end=$(cat "$lane/end" 2>/dev/null || echo "no exit status")
	if [ "$end" != 0 ]; then
		echo "error: $ANTINOMIE_PROG: the background steps ended with $end, after their last step passed" >"$lane/end.log"
		stage "the background steps"
		cat "$lane/end.log"
		record "the background steps" "$waited" 1 "$lane/end.log" 0
	fi
}
