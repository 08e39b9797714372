# SPDX-License-Identifier: GPL-2.0-only
"""What a regression run reached of perf_event_open's decisions (gcov).

A kernel built with kconfig/coverage.config keeps, beside its build, the
notes (.gcno) and the source as built of each object kconfig/coverage.objects
lists (scripts/build-kernel.sh: BUILD/coverage/PATH.gcno and PATH.c); the
corpus scenario copies the counters after each workload x context to the
run's gcov/ (PATH.gcda, under its path in debugfs). gcov, the compiler's
own reader of both (the gcc that built the kernel), turns each run's
counters into per-line counts and branch outcomes, which are summed over
the runs.

Reported per function of DECISION_FUNCTIONS: its lines executed, its
decision lines (lines with a conditional branch) executed, and the branch
outcomes taken; and for a change (the instrumented sources of the two
kernels differ), each changed hunk and whether the corpus reached it: an
added or changed line executed on the changed kernel, or a removed one
executed on the baseline.
"""

import json
import re
import subprocess
import tempfile
from pathlib import Path

# The functions that decide perf_event_open's result, per instrumented
# source: the open body and the attr's copy, the permission checks, the
# event's allocation and its PMU's event_init (software, clocks,
# tracepoints, kprobe and uprobe, breakpoints), the context, the group's
# and the output's checks. __perf_event_open is the syscall's body (the
# series moves it out of SYSCALL_DEFINE5(perf_event_open, ...), whose
# capture hooks decide nothing).
DECISION_FUNCTIONS = {
    "kernel/events/core.c": [
        "__perf_event_open",
        "perf_copy_attr",
        "perf_allow_kernel",
        "perf_check_permission",
        "perf_event_alloc",
        "perf_init_event",
        "perf_try_init_event",
        "perf_swevent_init",
        "cpu_clock_event_init",
        "task_clock_event_init",
        "perf_tp_event_init",
        "perf_kprobe_event_init",
        "perf_uprobe_event_init",
        "find_lively_task_by_vpid",
        "find_get_context",
        "perf_cgroup_connect",
        "exclusive_event_init",
        "exclusive_event_installable",
        "perf_get_aux_event",
        "perf_event_set_output",
        "perf_event_set_clock",
        "perf_event_validate_size",
        "__perf_event_read_size",
    ],
    "kernel/events/hw_breakpoint.c": [
        "hw_breakpoint_event_init",
        "register_perf_hw_breakpoint",
        "hw_breakpoint_parse",
        "reserve_bp_slot",
        "__reserve_bp_slot",
    ],
    "arch/x86/kernel/hw_breakpoint.c": [
        "arch_build_bp_info",
        "hw_breakpoint_arch_parse",
        "arch_check_bp_in_kernelspace",
    ],
    "kernel/trace/trace_event_perf.c": [
        "perf_trace_event_perm",
        "perf_trace_event_reg",
        "perf_trace_event_init",
        "perf_trace_init",
        "perf_kprobe_init",
        "perf_uprobe_init",
    ],
    "kernel/trace/trace_kprobe.c": ["create_local_trace_kprobe"],
    "kernel/trace/trace_uprobe.c": ["create_local_trace_uprobe"],
}
# Decision lines no corpus can execute in a TCG guest of the test kernels
# (a guest with no hardware PMU), and why: (source, function, the line's
# text, stripped, which occurrence of that text in the function, reason).
# Matched by text within the function, so that they follow the line
# across changes; the report counts them apart and gives the coverage of
# the rest, the reachable decision lines. One that a run does execute is
# counted as executed and flagged, as is an entry that names no line: the
# table is wrong there. A guest with a hardware PMU (KVM) is measured
# without the table.
NO_AUX_PMU = "needs a PMU with AUX (Intel PT, Arm CoreSight): a TCG guest has none"
NO_FILTER_PMU = "needs a PMU with address filters (Intel PT, Arm CoreSight): a TCG guest has none"
NO_EXCLUSIVE_PMU = "needs an exclusive PMU (Intel PT, BTS, CoreSight): a TCG guest has none"
NO_SCOPE_PMU = "needs a PMU with a scope (uncore, RAPL, cstate): a TCG guest has none"
NO_FUNCTION_EVENT = "ftrace's function event: the test kernels have no function tracer"
NO_HARDWARE_CONTEXT = "needs a PMU of the hardware context: every TCG guest PMU, msr included, is a software one"
OUT_OF_REACH = [
    ("kernel/events/core.c", "__perf_event_open", "if (is_software_event(group_leader) &&", 1, NO_HARDWARE_CONTEXT),
    ("kernel/events/core.c", "__perf_event_open", "(group_leader->group_caps & PERF_EV_CAP_SOFTWARE)) {", 1, NO_HARDWARE_CONTEXT),
    ("kernel/events/core.c", "__perf_event_open", "if (!in_software_context(group_leader) &&", 1, NO_HARDWARE_CONTEXT),
    ("kernel/events/core.c", "__perf_event_open", "group_leader->pmu_ctx->pmu != pmu)", 1, NO_HARDWARE_CONTEXT),
    # The two loops over the siblings of a group that moves to the
    # hardware context (move_group).
    ("kernel/events/core.c", "__perf_event_open", "for_each_sibling_event(sibling, group_leader) {", 1, NO_HARDWARE_CONTEXT),
    ("kernel/events/core.c", "__perf_event_open", "for_each_sibling_event(sibling, group_leader) {", 2, NO_HARDWARE_CONTEXT),
    ("kernel/events/core.c", "perf_event_alloc", "event->attr.aux_pause || event->attr.aux_resume)) {", 1, NO_AUX_PMU),
    ("kernel/events/core.c", "perf_event_alloc", "if (!event->addr_filter_ranges) {", 1, NO_FILTER_PMU),
    ("kernel/events/core.c", "perf_event_alloc", "if (event->parent) {", 1, NO_FILTER_PMU),
    ("kernel/events/core.c", "perf_try_init_event", "BUG_ON(!ctx);", 1, NO_HARDWARE_CONTEXT),
    ("kernel/events/core.c", "perf_try_init_event", "if (!pmu_cpumask || !cpumask)", 1, NO_SCOPE_PMU),
    ("kernel/events/core.c", "perf_try_init_event", "if (cpu >= nr_cpu_ids)", 1, NO_SCOPE_PMU),
    ("kernel/events/core.c", "find_get_context", "if (err == -EAGAIN)", 1, "a race: the task's context freed while it is found"),
    ("kernel/events/core.c", "exclusive_event_init", "if (event->attach_state & PERF_ATTACH_TASK) {", 1, NO_EXCLUSIVE_PMU),
    ("kernel/events/core.c", "exclusive_event_init", "if (!atomic_inc_unless_negative(&pmu->exclusive_cnt))", 1, NO_EXCLUSIVE_PMU),
    ("kernel/events/core.c", "exclusive_event_init", "if (!atomic_dec_unless_positive(&pmu->exclusive_cnt))", 1, NO_EXCLUSIVE_PMU),
    ("kernel/events/core.c", "exclusive_event_installable", "list_for_each_entry(iter_event, &ctx->event_list, event_entry) {", 1, NO_EXCLUSIVE_PMU),
    ("kernel/events/core.c", "exclusive_event_installable", "if (exclusive_event_match(iter_event, event))", 1, NO_EXCLUSIVE_PMU),
    ("kernel/events/core.c", "perf_get_aux_event", "if (!atomic_long_inc_not_zero(&group_leader->refcount))", 1, NO_AUX_PMU),
    ("kernel/trace/trace_event_perf.c", "perf_trace_event_perm", "if (ret)", 2, NO_FUNCTION_EVENT),
    ("kernel/trace/trace_event_perf.c", "perf_trace_event_perm", "if (!is_sampling_event(p_event))", 1, NO_FUNCTION_EVENT),
    ("kernel/trace/trace_event_perf.c", "perf_trace_event_perm", "if (!p_event->attr.exclude_callchain_user)", 1, NO_FUNCTION_EVENT),
    ("kernel/trace/trace_event_perf.c", "perf_trace_event_perm", "if (p_event->attr.sample_type & PERF_SAMPLE_STACK_USER)", 1, NO_FUNCTION_EVENT),
]
# How many unexecuted decision lines the summary shows (report.json has
# every one).
UNEXECUTED_SHOWN = 40


