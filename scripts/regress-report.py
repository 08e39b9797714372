#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare and report for scripts/regress.sh.

  compare --reader READER --a DIR --b DIR --runs FILE --out DIR
      For every run (a "NAME CONTEXT" line of FILE) of the corpus results
      DIR/NAME/CONTEXT of the baseline (--a) and the changed kernel (--b):
      `reader diff` of the two captures (text and JSON, kept in
      --out/NAME/CONTEXT/), and the program's own verdicts (exit status
      and its stdout lines that start with "verdict: "). Writes
      --out/compare.json: per run, "equal", "differ" or "error" (could not
      test: a context that was not set up, a reader that failed,
      a capture that lost records), with the counts.
  coverage --notes-a DIR --notes-b DIR --a DIR --b DIR --runs FILE
           [--changed-files FILE] --out FILE
      What the runs reached of perf_event_open's decisions on each kernel
      (regress_coverage.py): the kernels' gcov notes and sources as built
      (--notes-a, --notes-b: a build's coverage/, or "-" for a kernel
      without gcov) and each run's counters (DIR/NAME/CONTEXT/gcov);
      --changed-files lists the files the change touches, one a line.
      Writes --out (coverage.json).
  functions
      The functions that decide perf_event_open's result, one a line
      (regress_coverage.DECISION_FUNCTIONS, but for those
      regress_attribution.NOT_PROBED names): what the confirming reruns
      probe (the corpus scenario's $spec/attribute).
  attribute --reader READER --a DIR --b DIR --diffs DIR --runs FILE --out FILE
      Where each differing call's result came from on each kernel
      (regress_attribution.py): the reruns' results (--a, --b), their
      kprobe traces and reader diff's JSON (--diffs/NAME/CONTEXT/diff.json)
      of the runs of --runs. Writes --out (attribution.json).
  splat-run --console LOG --reports FILE [--title]
      The run ("NAME CONTEXT") the corpus scenario was in when the kernel
      of the console LOG first reported a failure of its own (--reports:
      the report lines of LOG, as regress.sh's kernel_reports gives them,
      "N:LINE"); nothing when that was outside every run. --title: the
      report's title instead.
  splat --runs FILE --console LOG --reports FILE --rerun-console LOG
        --rerun-reports FILE --baseline-runs DIR --rerun-baseline-runs DIR
        --out FILE
      The changed kernel reported a failure of its own in a boot in which
      the baseline ran every run of --runs; a second boot of both kernels
      ran the run it was in alone (--rerun-*; an empty --rerun-reports
      when the changed kernel reported nothing there; the baseline's
      results of both boots, --baseline-runs and --rerun-baseline-runs).
      Writes --out, a compare.json: that run is "splat" when the second
      boot failed the same way (the same title: the kind of report and
      where) in the same run, the baseline ran it to the end both times,
      and neither report blames the host; else "error" (could not test); every other run "error", not
      compared, as the changed kernel's boot handed back no results.
  report --first FILE [--rerun FILE] [--coverage FILE] [--attribution FILE]
         --meta FILE --out DIR
      The report of a regress.sh run: a difference of --first counts only
      when the rerun (--rerun, the differing runs again on both kernels)
      differs too; otherwise it is dropped as not reproducible. Writes
      summary.txt, report.json, junit.xml, report.ktap (KTAP version 1)
      and kcidb.json (KCIDB I/O data) to --out and exits 0 (no behaviour
      change), 1 (changed), 2 (no behaviour change, but the corpus
      executed none of the changed lines: not reached) or 125 (could not
      test).
"""

import argparse
import difflib
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import regress_attribution
import regress_coverage

# The outcomes that are a change: a confirmed difference, and a changed
# kernel that reported a failure of its own in a run, twice, which the
# baseline ran to the end.
CHANGED_OUTCOMES = ("differ", "splat")
# How many decoded differing calls the summary shows per run.
FIRST_DIFFERENCES = 5
# reader diff's kinds that say only that the two runs' calls had different
# arguments (see compare_run).
INPUT_ONLY_KINDS = {"input"}
# How many of the program's changed verdict lines a report shows per run.
VERDICT_CHANGES_SHOWN = 20
# How many lines of a kernel's console, from its first report of a
# failure on, a report shows (an RCU stall's report and its panic).
KERNEL_REPORT_LINES = 40


def side_problem(d: Path) -> str | None:
    """Why one kernel's run cannot be compared, or None."""
    for f in ("status", "stdout", "stderr", "trace.antinomie", "reader.stderr", "reader.status"):
        if not (d / f).exists():
            return f"no {f} in the results"
    # A run the timeout stopped shows what it did up to then: not the
    # program's result, whatever its status and calls say.
    if (d / "timed-out").exists():
        limit = (d / "timed-out").read_text().strip()
        return f"stopped by the {limit} s timeout (regress.sh --timeout), so it did not finish"
    # antinomie-context, which starts every run, prints its "context:
    # NAME ..." line first, and only once the credentials are what the
    # context claims; without it the command never ran under that context
    # (the run's directory is named after its context).
    stderr = (d / "stderr").read_text(errors="replace")
    if not stderr.startswith(f"context: {d.name} "):
        last = stderr.strip().splitlines()[-1:] or ["no reason given"]
        return "the context was not set up: " + last[0]
    summary = capture_summary(d)
    if summary is None:
        reader_status = (d / "reader.status").read_text().strip()
        return f"the capture failed: the reader exited {reader_status} with no summary"
    records = summary["records"]
    if not records["lost_exact"]:
        return f"the capture lost at least {records['lost']} records (final counters unknown)"
    if records["lost"] != 0:
        return f"the capture lost {records['lost']} of {records['produced']} records"
    if not summary["capture_whole"]:
        return "the capture found corrupt records"
    return None


def capture_summary(d: Path) -> dict | None:
    """The JSON summary of the guest's `reader -- COMMAND` (the last line
    of reader.stderr that is a JSON object; keys: reader/README.md)."""
    objects = [
        l for l in (d / "reader.stderr").read_text(errors="replace").splitlines() if l.startswith("{")
    ]
    return json.loads(objects[-1]) if objects else None


def verdicts(d: Path) -> list[str]:
    """The program's result: its exit status, then its verdict lines."""
    lines = (d / "stdout").read_text(errors="replace").splitlines()
    return ["status " + (d / "status").read_text().strip()] + [
        l for l in lines if l.startswith("verdict: ")
    ]


def compare_run(reader: str, a: Path, b: Path, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    for side, d in (("baseline", a), ("changed", b)):
        why = side_problem(d)
        if why:
            return {"outcome": "error", "reason": f"{side} kernel: {why}"}
    ta, tb = str(a / "trace.antinomie"), str(b / "trace.antinomie")
    with open(out / "diff.txt", "w") as f:
        text_rc = subprocess.run([reader, "diff", ta, tb], stdout=f, stderr=subprocess.STDOUT).returncode
    with open(out / "diff.json", "w") as f:
        json_rc = subprocess.run(
            [reader, "diff", "--format", "json", ta, tb], stdout=f, stderr=subprocess.PIPE
        ).returncode
    if text_rc != json_rc or text_rc not in (0, 1):
        return {"outcome": "error", "reason": f"reader diff exited {text_rc} (see {out / 'diff.txt'})"}
    summary = json.loads((out / "diff.json").read_text().splitlines()[-1])
    if summary.get("event") != "summary":
        return {"outcome": "error", "reason": f"reader diff wrote no summary (see {out / 'diff.json'})"}
    va, vb = verdicts(a), verdicts(b)
    verdict_changes = [
        l for l in difflib.unified_diff(va, vb, "baseline", "changed", lineterm="", n=0)
        if l[:1] in "+-" and not l.startswith(("+++", "---"))
    ]
    # Each differing call's line (and B's call under it when the inputs
    # differ) shows the call; the summary after them does not.
    first = [
        l for l in (out / "diff.txt").read_text(errors="replace").splitlines()
        if "perf_event_open(" in l
    ][:FIRST_DIFFERENCES]
    differences = {k: v for k, v in summary["differences"].items() if v}
    # A call whose arguments alone differ (kind "input") is the program
    # asking something else, e.g. a child's pid, which differs between
    # boots: not a difference in what perf_event_open did. Any other kind
    # on the same call (a result, a size written back) still counts.
    behaviour = {k: v for k, v in differences.items() if k not in INPUT_ONLY_KINDS}
    return {
        "outcome": "differ" if behaviour or verdict_changes else "equal",
        "reason": None,
        "calls": summary["calls"],
        "differences": differences,
        "verdicts": {"baseline": va, "changed": vb},
        "verdict_changes": verdict_changes,
        "first_differences": first,
    }


def cmd_compare(args) -> int:
    results = []
    for line in Path(args.runs).read_text().splitlines():
        if not line.strip():
            continue
        name, context = line.split()
        r = compare_run(
            args.reader,
            Path(args.a) / name / context,
            Path(args.b) / name / context,
            Path(args.out) / name / context,
        )
        results.append({"workload": name, "context": context, **r})
    Path(args.out, "compare.json").write_text(json.dumps(results, indent=1) + "\n")
    return 0


# The corpus scenario's markers of each run, which it writes to the
# kernel's log (/dev/kmsg), so that they are in order with the kernel's
# own reports on the console; searched for, not anchored, as a program's
# line on the tty can come out around one.
RUN_MARKER = re.compile(r"corpus-run: \[[0-9]+/[0-9]+\] (\S+) as (\S+): (running|ended)\b")
# A console line's printk stamp.
STAMP = re.compile(rb"^\[ *[0-9]+\.[0-9]+\] ")
# The first line of a report, and the kind of failure it names, as
# syzbot titles its reports: a kind, and where (the place the first line
# names, else the function of the report's RIP), without the addresses,
# CPUs, pids and times that differ between boots. A stall is one kind,
# whichever CPU or watchdog noticed it. Both boots run the same kernel
# image, so a place's line number is the same in both.
REPORT_KINDS = [
    (re.compile(r"^(rcu: INFO: .*stall|watchdog: BUG: soft lockup|watchdog: Watchdog detected hard LOCKUP)"), "stall"),
    (re.compile(r"^INFO: task .* blocked for more than"), "task hung"),
    (re.compile(r"^WARNING: "), "WARNING"),
    (re.compile(r"^Oops"), "Oops"),
    (re.compile(r"^(BUG: |kernel BUG at|UBSAN: |general protection fault)"), None),
]
# Where a first line says the failure is: "in FUNCTION+0x1/0x2" (KASAN),
# "in FILE:LINE" (UBSAN), "at FILE:LINE" (WARNING, kernel BUG).
REPORT_PLACE = re.compile(r" (?:in|at) ([A-Za-z0-9_./-]+(?::[0-9]+)*)")
# What a stall report says when the stall is the host's, not the
# kernel's: the grace-period kthread or its timer did not get to run (a
# TCG guest on a loaded host).
HOST_STARVATION = ("kthread starved for", "timer wakeup didn't happen")
RIP = re.compile(r"^RIP: [0-9a-f]+:([A-Za-z0-9_.]+)\+0x")
# A compiler's suffixes on a function's name.
CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold)(\.[0-9]+)?)+$")


