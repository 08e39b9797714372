#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Two kernel builds on one cache at once, as a user makes them running
# scripts/demo.sh in one terminal while scripts/regress.sh builds a changed
# kernel in another. The changed kernel (KERNEL_TEST_PATCH: its change is
# applied in the shared build tree while it builds) starts first; the
# plain normal kernel starts once the change is applied. Both must
# succeed; the second must wait for the first and say so, naming it; the
# changed kernel's kernel/events/core.o must hold the change and the
# normal one's be what it was before; the build tree must be left exactly
# at the series, and neither build may have had to take the change out of
# a tree that someone else had already reset. A kernel asked for again
# from the same inputs is not built again, and one with other inputs is
# not taken for it. Then two first uses of an empty cache at once: the
# pinned source unpacked once.
# Needs the normal kernel (the test command builds it first).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../kernel-lib.sh"

change=$ANTINOMIE_ROOT/scripts/tests/regression/perf-copy-attr-ver0.patch
normal=$ANTINOMIE_CACHE/kernels/normal
changed=$ANTINOMIE_CACHE/kernels/normal+$(basename "$change" .patch)
[ -f "$normal/kernel/events/core.o" ] || die "no normal kernel in $normal (run scripts/build-kernel.sh normal)"
before=$(sha256sum <"$normal/kernel/events/core.o")

tmp=$(mktemp -d)
# The changed kernel's build while it runs, in a process group of its own
# (its make and compilers with it); "" once waited for. Never 0, which
# kill(1) takes for the test command's own process group. set -m, not
# setsid(1): a new SID would be a scheduler autogroup of its own,
# and the debug kernel's build at nice 19 beside the test command would
# get as much of the machine as this one.
first=""
trap '[ -z "$first" ] || kill -- -"$first" 2>/dev/null; wait; rm -rf "$tmp"' EXIT

# Two builds: neither may find its kernel up to date and end before the
# other has started. The normal build stays complete (a copy of it is
# where the changed kernel starts), built from other inputs.
echo "other inputs" >"$normal/.antinomie-built"
rm -f "$changed/.antinomie-built"
stage "the changed kernel ($(basename "$change")), in the background"
set -m
KERNEL_TEST_PATCH=$change "$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$tmp/changed.log" 2>&1 </dev/null &
first=$!
set +m
for _ in $(seq 600); do
	grep -q 'applying test patch' "$tmp/changed.log" && break
	kill -0 "$first" 2>/dev/null || break
	sleep 0.2
done
grep -q 'applying test patch' "$tmp/changed.log" ||
	{ tail -n 5 "$tmp/changed.log" >&2; die "the changed kernel's build never applied its change"; }

stage "the normal kernel, while the change is in the build tree"
rc=0
"$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$tmp/normal.log" 2>&1 </dev/null || rc=$?
first_rc=0
wait "$first" || first_rc=$?
first=""
[ "$first_rc" -eq 0 ] || { tail -n 5 "$tmp/changed.log" >&2; die "the changed kernel's build failed (exit $first_rc)"; }
[ "$rc" -eq 0 ] || { tail -n 5 "$tmp/normal.log" >&2; die "the normal kernel's build failed (exit $rc)"; }
wait_line=$(grep -m1 'waiting for' "$tmp/normal.log") ||
	{ sed 's/^/  | /' "$tmp/normal.log" >&2; die "the normal kernel's build did not say that it waited for the changed one"; }
[[ "$wait_line" == *"build-kernel"* ]] || die "the wait does not name the holder: $wait_line"
info "the normal build said: ${wait_line#"${wait_line%%[! ]*}"}"
! grep -h 'could not take' "$tmp/changed.log" "$tmp/normal.log" >&2 ||
	die "a build could not take its change out of the build tree (above)"

stage "each kernel holds what it was built from"
cmp -s "$normal/kernel/events/core.o" "$changed/kernel/events/core.o" &&
	die "the changed kernel's core.o is the normal one's: the change was lost from the build tree"
[ "$(sha256sum <"$normal/kernel/events/core.o")" = "$before" ] ||
	die "the normal kernel's core.o changed: it was built with the other build's change"
resolve_source >/dev/null
left=$(git -C "$ANTINOMIE_CACHE/pin/$SRC_KEY/build" status --porcelain --untracked-files=no)
[ -z "$left" ] || die "the build tree is left with changes: $(head -n 3 <<<"$left" | paste -sd' ' -)"
info "both built; the build tree is at the series"

