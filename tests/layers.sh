#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The dependency direction of emulator/: each #include "emulator/..." of a
# file under emulator/ names its own folder or one below it in
# emulator/LAYERS. An include of a folder above is debt: it passes only
# while emulator/layers.allow lists it, and a line there whose include is
# gone fails too, so the list only shrinks. Pairs of folders that include
# each other are printed as debt. (tests/folders.sh bounds each folder's size.)
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

allowed = {}
for n, fields, why in entries("layers.allow"):
    if len(fields) != 2 or not why:
        fail("emulator/layers.allow:%d: not \"FILE HEADER  # why\"" % n)
        continue
    edge = tuple(fields)
    if edge in allowed:
        fail("emulator/layers.allow:%d: %s -> %s again" % (n, *edge))
    elif edge not in edges or not upward(edge):
        fail("emulator/layers.allow:%d: %s -> %s is no upward include any more: delete the line"
             % (n, *edge))
    allowed[edge] = why

ups = sorted(e for e in edges if upward(e))
new = [e for e in ups if e not in allowed]
for a, b in ups:
    if (a, b) in allowed:
        print("debt: %s -> %s  # %s" % (a, b, allowed[(a, b)]))
for a, b in new:
    fail("%s includes emulator/%s: %s is above %s in emulator/LAYERS (include a header "
         "below, or list the include in emulator/layers.allow with why)"
         % (a, b, folder(b), folder(a)))

# Folders that include each other: each upward include whose folder is included back.
pairs = {}
for a, b in ups:
    pair = (folder(b), folder(a))
    if any(folder(x) == pair[0] and folder(y) == pair[1] for x, y in edges):
        pairs.setdefault(pair, []).append("%s -> %s" % (a, b))
for (top, low), via in sorted(pairs.items(), key=lambda p: (rank[p[0][0]], rank[p[0][1]])):
    print("cycle (debt): %s <-> %s, upward through %s" % (top, low, ", ".join(via)))
print("%d folder pairs include each other (debt)" % len(pairs))
print("%d upward edges allowed (debt), %d new" % (len(ups) - len(new), len(new)))
sys.exit(1 if failures else 0)
PY