def console_lines(console: Path) -> list[str]:
    """The console's lines, numbered as sed and awk number them (by LF
    alone), without their CR and printk stamps."""
    return [
        STAMP.sub(b"", l.rstrip(b"\r")).decode(errors="replace")
        for l in console.read_bytes().split(b"\n")
    ]


def report_title(lines: list[str]) -> str | None:
    """The title of the report whose first lines are `lines`, or None
    when no line names a kind of failure (a bare call trace)."""
    for i, l in enumerate(lines):
        kind = next(((k or l) for pattern, k in REPORT_KINDS if pattern.match(l)), None)
        if kind is None:
            continue
        place = REPORT_PLACE.search(l) if kind == l or kind == "WARNING" else None
        # The kind without what follows its name (an address, a place, a
        # CPU, a time), hex words and numbers made N.
        if kind == l:
            kind = re.split(r",| at | in | for | - |!| \[|: (?=(?:0x)?[0-9a-f]*[0-9][0-9a-f]*\b)", kind, maxsplit=1)[0]
        kind = re.sub(r"\b(0x)?[0-9a-f]*[0-9][0-9a-f]*\b", "N", kind).strip()
        if place:
            return f"{kind} in {CLONE_SUFFIX.sub('', place[1])}"
        # The RIP of this report, not of one after it (an Oops line is
        # the BUG's own).
        for later in lines[i + 1 :]:
            if not later.startswith("Oops") and any(pattern.match(later) for pattern, _ in REPORT_KINDS):
                break
            m = RIP.match(later)
            if m:
                return f"{kind} in {CLONE_SUFFIX.sub('', m[1])}"
        return kind
    return None


