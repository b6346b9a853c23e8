#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What recognizing a CPython interpreter and filling its layout costs (common/python/): the time of
python_detect_path() and python_offsets_fill() on each interpreter file, as the daemon will pay it once per file
(build-id) it sees mapped.

usage: bench/python-layout-cost.py BUILD_DIR [RUNS]   (default 7)

It runs BUILD_DIR/tests/unit/dump-python-layout RUNS times on Debian's /usr/bin/python3.11 (its DWARF and .cold
part from python3.11-dbg), on pyenv's libpython3.11.so.1.0 where present (its own DWARF), and on a copy of
python3.11 with another build-id (no debug file: the member table and the checked-in table only), and prints the
median, minimum and maximum of each phase, with the sources the layout came from. Each run is a new process:
nothing is cached between runs but the kernel's page cache (the first run reads the files cold, if they were)."""
import os
import re
import statistics
import subprocess
import sys

FILES = [
    ('Debian python3.11 (DWARF of python3.11-dbg)', '/usr/bin/python3.11'),
    ('pyenv libpython3.11.so.1.0 (own DWARF)', '/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0'),
    ('python3.11, another build-id (no DWARF)', 'tests/unit/python3.11-other-build-id'),
]


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    dump = os.path.join(build, 'tests', 'unit', 'dump-python-layout')
    print(f'{"file":48} {"detection ms (median min max)":>30} {"layout ms (median min max)":>30}  sources')
    for label, path in FILES:
        if not path.startswith('/'):
            path = os.path.join(build, path)
        if not os.path.exists(path):
            print(f'{label:48} absent')
            continue
        detection, layout, sources = [], [], ''
        for _ in range(runs):
            out = subprocess.run([dump, path], capture_output=True, text=True, check=True).stdout
            m = re.search(r'detection ([0-9.]+) ms, layout ([0-9.]+) ms', out)
            detection.append(float(m.group(1)))
            layout.append(float(m.group(2)))
            sources = re.search(r'DWARF gave .*', out).group(0)
        d = f'{statistics.median(detection):.1f} {min(detection):.1f} {max(detection):.1f}'
        lay = f'{statistics.median(layout):.1f} {min(layout):.1f} {max(layout):.1f}'
        print(f'{label:48} {d:>30} {lay:>30}  {sources}')


if __name__ == '__main__':
    main()
