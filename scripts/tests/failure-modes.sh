#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The pipeline must fail loudly on bad input: each case below has to exit
# non-zero with a one-line "error: ..." reason that names the problem.
#   - a host command the scripts need that is missing from PATH
#   - a tarball whose checksum is wrong
#   - a patch whose context does not apply
#   - a kernel option that does not stick after merging the fragments
#   - a command whose failures could not test, failing in a function
#     (exit 125, not the failing command's status)
#   - a guest that panics
#   - a guest that hangs (timeout)
# Needs a built 'normal' kernel and an initramfs (the test command makes them).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../kernel-lib.sh"

tmp=$(mktemp -d)
hang_pid=""
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
	stop_job_tree "$hang_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0 failed=0

# expect_failure [--status N] NAME REGEX CMD...: CMD must exit non-zero (N,
# if given) and its stderr must carry exactly one "error:" line, matching
# REGEX.
expect_failure() {
	local want=any rc=0
	if [ "$1" = --status ]; then
		want=$2
		shift 2
	fi
	local name=$1 regex=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	local reason
	reason=$(grep '^error: ' "$tmp/err" || true)
	if [ $rc -ne 0 ] && { [ "$want" = any ] || [ $rc -eq "$want" ]; } &&
		[ "$(grep -c . <<<"$reason")" -eq 1 ] && grep -qE "$regex" <<<"$reason"; then
		echo "ok     $name: exit $rc, $reason"
		passed=$((passed + 1))
	else
		echo "FAILED $name: exit $rc, reason '${reason:-<none>}' (wanted /$regex/)"
		sed 's/^/    | /' "$tmp/err" | tail -n 20
		failed=$((failed + 1))
	fi
}

stage "bad input must fail with a one-line reason"

# init sleeps forever: the runner's timeout stops it. The guest waits out
# its 20 s from the start, while the other cases run, and is judged last.
"$ANTINOMIE_ROOT/qemu/run.sh" --quiet --log "$tmp/hang.log" --timeout 20 --append "rdinit=/bin/sleep -- 3600" \
	>"$tmp/hang.out" 2>"$tmp/hang.err" </dev/null &
hang_pid=$!
# hung_guest: the hanging guest's exit status and its stderr.
hung_guest() {
	local rc=0
	wait "$hang_pid" || rc=$?
	cat "$tmp/hang.err" >&2
	return $rc
}

# A PATH that has every host command but rsync (make headers_install needs
# it; a fresh machine lacks it).
mkdir "$tmp/path"
for d in ${PATH//:/ }; do
	for f in "$d"/*; do
		[ -x "$f" ] && [ "${f##*/}" != rsync ] && [ ! -e "$tmp/path/${f##*/}" ] &&
			ln -s "$f" "$tmp/path/${f##*/}"
	done
done
expect_failure "host command missing from PATH" "missing: 'rsync' \\(package rsync\\); run scripts/install-deps.sh" \
	env PATH="$tmp/path" "$ANTINOMIE_ROOT/scripts/check-deps.sh"

# A tarball with the pin's name but other bytes.
head -c 4096 /dev/urandom >"$tmp/$KERNEL_ORIG_TARBALL"
expect_failure "tarball with a wrong checksum" "checksum mismatch for .*$KERNEL_ORIG_TARBALL" \
	env KERNEL_TARBALL="$tmp/$KERNEL_ORIG_TARBALL" "$ANTINOMIE_ROOT/scripts/kernel-source.sh"

# The real series with one context line of the first patch changed.
mkdir "$tmp/series"
cp "$ANTINOMIE_ROOT"/kernel-patch/* "$tmp/series/"
first=$tmp/series/$(head -n1 "$tmp/series/series")
awk '!done && /^ [^ ].*[a-z]/ && seen { sub(/^ /, " CONTEXT THAT IS NOT IN LINUX "); done = 1 } /^@@ / { seen = 1 } { print }' \
	"$first" >"$first.new" && mv "$first.new" "$first"
expect_failure "patch whose context does not apply" "$(basename "$first") does not apply" \
	env ANTINOMIE_PATCH_DIR="$tmp/series" "$ANTINOMIE_ROOT/scripts/check-series.sh"

# KASAN cannot be enabled while tinyconfig's SLUB_TINY stays on.
printf 'CONFIG_KASAN=y\n' >"$tmp/kasan-on-slub-tiny.config"
expect_failure "kernel option that did not stick" "CONFIG_KASAN=y requested by kconfig/kasan-on-slub-tiny.config did not stick" \
	env KCONFIG_EXTRA="$tmp/kasan-on-slub-tiny.config" "$ANTINOMIE_ROOT/scripts/build-kernel.sh" --config-only normal

# A command whose own failures could not test (scripts/regress.sh, whose
# 1 says "changed" to git bisect run) failing inside one of its
# functions: 125, not the failing command's status.
printf '. "%s/scripts/lib.sh"\n. "%s/scripts/guest-lib.sh"\nfailures_cannot_test\nf() {\n\tfalse\n}\nf\n' \
	"$ANTINOMIE_ROOT" "$ANTINOMIE_ROOT" >"$tmp/cannot-test.sh"
expect_failure --status 125 "a could-not-test command failing in a function" "failed at line 5" bash "$tmp/cannot-test.sh"

# init exits: the kernel panics ("Attempted to kill init!").
expect_failure "guest that panics" "guest panicked: Kernel panic - not syncing: Attempted to kill init" \
	"$ANTINOMIE_ROOT/qemu/run.sh" --quiet --log "$tmp/panic.log" --timeout 120 --append "rdinit=/bin/false"

expect_failure "guest that hangs" "guest hung: no result after 20s" hung_guest

echo "failure-modes: $passed passed, $failed failed"
[ $failed -eq 0 ]