class KernelReport:
    """A kernel's first report of a failure in a console: its title, the
    run the corpus scenario was in (and the last one it had started),
    whether it blames the host, and the console from there on
    (KERNEL_REPORT_LINES lines)."""

    def __init__(self, console: Path, reports: Path):
        lines = console_lines(console)
        numbers = [
            int(m[1]) for m in (re.match(r"([0-9]+):", l) for l in reports.read_text(errors="replace").split("\n")) if m
        ]
        if not numbers:
            raise SystemExit(f"{reports}: no report of a failure")
        first = numbers[0]
        self.excerpt = lines[first - 1 : first - 1 + KERNEL_REPORT_LINES]
        self.run = self.last_run = None
        for l in lines[: first - 1]:
            m = RUN_MARKER.search(l)
            if m:
                self.last_run = (m[1], m[2])
                self.run = self.last_run if m[3] == "running" else None
        # The whole report, to its panic: another CPU's backtraces can
        # come before what a stall says of its kthread.
        end = next((i for i in range(first - 1, len(lines)) if lines[i].startswith("Kernel panic")), len(lines))
        self.host_starved = any(s in l for l in lines[first - 1 : end + 1] for s in HOST_STARVATION)
        self.title = report_title(self.excerpt)

    def named(self) -> str:
        return self.title or f"an unnamed report: {self.excerpt[0]}"


