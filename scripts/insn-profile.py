#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where capture's guest instructions go, per kernel function.

usage: scripts/insn-profile.py --map System.map [--base-map System.map]
                               --calls N [--base-calls N0] [--title T] [--top K]
                               [--labels BASE,TEST] BASE0 BASE TEST0 TEST

The four are logs of qemu/plugins/insn-profile.c ("insns: TOTAL", then
"VADDR COUNT" per guest address) from boots of one kernel and image
(scripts/bench.sh --steps profile): BASE with capture off, TEST with
capture on, each once with N calls and once (BASE0, TEST0) with N0 (by
default none), so that what a mode costs outside the calls (capture on
allocates and clears its rings) cancels out; counts are per call,
divided by N - N0. BASE may come from another kernel (the off
kernel against capture off): --base-map is then its System.map. Every address is charged to the kernel function
that contains it (the last text symbol at or below it in System.map);
addresses below the kernel's text are "user space". Prints a Markdown
table per function of ((TEST - TEST0) - (BASE - BASE0)) / (N - N0), the
instructions capture adds per call, largest first, with each mode's own
per-call count beside it; the rows sum to the total line.
"""
import argparse
import bisect
import sys


def load_map(path):
    """Sorted text-symbol addresses and names, and the end of kernel text."""
    syms = []
    text_end = None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3:
                continue
            addr, kind, name = int(parts[0], 16), parts[1], parts[2]
            if name == "_etext":
                text_end = addr
            if kind in "tTwW":
                syms.append((addr, name))
    if not syms:
        sys.exit(f"error: insn-profile: no text symbols in {path}")
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms], text_end


def load_profile(path):
    counts = {}
    total = None
    with open(path) as f:
        for line in f:
            if line.startswith("insns: "):
                total = int(line.split()[1])
                continue
            parts = line.split()
            if len(parts) != 2:
                continue
            try:
                counts[int(parts[0], 16)] = int(parts[1])
            except ValueError:
                continue
    if total is None:
        sys.exit(f"error: insn-profile: {path} has no 'insns:' line (did the guest run to the end?)")
    return counts, total


def by_function(counts, addrs, names, text_end):
    out = {}
    first = addrs[0]
    for addr, n in counts.items():
        if addr < first:
            fn = "(user space)"
        elif text_end is not None and addr >= text_end:
            fn = "(modules, BPF, trampolines)"
        else:
            fn = names[bisect.bisect_right(addrs, addr) - 1]
        out[fn] = out.get(fn, 0) + n
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--map", required=True)
    ap.add_argument("--base-map")
    ap.add_argument("--labels", default="capture off,capture on")
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--base-calls", type=int, default=0)
    ap.add_argument("--title", default="")
    ap.add_argument("--top", type=int, default=25)
    for name in ("base0", "base", "test0", "test"):
        ap.add_argument(name)
    a = ap.parse_args()
    if a.calls <= a.base_calls or a.base_calls < 0:
        sys.exit("error: insn-profile: --calls must exceed --base-calls (>= 0)")
    per = a.calls - a.base_calls
    labels = a.labels.split(",")
    if len(labels) != 2:
        sys.exit("error: insn-profile: --labels takes two names, BASE,TEST")
    test_map = load_map(a.map)
    base_map = load_map(a.base_map) if a.base_map else test_map
    funcs = {}
    totals = {}
    for name in ("base0", "base", "test0", "test"):
        counts, totals[name] = load_profile(getattr(a, name))
        funcs[name] = by_function(counts, *(base_map if name.startswith("base") else test_map))

    def per_call(fn, run):
        return (funcs[run].get(fn, 0) - funcs[run + "0"].get(fn, 0)) / per

    names_all = set().union(*funcs.values())
    rows = sorted(
        ((fn, per_call(fn, "base"), per_call(fn, "test")) for fn in names_all),
        key=lambda r: -abs(r[2] - r[1]),
    )
    shown = rows[: a.top]
    rest = [sum(r[i] for r in rows[a.top:]) for i in (1, 2)]
    base = (totals["base"] - totals["base0"]) / per
    test = (totals["test"] - totals["test0"]) / per
    print(f"### {a.title}: guest instructions per call ({a.calls} calls; boots with {a.base_calls} subtracted)\n")
    print(f"| function | {labels[0]} | {labels[1]} | added |")
    print("|---|---:|---:|---:|")
    for fn, b, t in shown:
        print(f"| `{fn}` | {b:.1f} | {t:.1f} | {t - b:+.1f} |")
    print(f"| {len(rows) - len(shown)} other functions | {rest[0]:.1f} | {rest[1]:.1f} | {rest[1] - rest[0]:+.1f} |")
    print(f"| **total** | **{base:.1f}** | **{test:.1f}** | **{test - base:+.1f}** |")
    print(f"\nTotal added: {test - base:+.1f} instructions per call ({labels[1]} over {labels[0]})")

if __name__ == "__main__":
    main()
