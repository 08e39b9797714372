#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every test case of a LAVA job's results (lava-run's JSON): "SUITE CASE
RESULT" per line, then "lava job RESULT", the job's own verdict
(scripts/lava-corpus-job.sh).

usage: scripts/lava-results.py RESULTS.json
"""
import json
import sys

data = json.load(open(sys.argv[1]))
for suite, tests in data.items():
    if suite == "lava":
        continue
    for name, t in tests.items():
        print(suite, name, t.get("result"))
print("lava job", data.get("lava", {}).get("job", {}).get("result"))
