# SPDX-License-Identifier: GPL-2.0-only
"""Where a changed result came from: the function that produced it.

The reruns that confirm a difference run with a kprobe on the entry and
one on the return of every function of regress_coverage.DECISION_FUNCTIONS
that the kernel kept out of line, but for those NOT_PROBED names
(qemu/scenarios/corpus, "attribution"):
each run's attribution.trace holds, per thread, every call's nesting of
those functions and what each returned. A call is matched to its record
in the capture by thread and order: the n-th call of a thread in the
capture is the n-th __perf_event_open() of that thread in the trace (both
see every call: the capture is lossless, and a trace buffer that overran
says so).

The producer of an error: from __perf_event_open() down, the last callee
that returned the same value, until a function none of whose callees did
(an error pointer is its errno as a signed number, so perf_init_event()'s
ERR_PTR(-ENOENT) is -2 too). "changed: -EACCES from perf_allow_kernel()"
then says which decision gave it, on each kernel. A new fd is
__perf_event_open()'s. A function the kernel inlined has no probe: its
result shows as its caller's.
"""

import json
import re
import subprocess
from pathlib import Path

import regress_coverage

ROOT = "__perf_event_open"
# Functions of DECISION_FUNCTIONS that get no probe, and why.
NOT_PROBED = {
    # It returns a size, never a result, and perf_event_validate_size()
    # calls it for every member of a group each time one is added: the
    # decisions workload's group at the read-size limit alone made 300 000
    # calls, which overran the trace buffer and left every call of the
    # run unattributed.
    "__perf_event_read_size": "returns a size, and runs per group member for every member added",
}


def probed_functions() -> list[str]:
    """What the confirming reruns probe: the decision functions that can
    produce a result."""
    return [fn for names in regress_coverage.DECISION_FUNCTIONS.values() for fn in names if fn not in NOT_PROBED]
# How many differing calls per run are attributed (the report's first
# differing calls are a few; report.json has these).
ATTRIBUTED_PER_RUN = 20
# "  comm-123  [001] d.... 12.345678: e_NAME: (...)" or "... r_NAME: (...) ret=-22"
TRACE_LINE = re.compile(r"^\s*.*?-(\d+)\s+\[\d+\]\s+\S+\s+[\d.]+: ([er])_(\w+): .*?(?: ret=(-?\d+))?\s*$")


class Call:
    def __init__(self, fn: str):
        self.fn = fn
        self.ret: int | None = None
        self.children: list["Call"] = []


def calls_per_thread(trace: Path) -> tuple[dict[int, list[Call]], dict[int, str]]:
    """Every __perf_event_open() in the trace, per thread in order, with
    its nested probed calls; and per thread what could not be paired (an
    entry without its return, a return without its entry), which makes
    every call of that thread unknown: the n-th call may not be the n-th
    any more."""
    threads: dict[int, list[Call]] = {}
    stacks: dict[int, list[Call]] = {}
    problems: dict[int, str] = {}
    for line in trace.read_text(errors="replace").splitlines():
        if line.startswith("#"):
            continue
        m = TRACE_LINE.match(line)
        if not m:
            continue
        tid, kind, fn, ret = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        stack = stacks.setdefault(tid, [])
        if kind == "e":
            call = Call(fn)
            if fn == ROOT and stack:
                # A syscall does not nest in another: the last call's
                # returns were lost.
                problems.setdefault(tid, f"{stack[-1].fn}() has no return")
                stack.clear()
            if stack:
                stack[-1].children.append(call)
            elif fn == ROOT:
                threads.setdefault(tid, []).append(call)
            else:
                continue  # outside perf_event_open (a probed function's other callers)
            stack.append(call)
            continue
        if not stack:
            continue
        # Pop to the function that returned; anything above it lost its
        # return (a missed kretprobe).
        names = [c.fn for c in stack]
        if fn not in names:
            problems.setdefault(tid, f"{fn}() returned without its entry")
            continue
        while stack[-1].fn != fn:
            problems.setdefault(tid, f"{stack.pop().fn}() has no return")
        stack.pop().ret = as_result(int(ret)) if ret is not None else None
    return threads, problems


def as_result(value: int) -> int:
    """A return register as the function's result. The probe reads all
    of %rax as a signed 64-bit number: an error pointer is then its errno,
    but an int result (__perf_event_open's, perf_copy_attr's) comes with
    the upper half zero, so a negative int reads as 2^32 - errno. Such a
    value is taken as the negative int it is."""
    return value - (1 << 32) if (1 << 31) <= value < (1 << 32) else value


