#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# How scripts/regress.sh reads a changed kernel's report of a failure of
# its own (scripts/lib.sh's kernel_reports, scripts/regress-report.py's
# splat-run and splat), on consoles written here as a TCG guest's come
# out: CRLF line ends, printk stamps, the corpus scenario's run markers
# in the kernel's log, a program's output on the tty in between, an RCU
# stall's report with the function the CPU was in.
#   - the run the kernel was in is the one the markers say was running
#     at the first report, whatever the tty printed around it (a marker
#     in the middle of the tty's line too), and none after that run's
#     end marker;
#   - the same failure (an RCU stall in the same function, after another
#     address) in the same run of the second boot, also after that run's
#     end (the second boot runs it alone), is a "splat", with the
#     console from the first report on, its line numbers those of
#     kernel_reports even after a form feed and a lone CR, a vertical tab
#     in a report line, and an invalid UTF-8 byte read as a replacement;
#   - could not test (error) when the second boot did not fail, failed
#     another way (an Oops elsewhere, a stall elsewhere), when the stall
#     report blames a starved kthread (after another CPU's backtrace),
#     when no line names the failure (a bare
#     call trace), when the baseline's run in the second boot timed out,
#     and when the first report was outside every run (every run then
#     says why);
#   - the report of a splat exits 1, its junit.xml is XML a parser reads
#     although the console held a control character.
# No kernel, no guest.
. "$(dirname "$0")/../lib.sh"
need_cmd python3 jq

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
report=$ANTINOMIE_ROOT/scripts/regress-report.py
printf 'random root\ndecisions root\ndecisions user-p2\n' >"$tmp/runs"

# console NAME FAILURE [AFTER_END]: $tmp/NAME, a console of the corpus's
# three runs in which the kernel fails (FAILURE: stall, stall-elsewhere,
# starved, oops, trace or none) while decisions as root runs, or after
# it has ended (AFTER_END 1), and $tmp/NAME.reports, its kernel_reports.
# CRLF line ends and printk stamps as the serial port gives them; the
# tty's line about the first run comes out late, with the kernel's
# marker of the second in its middle.
console() {
	local f=$tmp/$1 failure=$2 after_end=${3:-0} n
	{
		echo '[    0.000000] Linux version 6.12.94+'
		echo "antinomie-init: 6.12.94+, 4 cpus, scenario 'corpus'"
		echo '[   10.100000] corpus-run: [1/3] random as root: running'
		echo '[   12.100000] corpus-run: [1/3] random as root: ended'
		echo 'corpus: [1/3] random as root: status 0 aft[   12.200000] corpus-run: [2/3] decisions as root: running'
		printf 'er 2 s; \fcapture whole\r\r\n'
		[ "$after_end" = 0 ] || echo '[   14.000000] corpus-run: [2/3] decisions as root: ended'
		case $failure in
		stall | stall-elsewhere | starved)
			echo '[   54.836816] rcu: INFO: rcu_sched self-detected stall on CPU'
			printf '[   54.836900] rcu: \t0-....: (5249 ticks this GP) idle=0694/1/0x4000000000000000\n'
			echo '[   54.837100] CPU: 0 UID: 0 PID: 578 Comm: antinomie-workl Tainted: G N 6.12.94+ #1'
			if [ "$failure" = stall-elsewhere ]; then
				echo '[   54.837200] RIP: 0010:toggle_bp_slot.constprop.0+0x31b/0x95d'
			else
				printf '[   54.837200] RIP: 0010:task_bp_pinned.constprop.0+0x%x/0x188\n' $((RANDOM % 256))
			fi
			printf '[   54.837300] Call Trace:\xff\n'
			echo '[   54.837400]  <TASK>'
			printf '[   54.837500]  ? release_bp_slot+0x2a/0x43\x01\n'
			# Another CPU's backtrace, then what the stall says of its
			# kthread: more than a report's 40 lines on.
			for n in $(seq 50); do
				printf '[   54.838%03d]  ? frame_%d+0x1/0x2\n' "$n" "$n"
			done
			[ "$failure" != starved ] || echo '[   54.839000] rcu: rcu_sched kthread starved for 5000 jiffies!'
			printf '[   54.840319] Kernel panic - not syncing: RCU Stall\v\n'
			;;
		oops)
			echo '[   20.000000] BUG: kernel NULL pointer dereference, address: 00000000000000a8'
			echo '[   20.000100] Oops: Oops: 0000 [#1] SMP'
			echo '[   20.000200] RIP: 0010:find_get_context+0x5e/0x2a0'
			echo '[   20.000300] Call Trace:'
			echo '[   20.000400] Kernel panic - not syncing: Fatal exception'
			;;
		trace)
			echo '[   20.000000] Call Trace:'
			echo '[   20.000100]  <TASK>'
			echo '[   20.000200]  ? out_of_memory+0x1/0x2'
			;;
		esac
	} | sed 's/$/\r/' >"$f"
	kernel_reports "$f" >"$f.reports"
}

# The baseline's results of both boots: decisions as root ran to the end
# (a status), but in $tmp/baseline-timed-out, where the time limit
# stopped it.
for b in baseline baseline-alone baseline-timed-out; do
	mkdir -p "$tmp/$b/decisions/root"
	echo 0 >"$tmp/$b/decisions/root/status"
done
echo 60 >"$tmp/baseline-timed-out/decisions/root/timed-out"

