#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where capture's guest instructions go, per kernel function.

usage: qemu/bench/insn-profile.py --map System.map [--base-map System.map]
                                  --calls N [--base-calls N0] [--title T] [--top K]
                                  [--labels BASE,TEST]
                                  [--program ELF --program-bases B0,B,T0,T]
                                  BASE0 BASE TEST0 TEST

The four are logs of qemu/bench/insn-profile.c ("insns: TOTAL", then
"VADDR COUNT" per guest address) from boots of one kernel and image
(scripts/bench.sh --steps profile): BASE with capture off, TEST with
capture on, each once with N calls and once (BASE0, TEST0) with N0 (by
default none), so that what a mode costs outside the calls (capture on
allocates and clears its rings) cancels out; counts are per call,
divided by N - N0. BASE may come from another kernel (the off
kernel against capture off): --base-map is then its System.map. Every address is charged to the kernel function
that contains it (the last text symbol at or below it in System.map);
addresses below the kernel's text are "user space", but for one
--program, whose addresses are charged to its own functions (nm's
symbols): at the load address each boot had it at (--program-bases, hex,
"-" where it did not run) when it is position-independent, at the
symbols' own addresses when it is not. Prints a Markdown
table per function of ((TEST - TEST0) - (BASE - BASE0)) / (N - N0), the
instructions capture adds per call, largest first, with each mode's own
per-call count beside it; the rows sum to the total line.
"""
import argparse
import bisect
import os
import re
import subprocess
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


def load_program(path):
    """Sorted function addresses and names of an ELF program (nm's
    symbols, demangled, Rust's hash suffix dropped), and whether they are
    offsets from where it loads (ET_DYN: position-independent) rather
    than where it runs (ET_EXEC)."""
    with open(path, "rb") as f:
        header = f.read(18)
    if len(header) < 18 or header[:4] != b"\x7fELF":
        sys.exit(f"error: insn-profile: {path} is not an ELF file")
    e_type = int.from_bytes(header[16:18], "little")
    if e_type not in (2, 3):
        sys.exit(f"error: insn-profile: {path} is neither a program nor position-independent (ELF type {e_type})")
    out = subprocess.run(["nm", "--defined-only", "--demangle", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: insn-profile: nm {path}: {out.stderr.strip()}")
    syms = []
    for line in out.stdout.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), re.sub(r"::h[0-9a-f]{16}$", "", parts[2])))
    if not syms:
        sys.exit(f"error: insn-profile: no text symbols in {path}")
    syms.sort()
    name = os.path.basename(path)
    return [a for a, _ in syms], [f"{name}: {n}" for _, n in syms], e_type == 3


def by_function(counts, addrs, names, text_end, program=None, base=None):
    out = {}
    first = addrs[0]
    for addr, n in counts.items():
        if addr < first and base is not None and program[0][0] <= addr - base:
            i = bisect.bisect_right(program[0], addr - base) - 1
            # Far past the program's last function symbol (1 MiB: more
            # than its text runs on after it) is another mapping, a
            # library, the stack or another program.
            fn = program[1][i] if addr - base < program[0][-1] + (1 << 20) else "(user space)"
        elif addr < first:
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
    ap.add_argument("--program")
    ap.add_argument("--program-bases")
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
    program, bases = None, [None] * 4
    if a.program_bases and not a.program:
        sys.exit("error: insn-profile: --program-bases goes with --program")
    if a.program:
        program = load_program(a.program)
        given = (a.program_bases or "").split(",")
        if len(given) != 4:
            sys.exit("error: insn-profile: --program needs --program-bases B0,B,T0,T (hex, or - where it did not run)")
        # A program that is not position-independent runs at its
        # symbols' addresses, wherever the boot saw its first mapping.
        bases = [None if b == "-" else int(b, 16) if program[2] else 0 for b in given]
    funcs = {}
    totals = {}
    for i, name in enumerate(("base0", "base", "test0", "test")):
        counts, totals[name] = load_profile(getattr(a, name))
        funcs[name] = by_function(counts, *(base_map if name.startswith("base") else test_map), program, bases[i])

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
    if program:
        # Where the added instructions run: the program's functions,
        # other user space (the calling threads, another program), the
        # kernel (with its modules, BPF programs and trampolines).
        where = {"program": 0.0, "user": 0.0, "kernel": 0.0}
        prefix = program[1][0].split(": ", 1)[0] + ": "
        for fn, b, t in rows:
            key = "program" if fn.startswith(prefix) else "user" if fn == "(user space)" else "kernel"
            where[key] += t - b
        print(
            f"Added by where: {prefix[:-2]} {where['program']:+.1f}, other user space {where['user']:+.1f},"
            f" kernel {where['kernel']:+.1f}"
        )

if __name__ == "__main__":
    main()