# A kernel asked for again from the same inputs is not built again; one
# asked for with a test patch of the same name but other content is not
# taken for it (this one does not apply: the build must say so).
stage "the same inputs again: no build; another patch of the same name: not the kernel built"
"$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$tmp/again.log" 2>&1 </dev/null ||
	{ tail -n 5 "$tmp/again.log" >&2; die "building the normal kernel again failed"; }
grep -q "normal kernel up to date" "$tmp/again.log" ||
	{ sed 's/^/  | /' "$tmp/again.log" >&2; die "the normal kernel, asked for again from the same inputs, was built again"; }
mkdir "$tmp/other"
other=$tmp/other/$(basename "$change")
sed 's/^ \tif (!size)$/ \tif (!size_that_is_not_there)/' "$change" >"$other"
cmp -s "$change" "$other" && die "could not make another patch of the name $(basename "$change")"
rc=0
KERNEL_TEST_PATCH=$other "$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$tmp/other.log" 2>&1 </dev/null || rc=$?
if [ $rc -eq 0 ] || ! grep -q "does not apply" "$tmp/other.log"; then
	sed 's/^/  | /' "$tmp/other.log" >&2
	die "a test patch of the same name and other content was taken for the kernel built before (exit $rc)"
fi
info "$(grep -m1 'up to date' "$tmp/again.log" | sed 's/^==> \[[^]]*\] //')"

# Two first uses of an empty cache at once (the test command's cargo test
# and its debug kernel's build): the pinned source is unpacked once, whole,
# where both say it is. The test holds the source's lock until both
# commands say that they wait for it, so that both have found the source
# missing before either may unpack it. A tarball of the pinned version's
# Makefile and ten thousand empty files stands for the real one (whose
# fetch from the apt archive is under the same lock, not tested here).
stage "two commands on an empty cache at once: the source unpacked once"
fake=$tmp/fake/linux-$KERNEL_VERSION
mkdir -p "$fake/many"
IFS=. read -r version patchlevel sublevel <<<"$KERNEL_VERSION"
printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = %s\n' "$version" "$patchlevel" "$sublevel" >"$fake/Makefile"
(cd "$fake/many" && seq 10000 | xargs touch)
tar -cf "$tmp/fake.tar" -C "$tmp/fake" "linux-$KERNEL_VERSION"
sha=$(sha256sum <"$tmp/fake.tar" | cut -d' ' -f1)
mkdir -p "$tmp/empty/locks"
exec {held}>>"$tmp/empty/locks/kernel-source"
flock "$held"
pids=()
for n in 1 2; do
	env -u ANTINOMIE_LOCKS_HELD ANTINOMIE_CACHE="$tmp/empty" KERNEL_TARBALL="$tmp/fake.tar" KERNEL_TARBALL_SHA256="$sha" \
		"$ANTINOMIE_ROOT/scripts/kernel-source.sh" >"$tmp/source$n.out" 2>"$tmp/source$n.log" </dev/null &
	pids+=($!)
done
# waiting: how many of the two have said that they wait.
waiting() {
	cat "$tmp"/source?.out | grep -c 'waiting for the pinned source' || true
}
for _ in $(seq 300); do
	[ "$(waiting)" -lt 2 ] || break
	kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null || break
	sleep 0.1
done
waited=$(waiting)
flock -u "$held"
exec {held}>&-
rcs=""
for pid in "${pids[@]}"; do
	rc=0
	wait "$pid" || rc=$?
	rcs="$rcs $rc"
done
[ "$rcs" = " 0 0" ] || { tail -n 3 "$tmp"/source?.log >&2; die "two kernel-source.sh at once on an empty cache exited$rcs, not 0 0"; }
[ "$waited" -eq 2 ] || die "$waited of the two commands waited for the source's lock, not both"
unpacks=$(cat "$tmp"/source?.out | grep -c 'unpacking fake.tar' || true)
[ "$unpacks" -eq 1 ] || die "the source was unpacked $unpacks times, not once"
src=$(tail -n 1 "$tmp/source1.out")
[ "$src" = "$(tail -n 1 "$tmp/source2.out")" ] || die "the two said different trees: $src, $(tail -n 1 "$tmp/source2.out")"
[ "$(find "$src" -type f | wc -l)" -eq 10002 ] ||
	die "$src holds $(find "$src" -type f | wc -l) files, not the tarball's 10001 and the mark"
info "both waited; unpacked once, in $src"
