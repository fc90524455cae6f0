#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# No folder of the project's sources holds more than 25 source files at its
# top: a folder that grows past that is split into sub-folders by role.
set -u

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
command -v python3 >/dev/null || { echo "SKIP: folders: python3 not installed"; exit 77; }

exec python3 - "$top_srcdir" <<'PY'
import os, re, sys

MAX_FILES = 25
TOPS = ("emulator", "lib", "net", "include", "tools", "tests")
SOURCE = (".c", ".h", ".cc", ".cpp", ".sh", ".bash", ".py", ".pl", ".awk")
# The per-backend wrappers Makefile.am writes beside each e2e script in an in-tree build.
GENERATED = re.compile(r"\.(io_uring|epoll)\.sh$")
root = sys.argv[1]
failures = 0
largest = []
for top in TOPS:
    for dirpath, dirnames, files in os.walk(os.path.join(root, top)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        n = sum(1 for f in files if f.endswith(SOURCE) and not GENERATED.search(f))
        folder = os.path.relpath(dirpath, root) + "/"
        largest.append((n, folder))
        if n > MAX_FILES:
            failures += 1
            print("FAIL: folders: %s holds %d source files at its top (at most %d): "
                  "split it into sub-folders by role" % (folder, n, MAX_FILES))
largest.sort(key=lambda e: (-e[0], e[1]))
print("largest folders: " + ", ".join("%s %d" % (f, n) for n, f in largest[:8]))
sys.exit(1 if failures else 0)
PY