def function_ranges(source: str, names: list[str]) -> dict[str, tuple[int, int]]:
    """The first and last line (1-based) of each function's definition in
    a C source: the line that names it followed by "(" (its type may be on
    the line before), through the brace that closes its body. A name
    followed by a prototype (";" before "{") is skipped; a name not
    defined is left out."""
    lines = source.split("\n")
    found = {}
    for name in names:
        head = re.compile(r"^(?:[A-Za-z_][\w \t*]*[ \t*])?" + re.escape(name) + r"\(")
        for i, line in enumerate(lines):
            if not head.match(line):
                continue
            # The signature runs to the first "{" (a definition) or ";"
            # (a prototype).
            j, rest = i, line[line.index("(") :]
            while "{" not in rest and ";" not in rest and j + 1 < len(lines):
                j += 1
                rest += lines[j]
            if "{" not in rest or (";" in rest and rest.index(";") < rest.index("{")):
                continue
            depth, end = 0, None
            for k in range(j, len(lines)):
                # Braces in strings and comments of these functions come in
                # pairs or not at all; counting them is enough.
                depth += lines[k].count("{") - lines[k].count("}")
                if depth == 0:
                    end = k
                    break
            if end is not None:
                found[name] = (i + 1, end + 1)
                break
    return found


def out_of_reach(rel: str, fn: str, text: list[str], first: int, last: int) -> tuple[dict[int, str], list[str]]:
    """The lines of one function (first..last) that OUT_OF_REACH names,
    with the reason, and the entries that name no line of it (a change
    removed the line, or the table no longer fits the source)."""
    entries = {(what, occurrence): reason for src, func, what, occurrence, reason in OUT_OF_REACH if (src, func) == (rel, fn)}
    seen: dict[str, int] = {}
    found, matched = {}, set()
    for n in range(first, last + 1):
        line = text[n - 1].strip()
        seen[line] = seen.get(line, 0) + 1
        if (line, seen[line]) in entries:
            found[n] = entries[line, seen[line]]
            matched.add((line, seen[line]))
    unmatched = [f"{what} (occurrence {occurrence})" for what, occurrence in entries if (what, occurrence) not in matched]
    return found, unmatched


