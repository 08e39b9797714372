#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""FILE as the kernel's kunit_parser.py (in KUNIT_DIR) reads it, on fd 3:
the counts, then "STATUS NAME" per test with its diagnostic lines
indented (scripts/ci-formats-lib.sh, ktap_results). The parser's own
report goes to stdout.

usage: scripts/ktap-results.py KUNIT_DIR FILE 3>RESULTS
"""
import os
import sys

sys.path.insert(0, sys.argv[1])
import kunit_parser

with open(sys.argv[2]) as f:
    main = kunit_parser.parse_run_tests(f.read().splitlines())
c = main.counts
# fd 3: the caller's; kunit_parser prints its own report on stdout.
with os.fdopen(3, "w") as out:
    print(f"passed {c.passed} failed {c.failed} skipped {c.skipped} crashed {c.crashed} errors {c.errors}", file=out)
    for t in main.subtests:
        print(f"{t.status.name} {t.name}", file=out)
        for line in t.log:
            print(f"  {line}", file=out)
