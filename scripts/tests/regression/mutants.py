#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Small kernel mutants of perf_event_open's decisions, as patches.

usage: mutants.py --sources DIR --seed S --count N [--refactors M] --out DIR

Reads the instrumented sources as built (--sources: a build's coverage/,
e.g. $ANTINOMIE_CACHE/kernels/normal/coverage, the series applied), finds
every mutation site in the functions of regress_coverage.DECISION_FUNCTIONS,
draws N behaviour mutants (an operator, then one of its sites) and M
refactors (default none) with the seed, and writes each as a patch that
applies on
the series (DIR/NNN-OPERATOR.patch, with a header that says what it
changes and a "Kind:" line). The operators are the usual ones of mutation
testing, on the lines that decide the result:

  errno     an errno a decision returns becomes another
  relation  a comparison's operator moves by one (< and <=, > and >=,
            == and !=): a bound off by one, a test inverted
  negate    an if's whole condition is negated
  drop      an if that returns or jumps to an error path is removed
  refactor  an if's condition is wrapped in unlikely(): the same
            behaviour (Kind: refactor, which must come out equal)

Every site is a single line: conditions that span lines are left alone,
and a check is dropped only where its if guards one statement. The draw
is independent of what any corpus reaches. A behaviour mutant can still
be equivalent (no caller can tell), which only reading it says.
"""

import argparse
import difflib
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import regress_coverage  # noqa: E402

# Each errno a decision returns, and the one its mutant returns instead.
ERRNO_SWAP = {
    "EINVAL": "EOPNOTSUPP",
    "EOPNOTSUPP": "EINVAL",
    "EACCES": "EPERM",
    "EPERM": "EACCES",
    "E2BIG": "EINVAL",
    "ENOENT": "EINVAL",
    "EBADF": "EINVAL",
    "ENOSPC": "EBUSY",
    "EBUSY": "EINVAL",
    "EFAULT": "EINVAL",
    "ESRCH": "ENOENT",
    "ENOMEM": "EINVAL",
    "ENODEV": "ENOENT",
    "EEXIST": "EBUSY",
    "EAGAIN": "EBUSY",
}
RELATION_SWAP = {"<=": "<", "<": "<=", ">=": ">", ">": ">=", "==": "!=", "!=": "=="}
# A comparison operator, not part of ->, <<, >>, <<= or >>=.
RELATION = re.compile(r"(?<![-<>=!])(<=|>=|==|!=|<|>)(?![<>=])")
# "if (COND)" alone on its line (or opening its block), COND balanced.
IF_LINE = re.compile(r"^(\s*)(?:} else )?if \((.*)\)\s*(\{?)\s*$")


def balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def sites(lines: list[str], first: int, last: int):
    """Every mutant of the lines first..last (1-based) of one function:
    (operator, line number, kind, new lines for lines[n-1:n-1+span], span)."""
    for n in range(first, last + 1):
        line = lines[n - 1]
        code = line.split("/*")[0].split("//")[0]
        m = re.search(r"-(E[A-Z0-9]+)\b", code)
        # A returned or assigned errno, not one compared with.
        returned = "return" in code or "ERR_PTR" in code or re.search(r"[^=!<>]=\s*-E", code)
        if m and m.group(1) in ERRNO_SWAP and returned and not re.search(r"[=!]=\s*-E", code):
            new = line[: m.start()] + "-" + ERRNO_SWAP[m.group(1)] + line[m.end() :]
            yield ("errno", n, "behaviour", [new], 1)
        cond = IF_LINE.match(line)
        if not cond or not balanced(cond.group(2)):
            continue
        indent, expr = cond.group(1), cond.group(2)
        r = RELATION.search(expr)
        if r:
            head = line[: line.index("if (") + 4]
            new_expr = expr[: r.start()] + RELATION_SWAP[r.group(1)] + expr[r.end() :]
            yield ("relation", n, "behaviour", [head + new_expr + line[line.rindex(")") :]], 1)
        head = line[: line.index("if (") + 4]
        tail = line[line.rindex(")") :]
        yield ("negate", n, "behaviour", [head + "!(" + expr + ")" + tail], 1)
        yield ("refactor", n, "refactor", [head + "unlikely(" + expr + ")" + tail], 1)
        body = lines[n] if n < len(lines) else ""
        # Dropped only where the if guards one statement.
        if not cond.group(3) and not line.lstrip().startswith("}") and re.match(r"^\s*(return -E|return ERR_PTR\(-E|goto )", body):
            yield ("drop", n, "behaviour", [], 2)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sources", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--refactors", type=int, default=0)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    src = Path(args.sources)
    found = []
    for rel, names in regress_coverage.DECISION_FUNCTIONS.items():
        path = src / rel
        if not path.exists():
            continue
        text = path.read_text()
        lines = text.split("\n")
        for fn, (first, last) in regress_coverage.function_ranges(text, names).items():
            for op, n, kind, new, span in sites(lines, first, last):
                found.append((rel, fn, op, n, kind, new, span, lines))
    if not found:
        sys.exit(f"mutants.py: no mutation site in {src} (not a build's coverage/?)")
    # The sites in a fixed order, then the seed's sample of each kind.
    found.sort(key=lambda f: (f[0], f[3], f[2]))
    # Each behaviour mutant's operator first, each as likely as another
    # (an if has a negation site but few have a bound to move), then one
    # of its sites not drawn yet.
    draw = random.Random(args.seed)
    left = {}
    for f in found:
        left.setdefault(f[2], []).append(f)
    chosen = []
    for _ in range(args.count):
        ops = sorted(op for op in left if op != "refactor" and left[op])
        if not ops:
            break
        pool = left[draw.choice(ops)]
        chosen.append(pool.pop(draw.randrange(len(pool))))
    refactors = left.get("refactor", [])
    chosen += draw.sample(refactors, min(args.refactors, len(refactors)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for i, (rel, fn, op, n, kind, new, span, lines) in enumerate(chosen, 1):
        mutated = lines[: n - 1] + new + lines[n - 1 + span :]
        diff = difflib.unified_diff(
            [l + "\n" for l in lines], [l + "\n" for l in mutated], f"a/{rel}", f"b/{rel}", n=3
        )
        before = "\n".join(l.strip() for l in lines[n - 1 : n - 1 + span])
        after = "\n".join(l.strip() for l in new) or "(removed)"
        header = (
            f"Mutant {i:03d} of seed {args.seed}: {op} in {fn}() at {rel}:{n}\n"
            f"Kind: {kind}\n\n{before}\n  ->\n{after}\n\n"
            f"diff --git a/{rel} b/{rel}\n"
        )
        (out / f"{i:03d}-{op}.patch").write_text(header + "".join(diff))
    print(f"mutants.py: {len(chosen)} of {len(found)} sites in {src}, seed {args.seed}, in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
