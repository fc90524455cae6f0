#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The dependency direction of emulator/: each #include "emulator/..." of a
# file under emulator/ names its own folder or one below it in
# emulator/LAYERS, and fails on any that names a folder above: so no two
# folders can include each other. Where a lower folder must reach up, it
# declares an interface the folder above fills in. (tests/folders.sh
# bounds each folder's size.)
set -u

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
command -v python3 >/dev/null || { echo "SKIP: layers: python3 not installed"; exit 77; }

exec python3 - "$top_srcdir/emulator" <<'PY'
import os, re, sys

root = sys.argv[1]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: layers: " + msg)


def entries(name):
    """(line number, fields before any '#', comment) of each line of emulator/NAME that says something."""
    with open(os.path.join(root, name)) as f:
        for n, line in enumerate(f, 1):
            text, _, why = line.partition("#")
            if text.split():
                yield n, text.split(), why.strip()


ranked = [fields[0] for _, fields, _ in entries("LAYERS")]
rank = {folder: i for i, folder in enumerate(ranked)}  # 0: the top
folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
for d in folders:
    if d not in rank:
        fail("emulator/%s/ is in no line of emulator/LAYERS" % d)
for d in ranked:
    if d not in folders:
        fail("emulator/LAYERS names %s, which is no folder of emulator/" % d)
print("layers, top first: " + " > ".join(ranked))

for f in sorted(os.listdir(root)):
    if f.endswith((".c", ".h")):
        fail("emulator/%s is in no folder" % f)

# Every include of emulator/ by a file under emulator/, as (file, header), paths inside emulator/.
include = re.compile(r'^\s*#\s*include\s+"emulator/([^"]+)"')
edges = set()
for d in folders:
    for dirpath, _, files in os.walk(os.path.join(root, d)):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.relpath(os.path.join(dirpath, f), root)
            with open(os.path.join(root, path), errors="replace") as src:
                for line in src:
                    m = include.match(line)
                    if m:
                        edges.add((path, m.group(1)))


def folder(path):
    return path.split("/")[0] if "/" in path else ""


def upward(edge):
    a, b = folder(edge[0]), folder(edge[1])
    return a != b and a in rank and b in rank and rank[b] < rank[a]


for a, b in sorted(edges):
    if folder(b) not in rank:
        fail("%s includes emulator/%s, of no folder in emulator/LAYERS" % (a, b))

ups = sorted(e for e in edges if upward(e))
for a, b in ups:
    fail("%s includes emulator/%s: %s is above %s in emulator/LAYERS (include a header "
         "below, or let the folder above fill in an interface the lower one declares)"
         % (a, b, folder(b), folder(a)))
print("%d includes of emulator/ read, %d against the order" % (len(edges), len(ups)))
sys.exit(1 if failures else 0)
PY
