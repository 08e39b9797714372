# shellcheck shell=sh
# Guest side of a capture run, shared by the scenarios that capture
# programs and hand the results back to the host (run, corpus); installed
# as /lib/antinomie/capture.sh. Source it; do not run it. Its messages
# start with "$capture_prog: " (the scenario's name).
capture_prog=${capture_prog:-capture}

# The cgroup v2 directory the programs run in: the reader captures only
# its tasks' calls (`reader --cgroup`), so that nothing else on the guest
# fills the rings or waits in lossless mode. Made by capture_cgroup.
capture_cgroup=/sys/fs/cgroup/antinomie-workload

# capture_cgroup: mount the cgroup v2 hierarchy if need be and make
# $capture_cgroup; returns 1, with the reason on stdout, if it cannot.
capture_cgroup() {
	[ -e /sys/fs/cgroup/cgroup.procs ] ||
		mount -t cgroup2 none /sys/fs/cgroup ||
		{ echo "$capture_prog: cannot mount cgroup2 on /sys/fs/cgroup (CONFIG_CGROUPS=y?)"; return 1; }
	mkdir -p "$capture_cgroup" ||
		{ echo "$capture_prog: cannot make $capture_cgroup"; return 1; }
}

# capture_start DIR [READER_ARGS...]: start `reader --enable --follow
# --cgroup $capture_cgroup -w DIR/trace.antinomie READER_ARGS` (its output
# to DIR/reader.txt, its summary to DIR/reader.stderr) and wait until it
# has mapped the rings, so that no call of the program runs before the
# capture does. Sets capture_pid and capture_dir; returns 1, with the
# reason on stdout, if the reader did not start within 20 s.
capture_start() {
	capture_dir=$1
	shift
	capture_cgroup || return 1
	reader --enable --follow --cgroup "$capture_cgroup" -w "$capture_dir/trace.antinomie" "$@" \
		>"$capture_dir/reader.txt" 2>"$capture_dir/reader.stderr" &
	capture_pid=$!
	capture_wait=0
	until grep -q /dev/antinomie /proc/$capture_pid/maps 2>/dev/null; do
		capture_wait=$((capture_wait + 1))
		if [ $capture_wait -ge 400 ] || ! kill -0 $capture_pid 2>/dev/null; then
			echo "$capture_prog: reader --follow did not start: $(cat "$capture_dir/reader.stderr")"
			return 1
		fi
		sleep 0.05
	done
}

# capture_stop: stop the reader of capture_start (SIGINT: it drains the
# rings, writes its summary and exits); its status goes to
# $capture_dir/reader.status and is capture_stop's.
capture_stop() {
	kill -INT $capture_pid
	wait $capture_pid
	capture_rc=$?
	echo "$capture_rc" >"$capture_dir/reader.status"
	[ $capture_rc -eq 0 ] ||
		echo "$capture_prog: reader --follow exited with $capture_rc: $(tail -n 3 "$capture_dir/reader.stderr")"
	return $capture_rc
}

# launch CONTEXT CWD PREFIX COMMAND...: run COMMAND in the cgroup
# $capture_cgroup, in the directory CWD (created), stdin /dev/null, its
# stdout, stderr and exit status into PREFIXstdout, PREFIXstderr and
# PREFIXstatus (PREFIX "DIR/" or "DIR/control."), and its status in
# launch_status (125 if the cgroup cannot be had). With a CONTEXT (root,
# perfmon, user-p4, user-p3, user-p2, user-p1, user-p0, user-m1, userns)
# it runs through `antinomie-context --other-user-task CONTEXT --`, which
# sets the context up, checks it, writes its `context: ` line first on
# stderr and exits 125 when the context is not what it claims; CWD is
# then made writable by every uid, as the context's unprivileged uid
# writes there (perf record's perf.data). An empty CONTEXT runs COMMAND as
# the caller, root. A control run (capture off) runs in the same cgroup as
# the captured one, so that the two differ in the capture only.
launch() {
	launch_context=$1 launch_cwd=$2 launch_prefix=$3
	shift 3
	mkdir -p "$launch_cwd"
	if [ -n "$launch_context" ]; then
		chmod 1777 "$launch_cwd"
		set -- antinomie-context --other-user-task "$launch_context" -- "$@"
	fi
	if capture_cgroup >"${launch_prefix}stderr"; then
		(echo 0 >"$capture_cgroup/cgroup.procs" && cd "$launch_cwd" && exec "$@") \
			</dev/null >"${launch_prefix}stdout" 2>"${launch_prefix}stderr"
		launch_status=$?
	else
		launch_status=125
	fi
	echo "$launch_status" >"${launch_prefix}status"
}

# hand_back DIR: SHA256SUMS of every file under DIR (paths relative to
# it), then DIR as one tar stream written straight to the virtio disk
# /dev/vda, which the host unpacks and checks. Returns 1, with the reason
# on stdout, when the results cannot be handed back.
hand_back() {
	hand_back_t0=$(date +%s)
	(cd "$1" && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum -- >SHA256SUMS) ||
		{ echo "$capture_prog: sha256sum failed"; return 1; }
	hand_back_t1=$(date +%s)
	echo "$capture_prog: writing $(du -sk "$1" | cut -f1) KiB of results to /dev/vda (sha256 took $((hand_back_t1 - hand_back_t0)) s)"
	tar -cf /dev/vda -C "$1" . || { echo "$capture_prog: writing the results to /dev/vda failed (is the disk large enough?)"; return 1; }
	sync
	echo "$capture_prog: results written in $(($(date +%s) - hand_back_t1)) s"
}
