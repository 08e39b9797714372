#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The test command's steps and its background lane (scripts/steps-lib.sh),
# on small written runs: a passing run reports every step, the lane's
# after the others, each with its own time and CPU time, and a step
# after lane_join starts only once the lane has ended; the lane's steps
# past its gate start only once it is opened; a lane step that fails
# ends the run at the next step under the lane step's name; a step that
# either line may run (claim) runs once, on the line free first; a lane
# killed between two steps fails the run; a step that fails ends the
# run at once and leaves nothing of the lane running, down to a
# grandchild that timeout(1) put in a process group of its own, as
# qemu/run.sh's timeout(1) does QEMU.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A sleep no other process on the machine runs, to look for afterwards.
secs=$((4000 + $$ % 1000))

# run NAME: the written run NAME ($tmp/NAME.sh) to $tmp/NAME.out; its
# exit status to $tmp/NAME.rc (124: it hung, and was stopped).
run() {
	local rc=0
	ANTINOMIE_ROOT=$ANTINOMIE_ROOT timeout 120 bash "$tmp/$1.sh" >"$tmp/$1.out" 2>&1 || rc=$?
	echo "$rc" >"$tmp/$1.rc"
}
# expect NAME RC PATTERN...: the run exited RC and its output has each
# extended regular expression.
expect() {
	local name=$1 want=$2 pattern
	shift 2
	[ "$(cat "$tmp/$name.rc")" = "$want" ] ||
		{ sed 's/^/  | /' "$tmp/$name.out" >&2; die "$name: exit $(cat "$tmp/$name.rc"), not $want"; }
	for pattern in "$@"; do
		grep -qE -- "$pattern" "$tmp/$name.out" ||
			{ sed 's/^/  | /' "$tmp/$name.out" >&2; die "$name: no line matching '$pattern'"; }
	done
}
# written NAME: a run's script from stdin, after what every run shares.
written() {
	{
		printf '%s\n' ". \"\$ANTINOMIE_ROOT/scripts/lib.sh\"" ". \"\$ANTINOMIE_ROOT/scripts/steps-lib.sh\""
		cat
	} >"$tmp/$1.sh"
}

stage "a passing run: each step reported once, the lane's after the others, a step after lane_join after the lane"
written pass <<EOF
lane_steps() {
	lane_step "lane one" sleep 1 && lane_step "lane two" sh -c 'sleep 3; date +%s.%N >"$tmp/lane-two"'
}
lane_start lane_steps "two steps"
step "main one" sleep 2
lane_join
step "main two" sh -c 'date +%s.%N >"$tmp/main-two"'
summary
EOF
run pass
expect pass 0 '^  ok +0:0[23] +0:00  main one$' '^  ok +0:0[12] +0:00  lane one$' '^  ok +0:0[34] +0:00  lane two$' \
	'pass: lane one \(in the background\)$'
[ "$(grep -cE '^  ok ' "$tmp/pass.out")" -eq 4 ] || die "pass: not 4 steps in the summary"
grep -A4 '^test summary' "$tmp/pass.out" | grep -o 'main one\|main two\|lane one\|lane two' | tr '\n' ' ' |
	grep -qx 'main one lane one lane two main two ' || die "pass: the summary's steps are out of order"
awk '{ exit !($1 > m) }' m="$(cat "$tmp/lane-two")" "$tmp/main-two" ||
	die "pass: the step after lane_join ran before the lane's last step ended"
info "4 steps; the step after lane_join ran after the lane had ended"

stage "each step's CPU time is its processes', the lane's as the others'"
# burn: spin until the soft CPU limit of 1 s (SIGXCPU, trapped).
written cpu <<'EOF'
burn() { sh -c 'trap "exit 0" XCPU; ulimit -St 1; while :; do :; done'; }
lane_steps() {
	lane_step "lane burns" burn && lane_step "lane sleeps" sleep 1
}
lane_start lane_steps "two steps"
step "main burns" burn
step "main sleeps" sleep 1
lane_join
summary
EOF
run cpu
expect cpu 0 '^  ok +[0-9:]+ +0:01  main burns$' '^  ok +0:0[12] +0:00  main sleeps$' \
	'^  ok +[0-9:]+ +0:01  lane burns$' '^  ok +0:0[12] +0:00  lane sleeps$' '^  total +[0-9:]+ +0:02$'
