# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Common helpers for Antinomie's scripts: the pin, cache layout, stage
# logging and one-line failures. Source it; do not run it.

set -euo pipefail

ANTINOMIE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The scripts name every git tree they use (git -C DIR). Run by git itself
# (`git bisect run` in a worktree exports GIT_DIR), they must not let its
# repository stand in for theirs: `git -C BUILD_TREE reset --hard` would
# move the bisected tree's HEAD.
if command -v git >/dev/null; then
	# shellcheck disable=SC2046 # one variable name per word
	unset $(git rev-parse --local-env-vars)
fi

# The pin (docs/design.md: the pinned kernel and its source).
# kernel-patch/BASE repeats it for humans.
KERNEL_VERSION=6.12.94
KERNEL_DEB_VERSION=6.12.94-1
KERNEL_DEB_SUITE=trixie-security
KERNEL_ORIG_TARBALL=linux_${KERNEL_VERSION}.orig.tar.xz
KERNEL_ORIG_SHA256=3eea3dd18f67a103f6f8312e314075f695a27eaddd839e7b6c4641e6616dabba

# Everything large or slow to remake lives outside the repository.
ANTINOMIE_CACHE=${ANTINOMIE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/antinomie}
export ANTINOMIE_CACHE
export CCACHE_DIR=${CCACHE_DIR:-$ANTINOMIE_CACHE/ccache}
# Depend mode: on a miss ccache compiles at once and takes the headers from
# the compiler's own -MMD output (every kbuild compile writes one), where
# by default it first runs the preprocessor over the kernel's headers to
# hash them, then the compiler reads them all again. A kernel from an
# empty cache costs 38 % less CPU (BENCHMARKS.md, "The test command"). What
# it gives up: preprocessed hits across configurations (an option changes
# autoconf.h, which every object lists), which KERNEL_SEED replaces.
# CCACHE_NODEPEND=1 turns it off.
[ -n "${CCACHE_NODEPEND:-}" ] || export CCACHE_DEPEND=1

ANTINOMIE_T0=${ANTINOMIE_T0:-$(date +%s)}
export ANTINOMIE_T0
ANTINOMIE_STAGE_T0=$(date +%s)
ANTINOMIE_PROG=$(basename "$0" .sh)

# Format seconds as m:ss.
fmt_secs() {
	printf '%d:%02d' $(($1 / 60)) $(($1 % 60))
}

# stage NAME...: one progress line per stage, with the time spent since the
# previous stage of this script and since the top-level command started.
stage() {
	local now
	now=$(date +%s)
	printf '==> [%s +%s] %s: %s\n' "$(fmt_secs $((now - ANTINOMIE_T0)))" \
		"$(fmt_secs $((now - ANTINOMIE_STAGE_T0)))" "$ANTINOMIE_PROG" "$*"
	ANTINOMIE_STAGE_T0=$now
}

# info MSG: a detail line under the current stage.
info() {
	printf '    %s\n' "$*"
}

# warn MSG: a problem that does not stop the command, on stderr.
warn() {
	printf 'warning: %s: %s\n' "$ANTINOMIE_PROG" "$*" >&2
}

# die MSG: the one-line reason, on stderr, then a non-zero exit.
die() {
	printf 'error: %s: %s\n' "$ANTINOMIE_PROG" "$*" >&2
	exit 1
}

