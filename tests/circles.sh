#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# No two files of one folder of emulator/ use each other, directly or round
# a longer cycle: read from the built objects (nm: what each defines, what
# each needs), so every call counts, whatever header declares it. A
# transport's engines (rc/, uc/, ud/, dc/, xrc/, raw/: requester, responder,
# completer) call each other by design. (tests/layers.sh keeps the folders
# themselves from including each other.)
set -u

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
command -v python3 >/dev/null || { echo "SKIP: circles: python3 not installed"; exit 77; }
command -v "${NM:-nm}" >/dev/null || { echo "SKIP: circles: nm not installed"; exit 77; }

exec python3 - "$top_srcdir" "$top_builddir" "${NM:-nm}" <<'PY'
import os, subprocess, sys

srcdir, builddir, nm = sys.argv[1:4]
ENGINES = {"rc", "uc", "ud", "dc", "xrc", "raw"}
archive = os.path.join(builddir, "emulator", "librocemu_emu.a")
if not os.path.exists(archive):
    print("FAIL: circles: %s is not built" % archive)
    sys.exit(1)


def symbols(path):
    """(defined, undefined) global symbols of the object PATH."""
    out = subprocess.run([nm, "-P", "-g", path], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            (undefined if fields[1] in ("U", "w", "v") else defined).add(fields[0])
    return defined, undefined


# The archive names what the library holds now; objects of sources since removed stay out.
members = set(subprocess.run(["ar", "t", archive], check=True, capture_output=True,
                             text=True).stdout.split())
objects = {}  # source path inside emulator/ -> (defined, undefined)
for dirpath, dirnames, files in os.walk(os.path.join(builddir, "emulator")):
    dirnames.sort()
    for f in sorted(files):
        if not f.endswith(".o") or f not in members:
            continue
        folder = os.path.relpath(dirpath, os.path.join(builddir, "emulator"))
        source = os.path.join(folder, f[:-2] + ".c")
        if os.path.exists(os.path.join(srcdir, "emulator", source)):
            objects[source] = symbols(os.path.join(dirpath, f))
if not objects:
    print("FAIL: circles: no object of emulator/ found under %s" % builddir)
    sys.exit(1)

definer = {}
for source, (defined, _) in objects.items():
    for sym in defined:
        definer[sym] = source

# uses[a][b]: the symbols a needs that b, of a's folder, defines.
uses = {}
for a, (_, undefined) in objects.items():
    for sym in undefined:
        b = definer.get(sym)
        if b and b != a and os.path.dirname(a) == os.path.dirname(b):
            uses.setdefault(a, {}).setdefault(b, set()).add(sym)


def cycles(nodes):
    """The strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(uses.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


failures = 0
for component in cycles(objects):
    if os.path.dirname(component[0]) in ENGINES:
        continue
    failures += 1
    print("FAIL: circles: these files of emulator/%s/ use each other:"
          % os.path.dirname(component[0]))
    for a in component:
        for b, syms in sorted(uses.get(a, {}).items()):
            if b in component:
                print("  emulator/%s -> emulator/%s: %s" % (a, b, ", ".join(sorted(syms))))
print("circles: %d objects of emulator/ read, %d circles inside a folder outside a "
      "transport's engines" % (len(objects), failures))
sys.exit(1 if failures else 0)
PY
