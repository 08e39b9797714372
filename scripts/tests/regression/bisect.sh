#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `git bisect run` driving scripts/regress.sh over a branch of real commits,
# as a kernel developer hunts the commit that changed perf_event_open(2):
#   1. the branch: a worktree of the pin at DIR (default
#      $ANTINOMIE_CACHE/bisect/tree), at base + kernel-patch/series, then
#      nine commits in the order of BRANCH below: the changes of
#      changes/ committed with their authors' subjects (the ones that must
#      not change perf_event_open first, then its behaviour changes) and
#      two comment-only commits written here between them;
#   2. `git bisect start TIP SERIES`, then `git bisect run
#      scripts/regress.sh --tree . --corpus LIST --contexts root --out
#      OUT/step` (LIST: the default corpus's random workload), each
#      step's report kept as OUT/step-N;
#   3. the first bad commit must be the branch's first behaviour change
#      (the revert of PERF_COUNT_SW_CGROUP_SWITCHES), and every step must
#      have ended 0 or 1 (none could not test).
# Not a step of the test command: the first build of DIR's kernel is a
# whole kernel (ccache shares no object between two trees), then each
# step builds what the checkout changed and boots the corpus twice (four
# times when it differs). docs/design.md ("Bisection") shows a run.
#
# usage: scripts/tests/regression/bisect.sh [--tree DIR] [--out OUT]
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kernel-lib.sh"

dir=$ANTINOMIE_CACHE/bisect/tree out=$ANTINOMIE_CACHE/bisect/runs
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value"
	case "$1" in
	--tree) dir=$2 ;;
	--out) out=$2 ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
changes=$ANTINOMIE_ROOT/scripts/tests/regression/changes

# The branch, oldest first: "change FILE|AUTHOR|SUBJECT" commits a change
# of changes/ (its header, the provenance, as the message's body);
# "comment FUNCTION" makes one of the comment-only commits below.
BRANCH=(
	"change stable-remove-on-exec-detach-group.patch|Taeyang Lee <0wn@theori.io>|perf/core: Detach event groups during remove_on_exec"
	"change debian-userns-clone-sysctl.patch|Serge Hallyn <serge.hallyn@canonical.com>|add sysctl to disallow unprivileged CLONE_NEWUSER by default"
	"comment syscall-kerneldoc"
	"change simplify-perf-init-event.patch|Peter Zijlstra <peterz@infradead.org>|perf/core: Simplify perf_init_event()"
	"comment perf-security-doc"
	"change revert-sw-cgroup-switches.patch|Antinomie developers <antinomie@antinomie.invalid>|Revert \"perf core: Add PERF_COUNT_SW_CGROUP_SWITCHES event\""
	"change revert-perf-format-lost.patch|Antinomie developers <antinomie@antinomie.invalid>|Revert \"perf/core: Add a new read format to get a number of lost samples\""
	"change debian-perf-paranoid-3.patch|Ben Hutchings <ben@decadent.org.uk>|security,perf: Allow further restriction of perf_event_open"
	"change revert-perfmon-core-access.patch|Antinomie developers <antinomie@antinomie.invalid>|Revert \"perf/core: Open access to the core for CAP_PERFMON privileged process\""
)
FIRST_BAD='Revert "perf core: Add PERF_COUNT_SW_CGROUP_SWITCHES event"'

# comment NAME: one comment-only change to the tree, and its subject.
comment() {
	local file from to
	case "$1" in
	syscall-kerneldoc)
		file=kernel/events/core.c
		from=' \* @attr_uptr:\tevent_id type attributes for monitoring/sampling'
		to=' * @attr_uptr:\tthe event'"'"'s attributes, in the caller'"'"'s memory'
		subject="perf/core: Say where perf_event_open()'s attr argument lives"
		;;
	perf-security-doc)
		file=Documentation/admin-guide/perf-security.rst
		from='^is governed by perf_event_paranoid \[2\]_ setting:'
		to='is governed by the perf_event_paranoid [2]_ setting:'
		subject="Documentation/admin-guide/perf-security: Name the setting as a setting"
		;;
	*) die "no comment-only change named $1" ;;
	esac
	sed -i "s|$from|$to|" "$dir/$file"
	! git -C "$dir" diff --quiet -- "$file" || die "the comment-only change $1 changed nothing in $file"
	commit_all "Antinomie developers <antinomie@antinomie.invalid>" "$subject" "A comment-only change: nothing that the kernel does changes."
}

