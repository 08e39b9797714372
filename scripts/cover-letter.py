#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The cover letter of the series: GENERATED, git format-patch's with its
placeholders, filled with the subject and the text of FROM (the cover
letter written before; everything up to its shortlog). Without FROM,
GENERATED as it is. On stdout (scripts/kernel-lib.sh, export_cover_letter).

usage: scripts/cover-letter.py GENERATED [FROM]
"""
import re, sys

gen = open(sys.argv[1]).read()
if len(sys.argv) < 3 or not sys.argv[2]:
    sys.stdout.write(gen)
    sys.exit(0)
src = open(sys.argv[2]).read()
head, _, body = src.partition("\n\n")
m = re.search(r"^Subject: \[PATCH[^]]*\] (.*(?:\n .*)*)", head, re.M)
if not m:
    sys.exit(f"{sys.argv[2]}: no Subject: [PATCH 0/n] line")
subject = m.group(1).replace("\n ", " ")
# The text ends where the shortlog starts: "Author Name (N):" (the first
# such line: with several authors the shortlog has a block for each).
shortlog = re.search(r"^\S.* \(\d+\):$", body, re.M)
if not shortlog:
    sys.exit(f"{sys.argv[2]}: no shortlog after the text")
text = body[: shortlog.start()]
out = gen.replace("*** SUBJECT HERE ***", subject, 1).replace("*** BLURB HERE ***\n\n", text, 1)
sys.stdout.write(out)