def cmd_splat_run(args) -> int:
    k = KernelReport(Path(args.console), Path(args.reports))
    if args.title:
        print(k.named())
    elif k.run:
        print(*k.run)
    return 0


def cmd_splat(args) -> int:
    first = KernelReport(Path(args.console), Path(args.reports))
    second = None
    rerun_reports = Path(args.rerun_reports)
    if rerun_reports.exists() and rerun_reports.read_text(errors="replace").strip():
        second = KernelReport(Path(args.rerun_console), Path(args.rerun_reports))
    run = first.run
    if run is None:
        where = "outside every run"
        verdict = {"outcome": "error", "reason": f"the changed kernel failed {where} ({first.named()}): could not test"}
    else:
        where = f"running {run[0]} as {run[1]}"
        failed = f"the changed kernel failed {where} ({first.named()})"
        # The second boot ran that run alone: what it reported after the
        # run ended (an RCU callback of the run's) is the run's too.
        same_run = second is not None and run in (second.run, second.last_run)
        baseline_unfinished = [
            d for d in (Path(args.baseline_runs), Path(args.rerun_baseline_runs))
            if not (d / run[0] / run[1] / "status").exists() or (d / run[0] / run[1] / "timed-out").exists()
        ]
        if second is None:
            verdict = {"outcome": "error", "reason": f"{failed}, but not when it ran alone: could not test"}
        elif first.title is None or second.title != first.title or not same_run:
            again = second.named() + ("" if same_run else ", outside the run")
            verdict = {"outcome": "error", "reason": f"{failed}, and otherwise when it ran alone ({again}): could not test"}
        elif baseline_unfinished:
            verdict = {
                "outcome": "error",
                "reason": f"{failed}, twice, but the baseline kernel did not run it to the end (runs/{baseline_unfinished[0].name}): could not test",
            }
        elif first.host_starved or second.host_starved:
            verdict = {
                "outcome": "error",
                "reason": f"{failed}, twice, but the kernel blames a starved kthread or timer: the host's load, could not test",
            }
        else:
            verdict = {
                "outcome": "splat",
                "reason": f"{failed}, and the same when it ran alone; the baseline kernel ran it to the end both times",
            }
        verdict["kernel_report"] = first.excerpt
    results = []
    for line in Path(args.runs).read_text().splitlines():
        if not line.strip():
            continue
        name, context = line.split()
        if (name, context) == run:
            results.append({"workload": name, "context": context, **verdict})
        elif run is None:
            # The console once, on the first run.
            shown = {"kernel_report": first.excerpt} if not results else {}
            results.append({"workload": name, "context": context, **verdict, **shown})
        else:
            results.append({
                "workload": name,
                "context": context,
                "outcome": "error",
                "reason": f"not compared: the changed kernel failed {where}, and its boot handed back no results",
            })
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


def differing_calls(r: dict) -> int:
    return r.get("calls", {}).get("differing", 0)


def kinds_text(r: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in r.get("differences", {}).items()) or "-"