info "a step that spins for 1 s of CPU: 0:01; one that sleeps: none; the total their sum"

stage "a lane step past the gate starts only once the gate is opened"
written gate <<EOF
lane_steps() {
	lane_step "lane one" true && lane_gate && lane_step "lane two" sh -c 'date +%s.%N >"$tmp/gate-lane-two"'
}
lane_start lane_steps "two steps"
step "main one" sleep 2
step "main two" sh -c 'date +%s.%N >"$tmp/gate-main-two"'
lane_open
lane_join
summary
EOF
run gate
expect gate 0 '^  ok +0:0[01] +0:00  lane two$'
awk '{ exit !($1 > m) }' m="$(cat "$tmp/gate-main-two")" "$tmp/gate-lane-two" ||
	die "gate: the lane's step past the gate ran before the gate was opened"
info "the lane's step past the gate ran after the gate was opened"

stage "a lane step that fails ends the run at the next step, under its own name"
written lane-fails <<'EOF'
lane_steps() {
	lane_step "lane fine" true && lane_step "lane broken" sh -c 'echo "error: broken on purpose"; exit 3' &&
		lane_step "lane never" true
}
lane_start lane_steps "three steps"
step "main first" sleep 2
step "main second" true
lane_join
EOF
run lane-fails
expect lane-fails 1 "why 'lane broken' failed" '^  FAILED +0:0[01] +0:00  lane broken$' '^  \| error: broken on purpose$' \
	'^2 passed, 1 failed$'
! grep -qE 'main second|lane never' "$tmp/lane-fails.out" || die "lane-fails: a step ran after the lane's failure"
info "the run ended before 'main second', naming 'lane broken'"

stage "a step that fails ends the run at once, and the lane with it"
written main-fails <<EOF
lane_steps() {
	lane_step "lane long" sh -c 'timeout $((secs + 5)) sleep $secs; exit \$?'
}
lane_start lane_steps "one long step"
step "main waits" sleep 2
step "main broken" sh -c 'echo "error: broken on purpose"; exit 1'
lane_join
EOF
t0=$(date +%s)
run main-fails
expect main-fails 1 "why 'main broken' failed" '^1 passed, 1 failed$'
[ $(($(date +%s) - t0)) -lt 60 ] || die "main-fails: the run waited for its lane"
sleep 1
if pgrep -f "sleep $secs" >/dev/null; then
	pkill -f "sleep $secs" || true
	die "main-fails: the lane's sleep $secs was still running"
fi
info "ended in $(($(date +%s) - t0)) s; nothing of the lane left running"

stage "a step that either line may run runs once, on the line free first"
for first in main lane; do
	main_wait=0 lane_wait=2
	[ $first = main ] || main_wait=2 lane_wait=0
	written "claim-$first" <<EOF
lane_steps() {
	lane_step "lane busy" sleep $lane_wait && { ! claim either || lane_step "either (lane)" true; }
}
lane_start lane_steps "one step, then one either line may run"
step "main busy" sleep $main_wait
if claim either; then step "either (main)" true; fi
lane_join
summary
EOF
	run "claim-$first"
	expect "claim-$first" 0 "^  ok +0:0[01] +0:00  either \\($first\\)\$"
	[ "$(grep -cE '^  ok +[0-9:]+ +[0-9:]+  either' "$tmp/claim-$first.out")" -eq 1 ] ||
		{ sed 's/^/  | /' "$tmp/claim-$first.out" >&2; die "claim-$first: the step either line may run ran twice"; }
done
info "run once, by the steps here when they were free first, else by the lane"

stage "a lane killed between two steps fails the run"
written lane-killed <<'EOF'
lane_steps() {
	lane_step "lane before" true && lane_gate && lane_step "lane after" true
}
lane_start lane_steps "two steps"
step "main kills the lane" sh -c "sleep 1; kill -KILL $lane_pid"
lane_join
EOF
run lane-killed
expect lane-killed 1 "why 'the background steps' failed" \
	'error: lane-killed: the background steps ended with no exit status, after their last step passed' \
	'^2 passed, 1 failed$'
info "reported as 'the background steps', failed"

stage "the steps and the lane: each reported, ended and stopped as it should"
