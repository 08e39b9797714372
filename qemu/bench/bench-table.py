#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Print the capture-cost tables of a scripts/bench.sh run (Markdown).

usage: qemu/bench/bench-table.py RUN_DIR

RUN_DIR holds what bench.sh wrote: time-bench.log and time-off.log (the
consoles of the timing boots), insn.tsv (one line per instruction-count
boot: kernel mode threads path calls insns), text.tsv (kernel, text bytes)
and loss.log (the loss test's console). Missing parts are left out of the
tables, never invented.
"""

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PATHS = ["einval", "e2big", "swevent", "big", "getpid"]
PATH_LABEL = {
    "einval": "EINVAL (bad flags, attr not read)",
    "e2big": "E2BIG (size 200, non-zero tail)",
    "swevent": "software event, open + close",
    "big": "4096-byte attr, zero tail, open + close",
    "getpid": "getpid (not traced)",
}
LINE = re.compile(
    r"bench: round=(\d+) mode=([\w-]+) path=(\w+) threads=(\d+) calls=(\d+) "
    r"wall_ns=(\d+) ns_per_call=([0-9.]+)"
)


def read_times(log):
    """{(mode, threads, path): [ns per call, one per round]}"""
    cells = defaultdict(list)
    if not log.exists():
        return cells
    for line in log.read_text(errors="replace").splitlines():
        m = LINE.search(line)
        if m:
            _, mode, path, threads, _, _, ns = m.groups()
            cells[(mode, int(threads), path)].append(float(ns))
    return cells


def read_insns(tsv):
    """{(kernel, mode, threads, path): insns per call}, from the N and base boots."""
    boots = defaultdict(dict)
    if not tsv.exists():
        return {}
    for line in tsv.read_text().splitlines():
        kernel, mode, threads, path, calls, insns = line.split("\t")
        boots[(kernel, mode, int(threads))][(path, int(calls))] = int(insns)
    out = {}
    for (kernel, mode, threads), b in boots.items():
        for (path, calls), insns in b.items():
            if path == "zero" or path.startswith("base-"):
                continue
            # The cell's own base boot (N/10 calls of the same path); runs
            # before 2026-12-01 had one 0-call boot per kernel and mode.
            base = [(n, i) for (p, n), i in b.items() if p == "base-" + path]
            base = base or [(n, i) for (p, n), i in b.items() if p == "zero"]
            if not base or base[0][0] >= calls:
                continue
            n0, i0 = base[0]
            out[(kernel, mode, threads, path)] = (insns - i0) / (calls - n0)
    return out


def fmt_ns(v):
    return f"{v / 1000:.2f} µs" if v >= 1000 else f"{v:.0f} ns"


def time_cell(cells, key, base):
    v = cells.get(key)
    if not v:
        return "—"
    med, lo = statistics.median(v), min(v)
    s = f"{fmt_ns(med)} (min {fmt_ns(lo)})"
    if base and cells.get(base) and key != base:
        s += f" ×{med / statistics.median(cells[base]):.2f}"
    return s


def strace_ratio(cells, t, p):
    """strace's time per call over what capture adds to capture off."""
    b, c, s = (cells.get((m, t, p)) for m in ("off", "capture", "strace"))
    if p == "getpid" or not (b and c and s):
        return "—"
    added = statistics.median(c) - statistics.median(b)
    if added <= 0:
        return "capture adds nothing measurable"
    return f"{statistics.median(s) / added:.0f}×"


# The BPF contender's placements (qemu/bpf-contender/), as bench modes.
BPF_MODES = [("bpf-tp", "BPF, syscall tracepoints"), ("bpf-raw", "BPF, raw sys_enter/exit")]


def bpf_table(insn, bench, threads):
    """Capture against ftrace's events and the BPF contender: instructions
    added over capture off per call (and median time), with capture's added
    over the best (fewest added) BPF variant's."""
    out = []
    if not any(k[1].startswith("bpf-") for k in insn) and not any(k[0].startswith("bpf-") for k in bench):
        return out
    out.append(
        "Against the BPF contender: guest instructions per call added over capture off "
        "(as above), median wall time per call beside it (same timing boot); "
        "the last column is capture's added instructions over the best BPF variant's."
    )
    out.append("")
    modes = [("capture", "capture on"), ("ftrace", "ftrace events")] + BPF_MODES + [("strace", "strace")]
    for t in threads:
        if not any(k[2] == t for k in insn) and not any(k[1] == t for k in bench):
            continue
        out.append(f"**{t} thread{'s' if t > 1 else ''}**")
        out.append("")
        out.append(
            "| path | capture off | "
            + " | ".join(label for _, label in modes)
            + " | capture ÷ best BPF (insns) |"
        )
        out.append("|---" * (len(modes) + 3) + "|")
        for p in PATHS:
            b = insn.get(("bench", "off", t, p))
            tb = bench.get(("off", t, p))
            if b is None and not tb:
                continue
            row = [PATH_LABEL[p]]
            cell = [] if b is None else [f"{b:.0f}"]
            if tb:
                cell.append(fmt_ns(statistics.median(tb)))
            row.append("; ".join(cell))
            added = {}
            for mode, _ in modes:
                v = insn.get(("bench", mode, t, p))
                tm = bench.get((mode, t, p))
                cell = []
                if v is not None and b is not None:
                    added[mode] = v - b
                    cell.append(f"{v - b:+.0f}")
                if tm:
                    cell.append(fmt_ns(statistics.median(tm)))
                row.append("; ".join(cell) or "—")
            bpf_added = [added[m] for m, _ in BPF_MODES if m in added]
            ratio = "—"
            if "capture" in added and bpf_added and min(bpf_added) > 0:
                ratio = f"**{added['capture'] / min(bpf_added):.2f}**"
            row.append(ratio)
            out.append("| " + " | ".join(row) + " |")
        out.append("")
    return out


def before_after_table(insn, text, threads):
    """The kernel `before` (bench.sh --before-patch) against the bench
    kernel: instructions per call with capture off and on, what capture
    adds on each, and on the bench kernel capture with lossless mode on;
    then the kernels' text sizes."""
    out = []
    if not any(k[0] == "before" for k in insn):
        return out
    out.append(
        "Before and after: guest instructions per call on the kernel `before` "
        "(bench + the --before-patch change, see run.txt) and on the bench kernel, "
        "same boots as above; +added over capture off on the same kernel; "
        "lossless = capture with lossless mode on, no call waiting."
    )
    out.append("")
    for t in threads:
        if not any(k[0] == "before" and k[2] == t for k in insn):
            continue
        out.append(f"**{t} thread{'s' if t > 1 else ''}**")
        out.append("")
        out.append(
            "| path | before: capture off | before: capture on | after: capture off "
            "| after: capture on | after: lossless | capture on, after ÷ before (per call; added) "
            "| lossless ÷ before's capture on (per call; added) |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for p in PATHS:
            b0 = insn.get(("before", "off", t, p))
            c0 = insn.get(("before", "capture", t, p))
            b1 = insn.get(("bench", "off", t, p))
            if b0 is None or b1 is None:
                continue
            row = [PATH_LABEL[p], f"{b0:.0f}"]
            row.append("—" if c0 is None else f"{c0:.0f} ({c0 - b0:+.0f})")
            row.append(f"{b1:.0f}")
            ratios = []
            for mode in ("capture", "lossless"):
                v = insn.get(("bench", mode, t, p))
                row.append("—" if v is None else f"{v:.0f} ({v - b1:+.0f})")
                if v is not None and c0 is not None and c0 - b0 > 0 and p != "getpid":
                    ratios.append(f"**{v / c0:.3f}**; {(v - b1) / (c0 - b0):.3f}")
                else:
                    ratios.append("—")
            out.append("| " + " | ".join(row + ratios) + " |")
        out.append("")
    if text:
        out.append(
            "Kernel text (`size -B vmlinux`, text column): "
            + "; ".join(f"{k} {v:,} bytes" for k, v in text.items())
            + (
                f"; bench − before: {text['bench'] - text['before']:+,} bytes"
                if "bench" in text and "before" in text
                else ""
            )
            + "."
        )
        out.append("")
    return out


def read_text_sizes(tsv):
    """{kernel: text bytes}"""
    if not tsv.exists():
        return {}
    return {k: int(v) for k, v in (line.split("\t") for line in tsv.read_text().splitlines())}



def ring_label(size):
    """A ring size in bytes as KiB or MiB."""
    size = int(size)
    return f"{size // 1024} KiB" if size < 1 << 20 else f"{size >> 20} MiB"


def loss_table(path):
    """The loss test's table and its lossless paced rates, per consumer.

    A console without consumer= fields comes from the reader-only loss test:
    its rows are the reader's.
    """
    if not path.exists():
        return []
    text = path.read_text(errors="replace")
    consumer = r"(?:consumer=(\S+) )?"
    rows = re.findall(
        r"bench: loss " + consumer + r"size=(\d+) rate=(\d+) calls=(\d+) wall_ns=(\d+) lost=(\d+)"
        r"(?: consumed=(\d+))?",
        text,
    )
    cpus = re.findall(
        r"bench: loss-cpu " + consumer + r"size=(\d+) rate=(\d+) cpu=(\d+) made=(\d+) "
        r"produced=(\d+) consumed=(\d+|-) lost=(\d+)",
        text,
    )
    out = [
        "Loss test: 4 pinned threads; per consumer, recording to the guest's tmpfs: "
        "`reader-count`, `reader-text`, `reader-json` = `reader --follow -w TRACE` with "
        "`-c` (calls counted, none printed), `--format text` or `--format json`, on "
        "capture's per-CPU rings of the ring size; `bpf-tp`/`bpf-raw` = `antinomie-bpf --variant tp|raw --drain live "
        "--out FILE` on one ring buffer shared by the 4 CPUs, 4 x the ring size (the same "
        "bytes). Records made = 2 per call. reader-*: written and lost are the kernel's "
        "counters, consumed the reader's; per CPU written + lost = made and consumed = "
        "written. BPF: made and lost per CPU are the contender's counters, written = made - "
        "lost, consumed its drain's (= the records in its file); made = 2 per call and "
        "consumed + lost = made. All checked in the guest.",
        "",
        "| consumer | ring | pace (calls/s) | calls | calls/s made | records made | written "
        "| consumed | lost | lost % | lost per CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for who, size, rate, calls, wall, lost, consumed in rows:
        who = who or "reader"
        per = [c for c in cpus if (c[0] or "reader") == who and c[1] == size and c[2] == rate]
        made = sum(int(c[4]) for c in per)
        written = sum(int(c[5]) for c in per)
        if not consumed:
            consumed = sum(int(c[6]) for c in per)
        lost_per_cpu = " / ".join(c[7] for c in per)
        achieved = int(calls) * 1e9 / int(wall)
        pct = 100 * int(lost) / made if made else 0
        out.append(
            f"| {who} | {ring_label(size)} | {'unpaced' if rate == '0' else rate} | {calls} | {achieved:.0f} "
            f"| {made} | {written} | {consumed} | {lost} | {pct:.1f} | {lost_per_cpu} |"
        )
    paced = re.findall(
        r"bench: loss-paced " + consumer + r"size=(\d+) lossless=(\d+) lossy=(\d+) unpaced=(\d+)",
        text,
    )
    if paced:
        out.append("")
        out.append("Highest paced rate with nothing lost (bisection, calls/s over 4 threads):")
        out.append("")
    for who, size, lo, hi, unp in paced:
        bpf = "" if (who or "reader").startswith("reader") else f" (one BPF ring buffer of {ring_label(4 * int(size))})"
        beyond = f"{hi} calls/s lost records" if lo != hi else "no loss unpaced"
        out.append(
            f"- {who or 'reader'} at {ring_label(size)} rings{bpf}: **{lo} calls/s** "
            f"({beyond}), next to the unpaced producer rate of {unp} calls/s."
        )
    out.append("")
    return out

def main():
    run = Path(sys.argv[1])
    bench = read_times(run / "time-bench.log")
    off = read_times(run / "time-off.log")
    insn = read_insns(run / "insn.tsv")
    threads = sorted({k[1] for k in bench} | {k[1] for k in off} | {k[2] for k in insn})
    rounds = max((len(v) for v in bench.values()), default=0)
    out = []

    if not bench and not off:
        threads_t = []
    else:
        threads_t = threads
    out.append(
        f"Wall time per call under TCG: median of {rounds} alternating rounds in one boot "
        "(min beside it), ×ratio to capture off in the same boot; the off kernel "
        "is its own boot, its ratio is to capture off too."
    )
    out.append("")
    if not threads_t:
        out = []
    for t in threads_t:
        out.append(f"**{t} thread{'s' if t > 1 else ''}** (one per vCPU)")
        out.append("")
        out.append(
            "| path | off kernel | capture off | capture on | ftrace events | strace "
            "| strace ÷ capture's added (medians) |"
        )
        out.append("|---|---|---|---|---|---|---|")
        for p in PATHS:
            base = ("off", t, p)
            if not bench.get(base) and not off.get(base):
                continue
            offk = off.get(base)
            offk_s = "—"
            if offk:
                offk_s = f"{fmt_ns(statistics.median(offk))} (min {fmt_ns(min(offk))})"
                if bench.get(base):
                    offk_s += f" ×{statistics.median(offk) / statistics.median(bench[base]):.2f}"
            row = [
                PATH_LABEL[p],
                offk_s,
                time_cell(bench, base, None),
                time_cell(bench, ("capture", t, p), base),
                time_cell(bench, ("ftrace", t, p), base),
                time_cell(bench, ("strace", t, p), base),
                strace_ratio(bench, t, p),
            ]
            out.append("| " + " | ".join(row) + " |")
        if bench.get(("rawsys", t, "getpid")):
            out.append(
                "| getpid, ftrace raw_syscalls events | | | | "
                + time_cell(bench, ("rawsys", t, "getpid"), ("off", t, "getpid"))
                + " | | |"
            )
        out.append("")

    if insn:
        out.append(
            "Guest instructions per call (QEMU's insn plugin, all vCPUs: (boot with N calls − "
            "boot with N0 calls) / (N − N0), N0 = N/10, or 0 in runs before 2026-12-01); "
            "+added over capture off on the same kernel."
        )
        out.append("")
        for t in threads:
            if not any(k[2] == t for k in insn):
                continue
            out.append(f"**{t} thread{'s' if t > 1 else ''}**")
            out.append("")
            out.append(
                "| path | off kernel | capture off | capture on | capture on, lossless mode "
                "| ftrace events | strace "
                "| capture's added ÷ ftrace's added (insns; median time) "
                "| strace ÷ capture's added (insns) |"
            )
            out.append("|---|---|---|---|---|---|---|---|---|")
            for p in PATHS:
                if not any(k[2] == t and k[3] == p for k in insn):
                    continue
                b = insn.get(("bench", "off", t, p))
                row = [PATH_LABEL[p]]
                k = insn.get(("off", "off", t, p))
                row.append("—" if k is None else f"{k:.0f}")
                row.append("—" if b is None else f"{b:.0f}")
                added = {}
                for mode in ("capture", "lossless", "ftrace", "strace"):
                    v = insn.get(("bench", mode, t, p))
                    if v is None:
                        row.append("—")
                    elif b is None:
                        row.append(f"{v:.0f}")
                    else:
                        added[mode] = v - b
                        row.append(f"{v:.0f} ({v - b:+.0f})")
                ratio = "—"
                if p != "getpid" and "capture" in added and added.get("ftrace", 0) > 0:
                    ratio = f"**{added['capture'] / added['ftrace']:.2f}**"
                    tb = bench.get(("off", t, p))
                    tc = bench.get(("capture", t, p))
                    tf = bench.get(("ftrace", t, p))
                    if tb and tc and tf:
                        mb = statistics.median(tb)
                        df = statistics.median(tf) - mb
                        if df > 0:
                            ratio += f"; {(statistics.median(tc) - mb) / df:.2f}"
                row.append(ratio)
                strace = "—"
                if "strace" in added and added.get("capture", 0) > 0:
                    strace = f"{(added['strace'] + b) / added['capture']:.0f}×"
                row.append(strace)
                out.append("| " + " | ".join(row) + " |")
            v = insn.get(("bench", "rawsys", t, "getpid"))
            b = insn.get(("bench", "off", t, "getpid"))
            if v is not None:
                extra = f"{v:.0f}" if b is None else f"{v:.0f} ({v - b:+.0f})"
                out.append(f"| getpid, ftrace raw_syscalls events | | | | | {extra} | | | |")
            out.append("")

    out += bpf_table(insn, bench, threads)
    out += before_after_table(insn, read_text_sizes(run / "text.tsv"), threads)

    out += loss_table(run / "loss.log")
    try:
        print("\n".join(out))
    except BrokenPipeError:
        # A closed pipe (| head) is not an error.
        sys.stderr.close()


if __name__ == "__main__":
    main()