def run_details(r: dict) -> list[str]:
    """What a CI system shows of a run beside its result: why it could
    not test, or its differing calls and changed verdict lines."""
    if r["outcome"] == "error":
        return [f"could not test: {r['reason']}"]
    if r["outcome"] == "splat":
        return [r["reason"], "the changed kernel's console:"] + ["  " + l for l in r["kernel_report"]]
    if r["outcome"] not in ("differ", "not-reproducible"):
        return []
    head = f"{differing_calls(r)} of {r['calls']['a']} calls differ ({kinds_text(r)})"
    if r["outcome"] == "not-reproducible":
        head = f"not reproducible: the first run found {head}, the rerun on both kernels none"
    elif "confirmed_by_rerun" in r:
        head += ", confirmed by the rerun on both kernels"
    lines = [head, "first differing calls (reader diff, baseline | changed):"]
    lines += ["  " + l for l in r["first_differences"]]
    if "attribution" in r:
        lines += regress_attribution.summary_lines(r["attribution"])
    if r["verdict_changes"]:
        lines.append("the program's own verdicts (- baseline, + changed):")
        lines += ["  " + l for l in r["verdict_changes"][:VERDICT_CHANGES_SHOWN]]
    return lines


# Characters XML 1.0 does not allow, which a kernel's console or a
# program's output can hold.
XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text: str) -> str:
    return escape(XML_FORBIDDEN.sub("?", text))


def xml_attr(text: str) -> str:
    return quoteattr(XML_FORBIDDEN.sub("?", text))


def write_ktap(path: Path, headline: str, meta: dict, runs: list[dict]) -> None:
    """report.ktap: KTAP version 1 (the kernel's
    Documentation/dev-tools/ktap.rst), the form kselftest and KUnit results
    take, for kernel CI systems that read those.

    One flat plan, one test per workload x context, named WORKLOAD.CONTEXT
    (kunit_parser's way of naming a nested test; regress.sh allows only
    letters, digits, ".", "_" and "-" in a workload's name, so no name
    holds the "#" or newline a KTAP description may not). Nesting the
    contexts under their workload would be KTAP too, but ktap.rst warns
    that a TAP consumer may lose nested results, and LAVA's kselftest
    parser reads nesting only from "# "-prefixed lines: either would keep
    the workload's result and lose which context changed.

    Outcomes: equal is "ok", a confirmed difference or a splat "not ok",
    each with its details (a splat's: the kernel's report) as diagnostic
    lines just before the result line, where
    ktap.rst puts a test's diagnostics. Not reproducible is "ok": the
    report counts it as no difference, and no directive says that (SKIP
    would say it did not run, XFAIL and TODO that a failure is expected);
    the first run's differing calls stay in the diagnostics. Could not
    test is "ok ... # SKIP": the comparison said nothing of the kernel, as
    exit 125 says to git bisect. kunit_parser reads SKIP as skipped after
    "ok" or "not ok" alike, but LAVA's kselftest parser counts every "not
    ok" as a failure, so "not ok # SKIP" or ktap.rst's "not ok # ERROR"
    would show a run that could not test as a regression. The reason goes
    on a diagnostic line, not after SKIP: that parser makes what follows
    SKIP part of the test's name, and a name that changes with the reason
    would split the test's history on a dashboard."""
    lines = [
        "KTAP version 1",
        f"# {headline}",
        f"# baseline: {meta['baseline']['kernel']}",
        f"# changed: {meta['changed']['kernel']}",
        f"# corpus: {', '.join(meta['corpus'])}; seed {meta['seed']}",
        f"1..{len(runs)}",
    ]
    for n, r in enumerate(runs, 1):
        name = f"{r['workload']}.{r['context']}"
        lines += [f"# {name}: {l}" if i == 0 else f"# {l}" for i, l in enumerate(run_details(r))]
        if r["outcome"] in CHANGED_OUTCOMES:
            lines.append(f"not ok {n} {name}")
        elif r["outcome"] == "error":
            lines.append(f"ok {n} {name} # SKIP")
        else:
            lines.append(f"ok {n} {name}")
    path.write_text("\n".join(lines) + "\n")