# commit_all AUTHOR SUBJECT BODY
commit_all() {
	git -C "$dir" add -A
	git -C "$dir" -c user.name="Antinomie bisect" -c user.email=bisect@antinomie.invalid \
		commit -q --author="$1" -m "$2" -m "$3" || die "cannot commit $2"
}

resolve_source
ensure_base_git
sync_build_tree
series_head=$(git -C "$BUILD_TREE" rev-parse HEAD)
release_lock "$KERNEL_BUILD_LOCK"

stage "the branch: ${#BRANCH[@]} commits on the series, in $dir"
if [ -e "$dir/.git" ]; then
	git -C "$dir" bisect reset >/dev/null 2>&1 || true
	git -C "$dir" checkout -q -f -B antinomie-bisect "$series_head" || die "cannot reset $dir to the series"
	git -C "$dir" clean -q -fdx
else
	mkdir -p "$(dirname "$dir")"
	git --git-dir="$BASE_GIT" worktree prune
	git --git-dir="$BASE_GIT" worktree add -q -f -B antinomie-bisect "$dir" "$series_head" ||
		die "cannot make a worktree at $dir"
fi
dir=$(cd "$dir" && pwd)
for entry in "${BRANCH[@]}"; do
	kind=${entry%% *} spec=${entry#* }
	if [ "$kind" = comment ]; then
		comment "$spec"
		continue
	fi
	IFS='|' read -r file author subject <<<"$spec"
	git -C "$dir" apply "$changes/$file" || die "$file does not apply on the branch"
	commit_all "$author" "$subject" "$(sed '/^\(diff --git\|From: \|---$\)/,$d' "$changes/$file")"
done
git -C "$dir" log --oneline "$series_head..HEAD" | sed 's/^/    /'

corpus=$out/random.list
rm -rf "$out"
mkdir -p "$out"
grep '^random ' "$ANTINOMIE_ROOT/qemu/corpus/default.list" >"$corpus" ||
	die "qemu/corpus/default.list has no random line"
# One directory per step, in the order git bisect ran them.
cat >"$out/step" <<EOF
#!/bin/sh
n=\$(ls -d "$out"/step-* 2>/dev/null | wc -l)
rc=0
"$ANTINOMIE_ROOT/scripts/regress.sh" --tree . --corpus "$corpus" --contexts root --out "$out/step-\$n" || rc=\$?
echo "\$(git rev-parse --short HEAD) exit \$rc" >>"$out/steps"
exit \$rc
EOF
chmod +x "$out/step"

stage "git bisect run: good is the series, bad the branch's tip"
cd "$dir"
git bisect start HEAD "$series_head" || die "git bisect start failed"
git bisect run "$out/step" >"$out/bisect.log" 2>&1 || die "git bisect run failed (see $out/bisect.log)"
first=$(sed -n 's/^\([0-9a-f]*\) is the first bad commit$/\1/p' "$out/bisect.log")
git bisect log >"$out/bisect-log.txt"
git bisect reset >/dev/null
[ -n "$first" ] || die "git bisect named no first bad commit (see $out/bisect.log)"
info "steps (commit, regress.sh's exit): $(paste -sd, "$out/steps" | sed 's/,/, /g')"
! grep -qv ' exit [01]$' "$out/steps" || die "a step could not test (see $out/steps and $out/step-*)"
subject=$(git log -1 --format=%s "$first")
info "first bad commit: $(git log -1 --format='%h %s' "$first")"
[ "$subject" = "$FIRST_BAD" ] || die "git bisect found '$subject', not the first behaviour change, '$FIRST_BAD'"
stage "git bisect run found the first behaviour change in $(wc -l <"$out/steps") steps"