# stop_process_trees PID...: end each PID and its descendants, down to
# a QEMU that timeout(1) runs in a process group of its own (out of reach
# of a kill of the caller's group or a terminal's interrupt). A stopped
# process forks no more: the trees are stopped until they stop growing,
# then ended, so that nothing started meanwhile is left running as an
# orphan. No PID: nothing to do.
stop_process_trees() {
	local p procs=() before=-1
	[ $# -gt 0 ] || return 0
	[ -e /proc/$$/task/$$/children ] ||
		warn "this kernel lists no task's children (CONFIG_PROC_CHILDREN): QEMU may outlive the processes stopped here"
	while [ ${#procs[@]} -ne "$before" ]; do
		before=${#procs[@]}
		procs=()
		for p in "$@"; do
			mapfile -t -O "${#procs[@]}" procs < <(process_tree "$p")
		done
		[ ${#procs[@]} -eq 0 ] || kill -STOP "${procs[@]}" 2>/dev/null || true
	done
	# One process gone meanwhile makes kill fail; the others must still go on.
	[ ${#procs[@]} -eq 0 ] || { kill -TERM "${procs[@]}"; kill -CONT "${procs[@]}"; } 2>/dev/null || true
}
# stop_job_tree PID: stop_process_trees of PID if it is a background job
# of this shell that still runs (one that has ended may have left its pid
# to another process by now), and reap it.
stop_job_tree() {
	jobs -rp | grep -qx -- "$1" || return 0
	stop_process_trees "$1"
	wait "$1" 2>/dev/null || true
}
# process_tree PID: PID and its descendants, one a line (the kernel's
# list of each task's children; one that has ended has none).
process_tree() {
	local children child
	echo "$1"
	read -r -a children < <(cat /proc/"$1"/task/*/children 2>/dev/null) || true
	for child in "${children[@]}"; do
		process_tree "$child"
	done
}

# kernel_reports LOG: where the kernel reports a failure of its own in
# the console log LOG, one "N:LINE" per line (N the line's number in LOG,
# LINE without its "[    1.234567] " stamp): a panic, BUG, WARNING,
# UBSAN, Oops, a general protection fault, a hung task, an RCU stall, a
# soft or hard lockup, a "cut here" marker or a call trace. KASAN, KFENCE, lockdep, might_sleep
# and hung-task reports all start with one of these. A fault injected on
# purpose (fail-nth, the debug kernel's campaign) is reported with a
# stack dump too: "FAULT_INJECTION: forcing a failure.", then the dump up
# to its "</TASK>"; those dumps are not reports. Threads on several CPUs
# interleave theirs, so they are counted open and closed.
kernel_reports() {
	sed -e 's/\r$//' -e 's/^\[ *[0-9]*\.[0-9]*\] //' "$1" |
		awk '/FAULT_INJECTION: forcing a failure/ { open++ }
		!open && /^(BUG: |WARNING: |UBSAN: |Oops|general protection fault|kernel BUG at |Kernel panic|INFO: task |rcu: INFO: |watchdog: BUG: soft lockup|watchdog: Watchdog detected hard LOCKUP|.*\[ cut here \]|Call Trace:)/ { print NR ":" $0 }
		open && /<\/TASK>/ { open-- }'
}

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			die "required command '$c' not found (run scripts/install-deps.sh)"
	done
}

# apt_install_missing PACKAGE...: install the Debian packages of the list
# that are not installed, after one apt-get update, through the machine's
# own apt configuration (its sources and mirror); apt is not called when
# all are installed, so a script may call this on every run.
apt_install_missing() {
	local p sudo=
	local -a missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	stage "installing ${missing[*]}"
	$sudo apt-get update -qq || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

# apt_source_download APT_DIR DEST LOG PKG=VER: `apt-get source
# --download-only PKG=VER` into DEST, through a private apt state in APT_DIR
# whose sources.list is read from stdin (deb-src lines), so the system's apt
# configuration is neither read for sources nor edited. apt's output goes
# to LOG; a failure dies with the step that failed.
apt_source_download() {
	local apt_dir=$1 dest=$2 log=$3 spec=$4
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/etc/preferences.d" "$apt_dir/etc/empty.d" \
		"$apt_dir/cache" "$dest"
	cat >"$apt_dir/etc/sources.list"
	local -a aptopts=(
		-o "Dir::Etc::sourcelist=$apt_dir/etc/sources.list"
		-o "Dir::Etc::sourceparts=$apt_dir/etc/empty.d"
		-o "Dir::Etc::preferencesparts=$apt_dir/etc/preferences.d"
		-o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::Cache=$apt_dir/cache"
		-o "APT::Sandbox::User=root"
	)
	apt-get -qq "${aptopts[@]}" update >>"$log" 2>&1 ||
		die "apt-get update of the private deb-src list ($(tr '\n' ';' <"$apt_dir/etc/sources.list")) failed"
	(cd "$dest" && apt-get -qq "${aptopts[@]}" source --download-only "$spec" >>"$log" 2>&1) ||
		die "apt-get source $spec failed"
}

# Paths of the cache.
dl_dir() { echo "$ANTINOMIE_CACHE/dl"; }

# python_venv NAME CHECK PACKAGE...: $ANTINOMIE_CACHE/venv/NAME with
# PACKAGE... from the Python package index, made on first use, one
# install at a time; CHECK is Python that succeeds once they are there.
python_venv() {
	local name=$1 check=$2 venv=$ANTINOMIE_CACHE/venv/$1
	shift 2
	hold_lock "venv-$name" "the venv $venv"
	if ! "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
		stage "installing $* into $venv"
		rm -rf "$venv"
		python3 -m venv "$venv" || die "python3 -m venv $venv failed (Debian's python3 needs python3-venv)"
		"$venv/bin/pip" install -q --disable-pip-version-check "$@" >"$venv/pip.log" 2>&1 ||
			die "pip install $* failed: $(tail -n 3 "$venv/pip.log")"
	fi
	release_lock "venv-$name"
}

# Two commands may share one cache (the demo in one terminal, a regression
# run in another): what they would both write is taken under a lock.
# ANTINOMIE_LOCKS_HELD, exported, names the locks this process tree holds,
# so that a holder's children (regress.sh's build-kernel.sh) go straight on
# instead of waiting for their own parent.
declare -gA ANTINOMIE_LOCK_FDS=()

# hold_lock NAME WHAT: hold $ANTINOMIE_CACHE/locks/NAME until this script
# exits or calls release_lock NAME (flock(1) on a file; the kernel drops
# it with the last open descriptor, however the holder ends). When another
# command holds it, say which and since when, wait, and say how long.
hold_lock() {
	local name=$1 what=$2 file fd t0
	case " ${ANTINOMIE_LOCKS_HELD:-} " in *" $name "*) return 0 ;; esac
	need_cmd flock
	mkdir -p "$ANTINOMIE_CACHE/locks"
	file=$ANTINOMIE_CACHE/locks/$name
	exec {fd}>>"$file"
	if ! flock -n "$fd"; then
		local holder
		holder=$(cat "$file" 2>/dev/null) || true
		info "waiting for $what: held by ${holder:-another command}"
		t0=$(date +%s)
		flock "$fd"
		info "got $what after $(fmt_secs $(($(date +%s) - t0)))"
	fi
	# The holder, for the next command that has to wait.
	printf 'pid %s (%s), since %s\n' "$$" "$(tr '\0' ' ' </proc/$$/cmdline | sed 's/ $//')" \
		"$(date '+%F %T')" >"$file"
	ANTINOMIE_LOCK_FDS[$name]=$fd
	ANTINOMIE_LOCKS_HELD="${ANTINOMIE_LOCKS_HELD:-} $name"
	export ANTINOMIE_LOCKS_HELD
}

# release_lock NAME: give back a lock that hold_lock took in this script.
# Unlocked before the descriptor is closed: a child that inherited it (a
# detached git maintenance) would otherwise hold it on.
release_lock() {
	local fd=${ANTINOMIE_LOCK_FDS[$1]:-}
	[ -n "$fd" ] || return 0
	flock -u "$fd"
	exec {fd}>&-
	unset 'ANTINOMIE_LOCK_FDS[$1]'
	ANTINOMIE_LOCKS_HELD=$(tr ' ' '\n' <<<"$ANTINOMIE_LOCKS_HELD" | grep -vx -e "$1" -e '' | paste -sd' ' -) || true
	export ANTINOMIE_LOCKS_HELD
}

# The kernel build tree, the build directories and the selftests' build:
# every script that writes them holds this. ANTINOMIE_BUILD_TREE_NAME=NAME
# builds in a tree of its own, pin/KEY/NAME (default "build"; another name
# is build-SOMETHING), into build
# directories of its own, under a lock of its own: a build that must not
# wait for the default tree's (the test command builds the debug kernel
# so in the background).
ANTINOMIE_BUILD_TREE_NAME=${ANTINOMIE_BUILD_TREE_NAME:-build}
# Named build-*, so that it can never be pin/KEY's src/, edit/ or base.git/.
[[ "$ANTINOMIE_BUILD_TREE_NAME" =~ ^build(-[a-z0-9]+)*$ ]] ||
	die "ANTINOMIE_BUILD_TREE_NAME=$ANTINOMIE_BUILD_TREE_NAME: must be build or build-NAME (a-z, 0-9)"
KERNEL_BUILD_LOCK=kernel-$ANTINOMIE_BUILD_TREE_NAME
hold_kernel_build_lock() {
	hold_lock "$KERNEL_BUILD_LOCK" "the kernel build tree '$ANTINOMIE_BUILD_TREE_NAME'"
}

# The base commit is made with a fixed identity and date, so its id only
# depends on the source it holds.
BASE_REF=refs/tags/antinomie-base
git_fixed_identity() {
	export GIT_AUTHOR_NAME="Antinomie pin" GIT_AUTHOR_EMAIL="pin@antinomie.invalid"
	export GIT_COMMITTER_NAME="Antinomie pin" GIT_COMMITTER_EMAIL="pin@antinomie.invalid"
	export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
}

# Patch files of the series, in order, from kernel-patch/series.
series_patches() {
	local dir=${1:-$ANTINOMIE_ROOT/kernel-patch} line
	[ -f "$dir/series" ] || die "$dir/series is missing"
	while IFS= read -r line; do
		line=${line%%#*}
		line=${line//[[:space:]]/}
		[ -n "$line" ] || continue
		[ -f "$dir/$line" ] || die "series names $line, which is not in $dir"
		echo "$dir/$line"
	done <"$dir/series"
}