# KCIDB I/O data: the schema version written, that of kcidb-io's newest
# release (141: schema 5.3), and the name of this CI system in every id.
KCIDB_VERSION = {"major": 5, "minor": 3}
KCIDB_ORIGIN = "antinomie"
# A run's outcome as a KCIDB test status. Could not test is ERROR, "the
# test didn't complete ..., and the status of the tested code is
# unknown": KCIDB keeps it apart from FAIL and from SKIP (a test that
# does not apply, which no run of the corpus is), where KTAP has only
# SKIP for it. Not reproducible passes, as in the report.
KCIDB_STATUS = {"equal": "PASS", "not-reproducible": "PASS", "differ": "FAIL", "splat": "FAIL", "error": "ERROR"}
# The longest log_excerpt the schema allows.
KCIDB_EXCERPT_MAX = 16384


def write_kcidb(path: Path, run_id: str, meta: dict, runs: list[dict]) -> None:
    """kcidb.json: the report as KCIDB I/O data, for KernelCI's common
    database. Each kernel is a checkout (its sources: the pin, the series
    and the change) and a build of it; each workload x context a test of
    the changed kernel's build, as its result is what the change did.
    The seed and the corpus are the tests' inputs, the same on both
    kernels, so they are in each test's misc.

    KCIDB ids are "ORIGIN:ID", ID unique among the origin's objects of a
    type; run_id, a hash of the report's inputs, starts each. The same
    results written again give the same ids, so a second submission of a
    report updates its objects instead of doubling them; two runs that
    differ in their kernels' descriptions or images, corpus, seed, or any
    run's call counts, kinds of difference, verdicts or first differing
    calls get different ids. Two runs alike in all of these are one run
    to KCIDB: kernels described alike, with the same results."""
    def oid(*parts: str) -> str:
        return f"{KCIDB_ORIGIN}:{run_id}/" + "/".join(parts)

    data = {"version": KCIDB_VERSION, "checkouts": [], "builds": [], "tests": []}
    for side in ("baseline", "changed"):
        kernel = meta[side]
        # A report exists only once both kernels' sources combined, built
        # and ran the corpus.
        data["checkouts"].append(
            {"id": oid(side), "origin": KCIDB_ORIGIN, "comment": kernel["kernel"], "valid": True}
        )
        build = {
            "id": oid(side),
            "origin": KCIDB_ORIGIN,
            "checkout_id": oid(side),
            "comment": kernel["kernel"],
            "status": "PASS",
        }
        # --compare reports on results of kernels built elsewhere.
        if kernel["bzImage"]:
            build["misc"] = {"bzImage": kernel["bzImage"]}
        data["builds"].append(build)
    for r in runs:
        test = {
            "id": oid(r["workload"], r["context"]),
            "origin": KCIDB_ORIGIN,
            "build_id": oid("changed"),
            # A dot separates the levels of a KCIDB test path, and "." is
            # allowed in a workload's name.
            "path": "regress." + re.sub(r"[^A-Za-z0-9_-]", "_", r["workload"]) + "." + r["context"],
            "status": KCIDB_STATUS[r["outcome"]],
            "comment": f"{r['workload']} as {r['context']}: {r['outcome']}",
            "misc": {
                "outcome": r["outcome"],
                **{
                    k: r[k]
                    for k in ("reason", "calls", "differences", "confirmed_by_rerun", "shown")
                    if r.get(k) is not None
                },
                "seed": meta["seed"],
                "corpus": meta["corpus"],
            },
        }
        details = "\n".join(run_details(r))
        if details:
            test["log_excerpt"] = details[:KCIDB_EXCERPT_MAX]
        data["tests"].append(test)
    path.write_text(json.dumps(data, indent=1) + "\n")


