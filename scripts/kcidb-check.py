#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""FILE checked as KCIDB I/O data of kcidb-io's newest schema, by its
validator, and the ids it names found in it; prints what it holds:
"checkouts C builds B tests T PASS P FAIL F ERROR E"
(scripts/ci-formats-lib.sh, kcidb_check; run by kcidb-io's Python).

usage: scripts/kcidb-check.py FILE
"""
import collections
import json
import sys

import jsonschema
import kcidb_io

data = json.load(open(sys.argv[1]))
latest = kcidb_io.schema.LATEST
version = (data["version"]["major"], data["version"].get("minor"))
if version != (latest.major, latest.minor):
    sys.exit(f"schema version {version}, not kcidb-io's newest {(latest.major, latest.minor)}")
try:
    latest.validate_exactly(data)
except jsonschema.exceptions.ValidationError as e:
    sys.exit(f"invalid at {'/'.join(map(str, e.absolute_path))}: {e.message}")
checkouts = {o["id"] for o in data["checkouts"]}
builds = {o["id"]: o["checkout_id"] for o in data["builds"]}
for b, c in builds.items():
    if c not in checkouts:
        sys.exit(f"build {b} is of checkout {c}, which the data does not hold")
tested = {t["build_id"] for t in data["tests"]}
if tested != {data["builds"][1]["id"]}:
    sys.exit(f"the tests are of builds {sorted(tested)}, not of the changed kernel's alone")
status = collections.Counter(t["status"] for t in data["tests"])
print(
    f"checkouts {len(checkouts)} builds {len(builds)} tests {len(data['tests'])}",
    " ".join(f"{s} {status[s]}" for s in ("PASS", "FAIL", "ERROR")),
)
