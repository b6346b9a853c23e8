#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tools/check-layers.py's circles inside a folder: it fails on a tree with a deliberate circle of modules, naming
the circle in order, and passes on the real tree.

Usage: test-check-layers.py SOURCE_ROOT. Exits 0 when both hold.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "check-layers.py")


def run(root):
    result = subprocess.run([sys.executable, TOOL, root], capture_output=True, text=True)
    return result.returncode, result.stdout.splitlines()


def write(root, path, text):
    with open(os.path.join(root, path), "w", encoding="utf-8") as f:
        f.write("/* SPDX-License-Identifier: LGPL-2.1-or-later */\n" + text)


def main():
    source_root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..")
    spec = importlib.util.spec_from_file_location("check_layers", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    failures = []

    # A tiny tree: every layer folder, empty but daemon/, whose modules a, b and c form a circle (a's .h
    # includes b's, b's .c includes c's, c's .c includes a's); d depends on a without being in the circle, and
    # a-internal.h, a's private half, includes a.h without making one.
    with tempfile.TemporaryDirectory() as root:
        for folder in tool.ALLOWED:
            os.makedirs(os.path.join(root, folder), exist_ok=True)
        write(root, "daemon/a.h", '#pragma once\n#include "b.h"\n')
        write(root, "daemon/a-internal.h", '#pragma once\n#include "a.h"\n')
        write(root, "daemon/a.c", '#include "a-internal.h"\n#include "a.h"\n')
        write(root, "daemon/b.h", "#pragma once\n")
        write(root, "daemon/b.c", '#include "b.h"\n#include "c.h"\n')
        write(root, "daemon/c.h", "#pragma once\n")
        write(root, "daemon/c.c", '#include "a.h"\n#include "c.h"\n')
        write(root, "daemon/d.c", '#include "a.h"\n')
        code, lines = run(root)
        expected = "daemon/: circle of modules: a -> b -> c -> a"
        if code != 1:
            failures.append(f"a tree with a circle: exit status {code}, expected 1")
        if expected not in lines:
            failures.append(f"a tree with a circle: no line {expected!r} in:\n  " + "\n  ".join(lines))
        if any("circle of modules" in line and line != expected for line in lines):
            failures.append("a tree with a circle: other circles named:\n  " + "\n  ".join(lines))

    code, lines = run(source_root)
    if code != 0:
        failures.append(f"the real tree: exit status {code}, expected 0:\n  " + "\n  ".join(lines))

    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