def cmd_report(args) -> int:
    meta = json.loads(Path(args.meta).read_text())
    runs = json.loads(Path(args.first).read_text())
    rerun = {}
    if args.rerun:
        rerun = {(r["workload"], r["context"]): r for r in json.loads(Path(args.rerun).read_text())}
    dropped = 0
    for r in runs:
        if r["outcome"] != "differ":
            continue
        again = rerun.get((r["workload"], r["context"]))
        if again is None:
            r["outcome"], r["reason"] = "error", "the difference was not rerun to confirm it"
        elif again["outcome"] == "differ":
            r["confirmed_by_rerun"] = {
                "differing": differing_calls(again),
                "verdict_changes": len(again["verdict_changes"]),
            }
            # Both comparisons differ. Where they disagree on how many
            # calls, the surplus comes from the comparison, not the
            # kernels: reader diff pairs threads by their place in the
            # process's tid order, which a thread created elsewhere in
            # between can shift. The report shows the one with fewer.
            if differing_calls(again) < differing_calls(r):
                r.update({k: again[k] for k in ("calls", "differences", "verdicts", "verdict_changes", "first_differences")})
                r["shown"] = "rerun"
        elif again["outcome"] == "equal":
            r["outcome"], r["reason"] = "not-reproducible", "the rerun on both kernels found no difference"
            dropped += 1
        else:
            r["outcome"], r["reason"] = "error", "the rerun could not test: " + again["reason"]
        if r["outcome"] == "differ":
            r.setdefault("shown", "first")
    changed = sum(r["outcome"] in CHANGED_OUTCOMES for r in runs)
    splats = sum(r["outcome"] == "splat" for r in runs)
    errors = sum(r["outcome"] == "error" for r in runs)
    coverage = json.loads(Path(args.coverage).read_text()) if args.coverage else None
    attribution = json.loads(Path(args.attribution).read_text()) if args.attribution else {}
    for r in runs:
        if r["outcome"] == "differ" and f"{r['workload']}/{r['context']}" in attribution:
            r["attribution"] = attribution[f"{r['workload']}/{r['context']}"]
    if changed:
        result, code = "changed", 1
    elif errors or not runs:
        result, code = "could-not-test", 125
    elif regress_coverage.not_reached(coverage):
        result, code = "not-reached", 2
    else:
        result, code = "equal", 0
    out = Path(args.out)
    report = {
        "result": result,
        "exit_status": code,
        **meta,
        "runs_total": len(runs),
        "runs_differing": changed,
        "runs_could_not_test": errors,
        "differences_dropped_not_reproducible": dropped,
        "runs": runs,
        "coverage": coverage,
    }
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")

    headline = (
        f"regress: {result.upper()} (exit {code}): {changed} of {len(runs)} workload x context runs "
        f"differ, {errors} could not test, {dropped} difference(s) dropped as not reproducible"
    )
    if result == "not-reached":
        headline += "; the corpus executed none of the change's lines"
    if splats:
        headline += f"; in {splats} of them the changed kernel reported a failure of its own"
    change = regress_coverage.change_lines(coverage) if coverage else []
    lines = [
        headline,
        f"baseline: {meta['baseline']['kernel']}",
        f"changed:  {meta['changed']['kernel']}",
        f"corpus: {', '.join(meta['corpus'])}; seed {meta['seed']}; capture lossless",
        *change,
        "",
        f"{'workload':<20} {'context':<9} {'outcome':<16} {'calls a/b':>13} {'differing':>9}  kinds",
    ]
    for r in runs:
        calls = r.get("calls")
        ab = f"{calls['a']}/{calls['b']}" if calls else "-"
        lines.append(
            f"{r['workload']:<20} {r['context']:<9} {r['outcome']:<16} {ab:>13} "
            f"{differing_calls(r):>9}  {kinds_text(r)}"
        )
    for r in runs:
        if r["outcome"] == "equal":
            continue
        lines += ["", f"== {r['workload']} as {r['context']}: {r['outcome']}"]
        if r.get("reason"):
            lines.append(f"   {r['reason']}")
        if r["outcome"] in ("differ", "not-reproducible"):
            lines.append(
                f"   {differing_calls(r)} of {r['calls']['a']} calls differ ({kinds_text(r)}); "
                f"first differing calls (reader diff, baseline | changed):"
            )
            lines += ["   " + l for l in r["first_differences"]]
            if r["verdict_changes"]:
                lines.append("   the program's own verdicts (- baseline, + changed):")
                lines += ["   " + l for l in r["verdict_changes"][:VERDICT_CHANGES_SHOWN]]
            shown = "diffs-rerun" if r.get("shown") == "rerun" else "diffs"
            if "confirmed_by_rerun" in r:
                first_count = r["confirmed_by_rerun"]["differing"] if shown == "diffs" else None
                lines.append(
                    "   confirmed by the rerun on both kernels"
                    + (f" ({first_count} differing calls)" if first_count is not None else "; shown: the rerun, which found fewer differing calls than the first run")
                )
            if "attribution" in r:
                lines += ["   " + l for l in regress_attribution.summary_lines(r["attribution"])]
            lines.append(f"   full reports: {shown}/{r['workload']}/{r['context']}/diff.txt, diff.json")
        if r.get("kernel_report"):
            lines.append("   the changed kernel's console (runs/changed/console.log):")
            lines += ["   " + l for l in r["kernel_report"]]
    if coverage:
        lines += [""] + regress_coverage.summary_lines(coverage)
    (out / "summary.txt").write_text("\n".join(lines) + "\n")

    cases = []
    for r in runs:
        name = f'<testcase classname={xml_attr("regress." + r["workload"])} name={xml_attr(r["context"])}'
        if r["outcome"] == "differ":
            msg = f"{differing_calls(r)} calls differ ({kinds_text(r)}); {len(r['verdict_changes'])} verdict lines differ"
            body = "\n".join(r["first_differences"] + r["verdict_changes"][:VERDICT_CHANGES_SHOWN])
            cases.append(f"{name}><failure message={xml_attr(msg)}>{xml_text(body)}</failure></testcase>")
        elif r["outcome"] == "splat":
            body = "\n".join(r["kernel_report"])
            cases.append(f"{name}><failure message={xml_attr(r['reason'])}>{xml_text(body)}</failure></testcase>")
        elif r["outcome"] == "error":
            cases.append(f"{name}><error message={xml_attr(r['reason'])}/></testcase>")
        else:
            cases.append(f"{name}/>")
    (out / "junit.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites><testsuite name="antinomie-regress" tests="{len(runs)}" '
        f'failures="{changed}" errors="{errors}">\n'
        + "\n".join(cases)
        + "\n</testsuite></testsuites>\n"
    )
    write_ktap(out / "report.ktap", headline, meta, runs)
    # The report's inputs, hashed, name it in KCIDB (see write_kcidb).
    inputs = hashlib.sha256()
    for f in (args.meta, args.first, args.rerun):
        inputs.update(Path(f).read_bytes() if f else b"")
    write_kcidb(out / "kcidb.json", inputs.hexdigest()[:16], meta, runs)
    return code


