#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare the BPF contender's records with what the workload did.

usage: scripts/bpf-contender-check.py RUN_DIR

RUN_DIR is a scripts/run-in-guest.sh result of
`qemu/bpf-contender/with-bpf.sh VARIANT antinomie-workload SCRIPT`: the
workload's JSON lines (stdout: per call the arguments it passed, the attr
bytes it placed and how many were readable, the result) and the
contender's records (stderr, "bpf| " lines of `antinomie-bpf dump`).
Calls pair by thread, in order. Per call: the argument words, the return
value, and the attr bytes the contender copied against the bytes placed.
Prints one line per call the contender got wrong or could not read, and
the totals; exits 1 if a call is missing or an argument word or result
differs (what any tracer must get right), 0 otherwise: an attr the
contender could not read is what it is measured for, not a failure.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

STATUS = {1: "complete", 2: "null", 3: "fault", 4: "truncated"}


def fields(line):
    kv = {}
    for w in line.split()[1:]:
        k, _, v = w.partition("=")
        kv[k] = v
    return kv


def main():
    run = Path(sys.argv[1])
    calls = [json.loads(l) for l in (run / "stdout").read_text().splitlines() if l.startswith("{")]
    entries, exits = defaultdict(list), defaultdict(list)
    summary = ""
    for line in (run / "stderr").read_text().splitlines():
        if not line.startswith("bpf| "):
            continue
        line = line[5:]
        if line.startswith("ENTRY "):
            f = fields(line)
            entries[int(f["tid"])].append(f)
        elif line.startswith("EXIT "):
            f = fields(line)
            exits[int(f["tid"])].append(f)
        elif line.startswith("antinomie-bpf: variant="):
            summary = line
    print(summary)
    by_tid = defaultdict(list)
    for c in calls:
        by_tid[c["tid"]].append(c)
    bad = 0
    totals = defaultdict(int)
    for tid, cs in sorted(by_tid.items()):
        es, xs = entries.get(tid, []), exits.get(tid, [])
        if len(es) != len(cs) or len(xs) != len(cs):
            print(f"tid {tid}: {len(cs)} calls, {len(es)} BPF entries, {len(xs)} exits")
            bad += 1
            continue
        for c, e, x in zip(cs, es, xs):
            totals["calls"] += 1
            # perf_event_open(2)'s five arguments: the syscall tracepoint
            # carries no sixth word (the workload's tag), `tp` records 0.
            args = [int(a, 0) & (2**64 - 1) for a in e["args"].split(",")][:5]
            want = [a & (2**64 - 1) for a in c["args"]][:5]
            if args != want or int(x["ret"]) != c["ret"]:
                print(f"{c['case']}: args {args} ret {x['ret']}, the workload passed {want} got {c['ret']}")
                bad += 1
                continue
            status = STATUS.get(int(e["status"]), e["status"])
            totals["status " + status] += 1
            placed = bytes.fromhex(c["attr"]["hex"]) if c["attr"] else b""
            readable = c["attr"]["readable"] if c["attr"] else 0
            copied = bytes.fromhex(e["attr"])
            if status in ("complete", "truncated"):
                if copied != placed[: len(copied)]:
                    print(f"{c['case']}: BPF copied {copied.hex()} but {placed[:len(copied)].hex()} was placed")
                    totals["attr differs"] += 1
                else:
                    totals["attr as placed"] += 1
                if status == "truncated":
                    print(f"{c['case']}: size {e['size']}, BPF kept the first {len(copied)} bytes, ret {c['ret']}")
            elif status == "fault":
                print(
                    f"{c['case']}: BPF could not read the attr (read_error {e['read_error']}, "
                    f"{readable} bytes readable), the kernel returned {c['ret']}"
                )
    for k in sorted(totals):
        print(f"{k}: {totals[k]}")
    print(f"missing or wrong: {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
