# SPDX-License-Identifier: GPL-2.0-only
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

# capture_cgroup: make $capture_cgroup; returns 1, with the reason on
# stdout, if it cannot.
capture_cgroup() {
	[ -e /sys/fs/cgroup/cgroup.procs ] ||
		{ echo "$capture_prog: no cgroup2 on /sys/fs/cgroup (a kernel without CONFIG_CGROUPS?)"; return 1; }
	mkdir -p "$capture_cgroup" ||
		{ echo "$capture_prog: cannot make $capture_cgroup"; return 1; }
}

# launch CONTEXT CWD PREFIX COMMAND...: run COMMAND in the cgroup
# $capture_cgroup, in the directory CWD (created), stdin /dev/null, its
# stdout, stderr and exit status into PREFIXstdout, PREFIXstderr and
# PREFIXstatus (PREFIX an absolute "DIR/" or "DIR/control."), and its
# status in launch_status (125 if the cgroup cannot be had). With a
# CONTEXT (root, perfmon, user-p4, user-p3, user-p2, user-p1, user-p0,
# user-m1, userns) it runs through `antinomie-context --other-user-task
# CONTEXT --`, which sets the context up, checks it, writes its
# `context: ` line first on stderr and exits 125 when the context is not
# what it claims; CWD is then made writable by every uid, as the
# context's unprivileged uid writes there (perf record's perf.data). An
# empty CONTEXT runs COMMAND as the caller, root.
#
# With capture_dir set, COMMAND runs under `reader -- COMMAND` (capture
# on, limited to $capture_cgroup, which the reader puts COMMAND in): the
# raw trace to capture_dir/trace.antinomie, what the reader prints to
# capture_dir/reader.txt, its JSON summary (how COMMAND ended, what was
# lost; the host reads it) to capture_dir/reader.stderr, its exit status
# to capture_dir/reader.status and capture_status; capture_reader_args
# are its extra arguments, as shell words (`--lossless`, `--filter "ret <
# 0"`). Without it (a control run, capture off) COMMAND runs in the same
# cgroup, so that the two runs differ in the capture only.
launch() {
	launch_context=$1 launch_cwd=$2 launch_prefix=$3
	shift 3
	mkdir -p "$launch_cwd"
	if [ -n "$launch_context" ]; then
		chmod 1777 "$launch_cwd"
		set -- antinomie-context --other-user-task "$launch_context" -- "$@"
	fi
	if ! capture_cgroup >"${launch_prefix}stderr"; then
		launch_status=125
		echo "$launch_status" >"${launch_prefix}status"
		return
	fi
	# COMMAND's output and status are written by a shell around it, so that
	# under capture they stay apart from the reader's.
	# shellcheck disable=SC2016
	set -- /bin/sh -c 'p=$1; shift; "$@" >"${p}stdout" 2>"${p}stderr"; s=$?; echo $s >"${p}status"; exit $s' \
		launch "$launch_prefix" "$@"
	if [ -n "${capture_dir:-}" ]; then
		eval "set -- reader --cgroup \"\$capture_cgroup\" -w \"\$capture_dir/trace.antinomie\" \
			--summary json ${capture_reader_args:-} -- \"\$@\""
		(cd "$launch_cwd" && exec "$@") </dev/null >"$capture_dir/reader.txt" 2>"$capture_dir/reader.stderr"
		capture_status=$?
		echo "$capture_status" >"$capture_dir/reader.status"
		# Its status is the program's or 125 either way: no JSON summary is
		# what tells that the reader itself failed.
		grep -q '^{' "$capture_dir/reader.stderr" ||
			echo "$capture_prog: the reader failed: $(tail -n 3 "$capture_dir/reader.stderr")"
	else
		(echo 0 >"$capture_cgroup/cgroup.procs" && cd "$launch_cwd" && exec "$@") </dev/null
	fi
	launch_status=$(cat "${launch_prefix}status" 2>/dev/null) || launch_status=125
}

# capture_said: what the reader's JSON summary in capture_dir/reader.stderr
# says of the capture, for the console: whole, or not (the host decides
# from the summary itself).
capture_said() {
	if grep -q '"capture_whole":true' "$capture_dir/reader.stderr"; then
		echo "capture whole"
	else
		echo "capture NOT whole (reader exited $capture_status: $(tail -n 1 "$capture_dir/reader.stderr"))"
	fi
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