def producer(call: Call) -> list[str]:
    """The path from __perf_event_open() to the function that produced its
    result (see the module's doc)."""
    path = [call.fn]
    # A new fd is __perf_event_open()'s own; a callee returning the same
    # number (a size, a count) did not produce it.
    if call.ret is None or call.ret >= 0:
        return path
    while True:
        same = [c for c in call.children if c.ret is not None and c.ret == call.ret]
        if not same:
            return path
        call = same[-1]
        path.append(call.fn)


def show_calls(reader: str, trace: Path) -> dict[int, list[int]]:
    """Per thread, the entry times of its captured calls, in order."""
    out = subprocess.run(
        [reader, "show", "--format", "json", "--no-summary", str(trace)], capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(f"reader show {trace} failed: {out.stderr.strip()[:300]}")
    per_tid: dict[int, list[int]] = {}
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("event") == "call":
            per_tid.setdefault(rec["tid"], []).append(rec["time_ns"])
    for times in per_tid.values():
        times.sort()
    return per_tid


def side_attribution(
    record: dict | None, captured: dict[int, list[int]], traced: dict[int, list[Call]], problems: dict[int, str]
) -> dict | None:
    """One side of a differing call: its result and the path that
    produced it, or why it is not known."""
    if record is None:
        return None
    tid = record["tid"]
    if tid in problems:
        return {"ret": record.get("ret"), "unknown": f"the kprobe trace of its thread is not whole: {problems[tid]}"}
    times = captured.get(tid, [])
    if record["time_ns"] not in times:
        return {"ret": record.get("ret"), "unknown": "the call is not in the capture's trace"}
    n = times.index(record["time_ns"])
    calls = traced.get(tid, [])
    if n >= len(calls):
        return {"ret": record.get("ret"), "unknown": f"the kprobe trace has {len(calls)} calls of this thread, not {n + 1}"}
    call = calls[n]
    if call.ret != record.get("ret"):
        return {"ret": record.get("ret"), "unknown": f"the kprobe trace's call returned {call.ret}, the capture's {record.get('ret')}"}
    path = producer(call)
    return {"ret": call.ret, "producer": path[-1], "path": path}


def attribute_run(reader: str, a: Path, b: Path, diff_json: Path) -> dict:
    """The attribution of one rerun's differing calls (a, b: its results
    on each kernel)."""
    sides = {}
    for label, d in (("baseline", a), ("changed", b)):
        trace = d / "attribution.trace"
        if not trace.exists():
            return {"unknown": f"no attribution trace on the {label} kernel"}
        lost = (d / "attribution.lost").read_text().strip() if (d / "attribution.lost").exists() else "?"
        if lost != "0":
            return {"unknown": f"the {label} kernel's kprobe trace lost events ({lost}: overruns and missed probes)"}
        traced, problems = calls_per_thread(trace)
        sides[label] = (show_calls(reader, d / "trace.antinomie"), traced, problems)
    calls = []
    for line in diff_json.read_text().splitlines():
        ev = json.loads(line)
        if ev.get("event") != "difference":
            continue
        calls.append(
            {
                "call": ev["call"],
                "role": ev.get("role"),
                "baseline": side_attribution(ev.get("a"), *sides["baseline"]),
                "changed": side_attribution(ev.get("b"), *sides["changed"]),
            }
        )
        if len(calls) == ATTRIBUTED_PER_RUN:
            break
    return {
        "calls": calls,
        "trace_problems": [f"{k} tid {t}: {why}" for k in sides for t, why in sides[k][2].items()][:10],
    }


def attribution_report(reader: str, a: Path, b: Path, diffs: Path, runs: list[tuple[str, str]]) -> dict:
    """attribution.json: per differing run of the reruns, its first
    differing calls' producers on each kernel."""
    return {
        f"{name}/{context}": attribute_run(reader, a / name / context, b / name / context, diffs / name / context / "diff.json")
        for name, context in runs
        if (diffs / name / context / "diff.json").exists()
    }


def errno_text(ret: int | None) -> str:
    return "?" if ret is None else str(ret)


def side_text(s: dict | None) -> str:
    if s is None:
        return "no such call"
    if "unknown" in s:
        return f"{errno_text(s.get('ret'))} (from: unknown, {s['unknown']})"
    return f"{errno_text(s['ret'])} from {s['producer']}()"


def summary_lines(run: dict) -> list[str]:
    """What summary.txt says of one differing run's attribution."""
    if "unknown" in run:
        return [f"where the results came from: not known ({run['unknown']})"]
    lines = ["where the first differing calls' results came from (the rerun's calls; baseline | changed):"]
    for c in run["calls"][:5]:
        lines.append(f"  {side_text(c['baseline'])} | {side_text(c['changed'])}")
    return lines