def gcov_json(gcno: Path, gcda: Path) -> dict:
    """gcov's JSON of one object's notes and counters."""
    with tempfile.TemporaryDirectory() as tmp:
        stem = Path(tmp) / gcno.stem
        stem.with_suffix(".gcno").symlink_to(gcno.resolve())
        stem.with_suffix(".gcda").symlink_to(gcda.resolve())
        out = subprocess.run(
            ["gcov", "--branch-probabilities", "--json-format", "--stdout", "-o", tmp, gcno.stem + ".c"],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
    if out.returncode != 0 or not out.stdout.startswith("{"):
        raise RuntimeError(f"gcov could not read {gcda}: {out.stderr.strip()[:300]}")
    return json.loads(out.stdout)


class Counts:
    """One kernel's counts over the runs, per source line."""

    def __init__(self):
        self.lines: dict[str, dict[int, int]] = {}
        self.branches: dict[str, dict[int, list[int]]] = {}
        self.reached_by: dict[str, dict[int, list[str]]] = {}

    def add(self, rel: str, data: dict, run: str) -> None:
        lines = self.lines.setdefault(rel, {})
        branches = self.branches.setdefault(rel, {})
        reached_by = self.reached_by.setdefault(rel, {})
        for f in data["files"]:
            # The object's own source; inline functions of headers are
            # reported under the headers, which are not measured here.
            if not (f["file"] == rel or f["file"].endswith("/" + rel)):
                continue
            for l in f["lines"]:
                n = l["line_number"]
                lines[n] = lines.get(n, 0) + l["count"]
                if l["count"] and run not in reached_by.setdefault(n, []):
                    reached_by[n].append(run)
                counts = [b["count"] for b in l["branches"]]
                if counts:
                    have = branches.setdefault(n, [0] * len(counts))
                    # gcc gives a line the same arcs in every run of one
                    # build; a line that differs keeps the longer list.
                    if len(have) < len(counts):
                        have.extend([0] * (len(counts) - len(have)))
                    for k, c in enumerate(counts):
                        have[k] += c


def kernel_coverage(notes: Path, results: Path, runs: list[tuple[str, str]]) -> dict:
    """The coverage of one kernel: its notes (BUILD/coverage) and the
    counters of each run under its results (results/NAME/CONTEXT/gcov)."""
    noted = sorted(p.relative_to(notes).as_posix() for p in notes.rglob("*.c"))
    saved = {}
    for name, context in runs:
        gcov_dir = results / name / context / "gcov"
        saved[name, context] = [p.as_posix() for p in gcov_dir.rglob("*.gcda")] if gcov_dir.is_dir() else []

    def counters(run, rel):
        # Under the object's path in the build directory: several objects
        # share a file name (hw_breakpoint.o).
        suffix = "/" + Path(rel).with_suffix(".gcda").as_posix()
        return next((Path(p) for p in saved[run] if p.endswith(suffix)), None)

    # A source whose object left counters in no run is not in the kernel
    # that ran (notes an earlier build left in the same directory).
    sources = [rel for rel in noted if any(counters(run, rel) for run in saved)]
    counts = Counts()
    missing = []
    for run in saved:
        for rel in sources:
            gcda = counters(run, rel)
            if gcda is None:
                missing.append(f"{run[0]}/{run[1]}: {rel}")
                continue
            counts.add(rel, gcov_json(notes / Path(rel).with_suffix(".gcno"), gcda), f"{run[0]} as {run[1]}")
    # The out-of-reach table is for a guest without a hardware PMU (the
    # guests of the test command run under TCG); the corpus scenario lists
    # the guest's PMUs.
    pmus = (results / "pmus").read_text().split() if (results / "pmus").exists() else []
    table_applies = "cpu" not in pmus
    functions = []
    for rel in sources:
        text = (notes / rel).read_text(errors="replace").split("\n")
        wanted = DECISION_FUNCTIONS.get(rel, [])
        ranges = function_ranges("\n".join(text), wanted)
        lines = counts.lines.get(rel, {})
        branches = counts.branches.get(rel, {})
        for fn in wanted:
            if fn not in ranges:
                functions.append({"file": rel, "function": fn, "defined": False})
                continue
            first, last = ranges[fn]
            executable = [n for n in range(first, last + 1) if n in lines]
            if not executable:
                # Under a configuration that leaves it out (an #ifdef), or
                # inlined into callers whose lines are elsewhere.
                functions.append({"file": rel, "function": fn, "defined": False})
                continue
            decisions = [n for n in executable if len(branches.get(n, [])) >= 2]
            outcomes = [c for n in decisions for c in branches[n]]
            reasons, unmatched = out_of_reach(rel, fn, text, first, last) if table_applies else ({}, [])
            beyond = [n for n in decisions if n in reasons and lines[n] == 0]
            functions.append(
                {
                    "file": rel,
                    "function": fn,
                    "defined": True,
                    "first_line": first,
                    "last_line": last,
                    "lines": [sum(lines[n] > 0 for n in executable), len(executable)],
                    "decision_lines": [sum(lines[n] > 0 for n in decisions), len(decisions)],
                    "reachable_decision_lines": [sum(lines[n] > 0 for n in decisions), len(decisions) - len(beyond)],
                    "branch_outcomes": [sum(c > 0 for c in outcomes), len(outcomes)],
                    "unexecuted_decision_lines": [
                        {"line": n, "text": text[n - 1].strip(), "out_of_reach": reasons.get(n)}
                        for n in decisions
                        if lines[n] == 0
                    ],
                    # Lines the table says no corpus can execute, which a
                    # run did: the table is wrong there.
                    "out_of_reach_executed": [n for n in decisions if n in reasons and lines[n] > 0],
                    # Table entries that name no line of this source.
                    "out_of_reach_unmatched": unmatched,
                }
            )
    measured = [f for f in functions if f["defined"]]

    def total(key):
        return [sum(f[key][0] for f in measured), sum(f[key][1] for f in measured)]

    return {
        "sources": sources,
        "sources_without_counters": [rel for rel in noted if rel not in sources],
        "guest_pmus": pmus,
        "out_of_reach_applied": table_applies,
        "runs_without_counters": missing,
        "functions": functions,
        "total": {k: total(k) for k in ("lines", "decision_lines", "reachable_decision_lines", "branch_outcomes")},
        "counts": counts,
    }


# How many lines above a changed line without gcov counts its guard may
# be: gcc at -O2 keeps no line record for most "return -EINVAL;" and
# "err = -EACCES;" lines, whose reach is then their if's.
GUARD_LINES = 3


def diff_hunks(old: Path, new: Path) -> list[tuple[int, int, int, int]]:
    """The hunks by which two files differ, as git diff shows them with
    no context (its indent heuristic places a removed block where a reader
    would): (first old line, old count, first new line, new count); a
    count of 0 places the side's position after that line."""
    out = subprocess.run(
        ["git", "diff", "--no-index", "--no-color", "--indent-heuristic", "-U0", str(old), str(new)],
        capture_output=True,
        text=True,
    )
    if out.returncode not in (0, 1):
        raise RuntimeError(f"git diff {old} {new} failed: {out.stderr.strip()[:300]}")
    hunks = []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", out.stdout, re.M):
        a, b, c, d = m.groups()
        hunks.append((int(a), int(b if b is not None else 1), int(c), int(d if d is not None else 1)))
    return hunks


def is_code(line: str) -> bool:
    t = line.strip()
    return bool(t) and not t.startswith(("/*", "*", "//"))


def line_reach(side: dict, rel: str, text: list[str], n: int) -> tuple[str, int, list[str]] | None:
    """How line n of one kernel's source is measured: ("line", n, runs)
    when gcov counts it, ("guard", m, runs) when it has no counts but a
    counted line m at most GUARD_LINES above it (its if) does, None when
    neither (not measurable, or not code)."""
    lines = side["counts"].lines.get(rel, {})
    by = side["counts"].reached_by.get(rel, {})
    if n in lines:
        return ("line", n, by.get(n, []))
    if not is_code(text[n - 1]):
        return None
    for m in range(n - 1, max(0, n - 1 - GUARD_LINES), -1):
        if m in lines:
            return ("guard", m, by.get(m, []))
    return None


def change_hunks(a_notes: Path, b_notes: Path, a: dict, b: dict) -> list[dict]:
    """Every hunk by which the instrumented sources of the two kernels
    differ, and whether the corpus reached it: one of its new lines ran on
    the changed kernel, or one of its removed lines on the baseline (a
    removed check counts as reached where the baseline ran it). A line
    gcov does not count is reached when its guard ran (line_reach): the
    if was evaluated, whether or not it took the line's branch."""
    hunks = []
    rels = sorted({p.relative_to(n).as_posix() for n in (a_notes, b_notes) for p in n.rglob("*.c")})
    for rel in rels:
        old_path, new_path = a_notes / rel, b_notes / rel
        if not old_path.exists() or not new_path.exists():
            continue
        if old_path.read_bytes() == new_path.read_bytes():
            continue
        old = old_path.read_text(errors="replace").split("\n")
        new = new_path.read_text(errors="replace").split("\n")
        for first_old, n_old, first_new, n_new in diff_hunks(old_path, new_path):
            removed = range(first_old, first_old + n_old)
            added = range(first_new, first_new + n_new)
            measured, code, reached_by, via = 0, 0, [], set()
            for side, text, span, kernel in ((a, old, removed, "baseline"), (b, new, added, "changed")):
                for n in span:
                    code += is_code(text[n - 1])
                    how = line_reach(side, rel, text, n)
                    if how is None:
                        continue
                    measured += 1
                    if how[2]:
                        via.add(how[0])
                    reached_by += [f"{r} ({kernel})" for r in how[2] if f"{r} ({kernel})" not in reached_by]
            hunks.append(
                {
                    "file": rel,
                    "baseline_lines": [first_old, n_old],
                    "changed_lines": [first_new, n_new],
                    "removed": [text.strip() for text in old[first_old - 1 : first_old - 1 + n_old]],
                    "added": [text.strip() for text in new[first_new - 1 : first_new - 1 + n_new]],
                    # Lines of code on both sides, and those gcov measures
                    # (counted, or through their guard).
                    "code_lines": code,
                    "measured_lines": measured,
                    "reached": bool(reached_by),
                    "reached_via": "line" if "line" in via else "guard" if via else None,
                    "reached_by": reached_by,
                }
            )
    return hunks


def coverage_report(a_notes, b_notes, a_results, b_results, runs, changed_files) -> dict:
    """coverage.json: each kernel's coverage (null when it was built
    without gcov), the change's hunks in the instrumented sources, and the
    changed files outside them (not measured)."""
    a = kernel_coverage(a_notes, a_results, runs) if a_notes and any(Path(a_notes).rglob("*.gcno")) else None
    b = kernel_coverage(b_notes, b_results, runs) if b_notes and any(Path(b_notes).rglob("*.gcno")) else None
    # The change's lines are known only where both kernels kept their
    # sources as built.
    compared = a is not None and b is not None
    hunks = change_hunks(Path(a_notes), Path(b_notes), a, b) if compared else []
    measured = set((a or b or {"sources": []})["sources"])
    report = {
        "baseline": None if a is None else {k: v for k, v in a.items() if k != "counts"},
        "changed": None if b is None else {k: v for k, v in b.items() if k != "counts"},
        "change": {
            "sources_compared": compared,
            "hunks": hunks,
            "hunks_reached": sum(h["reached"] for h in hunks),
            # The patch's files that no gcov measures: what the corpus did
            # there is not known. null: the change's files are not known
            # (a tree).
            "files_not_measured": None
            if changed_files is None
            else sorted(f for f in changed_files if f not in measured),
        },
    }
    return report


def summary_lines(cov: dict) -> list[str]:
    """The coverage part of summary.txt."""
    side = "changed" if cov["changed"] else "baseline"
    k = cov[side]
    if k is None:
        return ["coverage: not measured (neither kernel was built with gcov: kconfig/coverage.config)"]

    def frac(p):
        return f"{p[0]}/{p[1]}" + (f" {100 * p[0] / p[1]:.0f}%" if p[1] else "")

    t = k["total"]
    lines = [
        f"coverage of perf_event_open's decisions (gcov, {side} kernel): reachable decision lines "
        f"{frac(t['reachable_decision_lines'])} (all {frac(t['decision_lines'])}), "
        f"branch outcomes {frac(t['branch_outcomes'])}, lines {frac(t['lines'])}",
    ]
    if k["runs_without_counters"]:
        lines.append(f"  no counters for {len(k['runs_without_counters'])} run x object(s): {k['runs_without_counters'][0]}, ...")
    lines.append(f"  {'function':<28} {'file':<32} {'decision lines':>15} {'outcomes':>13} {'lines':>13}")
    for f in k["functions"]:
        if not f["defined"]:
            lines.append(f"  {f['function']:<28} {f['file']:<32} not in this kernel (no line of it is compiled)")
            continue
        lines.append(
            f"  {f['function']:<28} {f['file']:<32} {frac(f['decision_lines']):>15} "
            f"{frac(f['branch_outcomes']):>13} {frac(f['lines']):>13}"
        )
    unexecuted = [(f, u) for f in k["functions"] if f["defined"] for u in f["unexecuted_decision_lines"]]
    reachable = [(f, u) for f, u in unexecuted if not u["out_of_reach"]]
    if reachable:
        lines.append(f"  reachable decision lines the corpus never executed ({len(reachable)}; every one in report.json):")
        for f, u in reachable[:UNEXECUTED_SHOWN]:
            lines.append(f"    {f['file']}:{u['line']} {f['function']}: {u['text']}")
    beyond = [(f, u) for f, u in unexecuted if u["out_of_reach"]]
    if beyond:
        lines.append(f"  out of reach of a TCG guest ({len(beyond)}):")
        for f, u in beyond:
            lines.append(f"    {f['file']}:{u['line']} {f['function']}: {u['text']}  -- {u['out_of_reach']}")
    wrong = [(f, n) for f in k["functions"] if f["defined"] for n in f["out_of_reach_executed"]]
    for f, n in wrong:
        lines.append(f"  {f['file']}:{n} {f['function']}: executed, though the out-of-reach table names it")
    return lines


def change_lines(cov: dict) -> list[str]:
    """What summary.txt says of the change's lines, empty when the two
    kernels' instrumented sources are the same and no other file is
    known changed."""
    ch = cov["change"]
    lines = []
    if not ch["sources_compared"]:
        return ["change: its lines are not measured (a kernel without gcov)"]
    if ch["hunks"]:
        lines.append(
            f"change: {len(ch['hunks'])} hunk(s) in the instrumented sources, {ch['hunks_reached']} reached by the corpus"
        )
        for h in ch["hunks"]:
            first, count = h["changed_lines"] if h["changed_lines"][1] else h["baseline_lines"]
            kernel = "" if h["changed_lines"][1] else "baseline "
            where = f"{h['file']}:{kernel}{first}" + (f"-{first + count - 1}" if count > 1 else "")
            if not h["changed_lines"][1]:
                where += " (removed)"
            if h["reached"]:
                what = "reached" + (" (its guard ran)" if h["reached_via"] == "guard" else "") + " by "
                what += ", ".join(h["reached_by"][:4]) + (" ..." if len(h["reached_by"]) > 4 else "")
            elif h["measured_lines"]:
                what = "NOT reached: no run executed its lines"
            elif h["code_lines"]:
                what = "not measured: gcov counts none of its lines"
            else:
                what = "no code (comments, blank lines)"
            lines.append(f"  {where}: {what}")
    if ch["files_not_measured"]:
        lines.append("change outside the instrumented sources (not measured): " + ", ".join(ch["files_not_measured"]))
    return lines


def not_reached(cov: dict | None) -> bool:
    """A change every executable line of which the corpus never ran, all
    of it in measured sources: nothing the comparison says is about it."""
    if cov is None:
        return False
    ch = cov["change"]
    if not ch["sources_compared"]:
        return False
    # Every run's counters on both kernels, every hunk's code measured:
    # otherwise what ran is not known.
    if any(cov[k]["runs_without_counters"] for k in ("baseline", "changed")):
        return False
    if any(h["code_lines"] and not h["measured_lines"] for h in ch["hunks"]):
        return False
    measured = [h for h in ch["hunks"] if h["measured_lines"]]
    return bool(measured) and ch["hunks_reached"] == 0 and ch["files_not_measured"] == []
