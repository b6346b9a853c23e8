#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The inline reader's cost (common/symbols/inline-frames.c): the time of one expansion of a new address into its
inlined functions, and the memory the reader holds, on Debian's python3.11 with its debug file (python3.11-dbg).

usage: bench/inline-cost.py BUILD_DIR [ADDRESSES]   (default 5000)

It runs BUILD_DIR/tests/unit/dump-inline-frames (as check-inline-addr2line.py does) on one address, then on
ADDRESSES instruction addresses spread over python3.11's text, and prints the time and peak RSS of each run; the
difference divided by the addresses is the cost of a new address once the file is open (the first address pays
for dwarf_begin() and the unit index). Every address is new to the reader: none is cached, as for the drain's
first sight of an address."""
import os
import re
import subprocess
import sys
import threading
import time

PYTHON = '/usr/bin/python3.11'


def debug_file():
    out = subprocess.run(['eu-readelf', '-n', PYTHON], capture_output=True, text=True, check=True).stdout
    b = re.search(r'Build ID: ([0-9a-f]+)', out).group(1)
    return f'/usr/lib/debug/.build-id/{b[:2]}/{b[2:]}.debug'


def text_addresses(n):
    out = subprocess.run(['objdump', '-h', PYTHON], capture_output=True, text=True, check=True).stdout
    m = re.search(r'\.text\s+([0-9a-f]+)\s+([0-9a-f]+)\s+', out)
    size, vma = int(m.group(1), 16), int(m.group(2), 16)
    return [vma + size * k // n for k in range(n)]


def run(tool, dwarf, addresses):
    """(seconds, peak RSS in KiB, addresses with inlined frames) of one run of the dump tool."""
    start = time.monotonic()
    p = subprocess.Popen([tool, dwarf], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # Written from a thread, read here: neither pipe fills while the other waits. wait4() for the child's RSS.
    writer = threading.Thread(target=lambda: (p.stdin.write(''.join(f'{a:x}\n' for a in addresses)),
                                              p.stdin.close()))
    writer.start()
    out = p.stdout.read()
    writer.join()
    _, _, usage = os.wait4(p.pid, 0)
    seconds = time.monotonic() - start
    inlined = sum(1 for line in out.splitlines() if ' ' in line)
    return seconds, usage.ru_maxrss, inlined


def main():
    build = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    tool = os.path.join(build, 'tests/unit/dump-inline-frames')
    dwarf = debug_file()
    addresses = text_addresses(n)
    t1, rss1, _ = run(tool, dwarf, addresses[:1])
    tn, rssn, inlined = run(tool, dwarf, addresses)
    print(f'python3.11 debug file: {os.path.getsize(dwarf) / 2**20:.1f} MiB')
    print(f'one address:  {t1 * 1e3:.1f} ms, peak RSS {rss1} KiB (open, unit index, first expansion)')
    print(f'{n} addresses: {tn * 1e3:.1f} ms, peak RSS {rssn} KiB, {inlined} with inlined frames')
    print(f'per new address: {(tn - t1) / (n - 1) * 1e6:.1f} us; reader memory after {n} addresses: '
          f'{rssn - rss1} KiB more than after one')


if __name__ == '__main__':
    main()