# splat FIRST SECOND [BASELINE_ALONE]: regress-report.py splat on the
# consoles FIRST and SECOND ("-": no second boot), its compare.json in
# $tmp/compare.json.
splat() {
	local second=${2:--}
	python3 "$report" splat --runs "$tmp/runs" --console "$tmp/$1" --reports "$tmp/$1.reports" \
		--rerun-console "$tmp/$second" --rerun-reports "$tmp/$second.reports" \
		--baseline-runs "$tmp/baseline" --rerun-baseline-runs "$tmp/${3:-baseline-alone}" \
		--out "$tmp/compare.json" || die "regress-report.py splat failed on $1 and $2"
}
# outcome NAME CONTEXT: that run's outcome and reason in $tmp/compare.json.
outcome() {
	jq -r --arg w "$1" --arg c "$2" '.[] | select(.workload == $w and .context == $c) | "\(.outcome): \(.reason)"' \
		"$tmp/compare.json"
}

stage "the run the kernel was in, from the kernel's own markers"
console first stall
console alone stall
console after-end stall 1
[ "$(python3 "$report" splat-run --console "$tmp/first" --reports "$tmp/first.reports")" = "decisions root" ] ||
	die "splat-run does not say decisions as root was running at the stall"
[ -z "$(python3 "$report" splat-run --console "$tmp/after-end" --reports "$tmp/after-end.reports")" ] ||
	die "splat-run blames a run for a stall after that run's end"
info "decisions as root; none after its end marker"

stage "the same failure in the same run, twice: a splat"
splat first alone
got=$(outcome decisions root)
[ "$got" = "splat: the changed kernel failed running decisions as root (stall in task_bp_pinned), and the same when it ran alone; the baseline kernel ran it to the end both times" ] ||
	die "decisions as root: $got"
first_line=$(jq -r '.[] | select(.outcome == "splat") | .kernel_report[0]' "$tmp/compare.json")
[ "$first_line" = "rcu: INFO: rcu_sched self-detected stall on CPU" ] ||
	die "the console shown does not start at the report (line numbers out of step?): $first_line"
jq -e '.[] | select(.outcome == "splat") | .kernel_report | any(. == "Call Trace:\ufffd")' "$tmp/compare.json" >/dev/null ||
	die "the invalid byte in a report line is not read as a replacement character"
for w in random:root decisions:user-p2; do
	[[ "$(outcome "${w%%:*}" "${w#*:}")" == "error: not compared: the changed kernel failed running decisions as root"* ]] ||
		die "$w: $(outcome "${w%%:*}" "${w#*:}")"
done
info "$got"

# check FIRST SECOND WANT [BASELINE_ALONE]: decisions as root's outcome
# and reason start with WANT.
check() {
	splat "$1" "$2" "${4:-}"
	got=$(outcome decisions root)
	[[ "$got" == "$3"* ]] || die "$1 then $2: decisions as root is '$got', not '$3...'"
	info "$1 then $2${4:+ (baseline: $4)}: $got"
}
check first after-end "splat: the changed kernel failed running decisions as root (stall in task_bp_pinned), and the same when it ran alone"

stage "anything else could not test"
console oops oops
console elsewhere stall-elsewhere
console starved starved
console quiet none
console trace trace
failed="error: the changed kernel failed running decisions as root (stall in task_bp_pinned)"
check first - "$failed, but not when it ran alone"
check first quiet "$failed, but not when it ran alone"
check first oops "$failed, and otherwise when it ran alone (BUG: kernel NULL pointer dereference in find_get_context)"
check first elsewhere "$failed, and otherwise when it ran alone (stall in toggle_bp_slot)"
check starved starved "$failed, twice, but the kernel blames a starved kthread"
check first alone "$failed, twice, but the baseline kernel did not run it to the end" baseline-timed-out
check trace trace "error: the changed kernel failed running decisions as root (an unnamed report: Call Trace:), and otherwise when it ran alone (an unnamed report: Call Trace:)"
splat after-end -
[ "$(jq '[.[] | select(.outcome == "error" and (.reason | startswith("the changed kernel failed outside every run (stall in task_bp_pinned)")))] | length' "$tmp/compare.json")" = 3 ] ||
	die "a failure outside every run does not make every run could not test: $(jq -c '[.[] | .reason]' "$tmp/compare.json")"
info "outside every run: every run could not test, saying why"

stage "the report of a splat"
splat first alone
jq -n '{baseline: {kernel: "b", bzImage: ""}, changed: {kernel: "c", bzImage: ""}, seed: 1, contexts: ["root", "user-p2"], corpus: ["l"]}' >"$tmp/meta.json"
mkdir "$tmp/out"
rc=0
python3 "$report" report --first "$tmp/compare.json" --meta "$tmp/meta.json" --out "$tmp/out" || rc=$?
[ $rc -eq 1 ] || die "the report of a splat exited $rc, not 1 (changed)"
grep -q '^regress: CHANGED (exit 1): .*in 1 of them the changed kernel reported a failure of its own' "$tmp/out/summary.txt" ||
	die "summary.txt's first line does not say the changed kernel failed: $(head -n 1 "$tmp/out/summary.txt")"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/out/junit.xml" ||
	die "junit.xml is not XML"
info "$(head -n 1 "$tmp/out/summary.txt")"
stage "a kernel's report of a failure is read right"