def cmd_coverage(args) -> int:
    runs = [tuple(l.split()) for l in Path(args.runs).read_text().splitlines() if l.strip()]
    changed_files = None
    if args.changed_files:
        changed_files = [l for l in Path(args.changed_files).read_text().splitlines() if l.strip()]

    def notes(d):
        return None if d == "-" else Path(d)

    cov = regress_coverage.coverage_report(
        notes(args.notes_a), notes(args.notes_b), Path(args.a), Path(args.b), runs, changed_files
    )
    Path(args.out).write_text(json.dumps(cov, indent=1) + "\n")
    return 0


def cmd_functions(args) -> int:
    print("\n".join(regress_attribution.probed_functions()))
    return 0


def cmd_attribute(args) -> int:
    runs = [tuple(l.split()) for l in Path(args.runs).read_text().splitlines() if l.strip()]
    att = regress_attribution.attribution_report(args.reader, Path(args.a), Path(args.b), Path(args.diffs), runs)
    Path(args.out).write_text(json.dumps(att, indent=1) + "\n")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare")
    for o in ("--reader", "--a", "--b", "--runs", "--out"):
        c.add_argument(o, required=True)
    v = sub.add_parser("coverage")
    for o in ("--notes-a", "--notes-b", "--a", "--b", "--runs", "--out"):
        v.add_argument(o, required=True)
    v.add_argument("--changed-files")
    sub.add_parser("functions")
    a = sub.add_parser("attribute")
    for o in ("--reader", "--a", "--b", "--diffs", "--runs", "--out"):
        a.add_argument(o, required=True)
    k = sub.add_parser("splat-run")
    for o in ("--console", "--reports"):
        k.add_argument(o, required=True)
    k.add_argument("--title", action="store_true")
    k = sub.add_parser("splat")
    for o in ("--runs", "--console", "--reports", "--rerun-console", "--rerun-reports", "--baseline-runs",
              "--rerun-baseline-runs", "--out"):
        k.add_argument(o, required=True)
    r = sub.add_parser("report")
    r.add_argument("--first", required=True)
    r.add_argument("--rerun")
    r.add_argument("--coverage")
    r.add_argument("--attribution")
    r.add_argument("--meta", required=True)
    r.add_argument("--out", required=True)
    args = p.parse_args()
    commands = {
        "compare": cmd_compare,
        "coverage": cmd_coverage,
        "functions": cmd_functions,
        "attribute": cmd_attribute,
        "splat-run": cmd_splat_run,
        "splat": cmd_splat,
        "report": cmd_report,
    }
    return commands[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
