#!/usr/bin/env bash
# scripts/check-words.sh must be able to fail: in a scratch git tree made
# of a few of the repository's own files, each planted word has to fail
# the check with a line naming FILE:LINE: WORD, and the tree without a
# plant, or with look-alikes the check must leave alone, has to pass.
. "$(dirname "$0")/../lib.sh"
need_cmd git

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

tree=$tmp/tree
mkdir -p "$tree/kernel-patch" "$tree/qemu/scenarios" "$tree/scripts"
git -C "$tree" init -q
cp "$ANTINOMIE_ROOT/kernel-patch/0002-perf-core-Move-the-body-of-perf_event_open-into-__pe.patch" \
	"$tree/kernel-patch/0003.patch"
cp "$ANTINOMIE_ROOT/qemu/scenarios/filter-e2e" "$tree/qemu/scenarios/"
# The check itself, which must pass its own check (its words are in rot13).
cp "$ANTINOMIE_ROOT/scripts/check-words.sh" "$tree/scripts/"

# The planted words are written in rot13, as in the check, so that this
# file does not spell them either; w TEXT decodes TEXT.
w() { tr 'A-Za-z' 'N-ZA-Mn-za-m' <<<"$1"; }
# A patch whose kernel context and removed lines hold words the check
# must not read: they are the kernel's text, not ours.
cat >"$tree/kernel-patch/context.patch" <<EOF
Subject: [PATCH] example: a patch whose message is clean

It changes a comment of the kernel's own.
---
diff --git a/f.c b/f.c
--- a/f.c
+++ b/f.c
@@ -1,3 +1,3 @@
 /* the $(w frffvba) leader, as in setsid(2) */
-/* the $(w ntrag) of the old code */
+/* what replaces it */
EOF
git -C "$tree" add -A

# check NAME WANT: run the check on the scratch tree; WANT is "pass", or
# the FILE:LINE: WORD line its output must hold.
check() {
	local name=$1 want=$2 rc=0
	run_check >"$tmp/out" 2>&1 || rc=$?
	if [ "$want" = pass ] && [ $rc -eq 0 ]; then
		echo "ok     $name: passes"
		passed=$((passed + 1))
	elif [ "$want" != pass ] && [ $rc -eq 1 ] && grep -qxF "$want" "$tmp/out"; then
		echo "ok     $name: exit 1, names '$want'"
		passed=$((passed + 1))
	else
		echo "FAILED $name: exit $rc, wanted ${want/#pass/a pass}; its output:"
		sed 's/^/  | /' "$tmp/out"
		failed=$((failed + 1))
	fi
}
run_check() {
	"$ANTINOMIE_ROOT/scripts/check-words.sh" "$tree"
}

# plant FILE LINE TEXT: insert TEXT as line LINE of FILE and stage it.
plant() {
	sed -i "$2i\\$3" "$tree/$1"
	git -C "$tree" add "$1"
}

# unplant FILE: back to the staged-at-start content.
unplant() {
	git -C "$tree" checkout -q HEAD -- "$1" 2>/dev/null || {
		git -C "$tree" rm -q --cached "$1"
		rm -f "$tree/$1"
	}
}

git -C "$tree" -c user.name=t -c user.email=t@t.invalid commit -q -m base

check "the copied files, kernel context lines included" pass

plant qemu/scenarios/filter-e2e 3 "# The fix for $(w 'vffhr 12'), as asked."
check "a tracker entry in a script" "qemu/scenarios/filter-e2e:3: $(w 'vffhr 12')"
unplant qemu/scenarios/filter-e2e

plant qemu/scenarios/filter-e2e 5 "# Written in one $(w Frffvba) by two $(w Ntragf)."
check "a capitalised word, first of two" "qemu/scenarios/filter-e2e:5: $(w Frffvba)"
check "a capitalised plural, second of two" "qemu/scenarios/filter-e2e:5: $(w Ntragf)"
unplant qemu/scenarios/filter-e2e

plant kernel-patch/0003.patch 8 "Asked for by the $(w erivrjre) in a $(w serfu-pbagrkg) pass."
check "a commit message of a patch" "kernel-patch/0003.patch:8: $(w erivrjre)"
check "a hyphenated phrase" "kernel-patch/0003.patch:8: $(w serfu-pbagrkg)"
unplant kernel-patch/0003.patch

plant kernel-patch/context.patch 11 "+/* see the $(w 'pybfvat abgr') */"
check "a line the patch adds" "kernel-patch/context.patch:11: $(w 'pybfvat abgr')"
unplant kernel-patch/context.patch

w "gur vffhr'f pnfrf" >"$tree/notes.md"
git -C "$tree" add notes.md
check "a new tracked file" "notes.md:1: $(w "gur vffhr'f")"
unplant notes.md

printf '%s\n' "issued calls, a sessionid, reagents, a stop-gap, issue tracking" >"$tree/notes.md"
git -C "$tree" add notes.md
check "look-alikes that are other words" pass
unplant notes.md

w 'vffhr 12' >"$tree/untracked.md"
check "an untracked file is not the repository's" pass
rm -f "$tree/untracked.md"

echo "check-words test: $passed passed, $failed failed"
[ $failed -eq 0 ]
