#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The inline reader (common/symbols/inline-frames.c, through dump-inline-frames) against `addr2line -i -f`: the
same chain of functions, innermost first, at every instruction address of the workload's run_batch() (GCC
inlined two stages into it, one of them holding a third function; elfutils' and binutils' addr2line both
checked) and at 1,000 instruction addresses of Debian's python3.11, spread over _PyEval_EvalFrameDefault and the
rest of its text, read from its debug file (python3.11-dbg). On python3.11, an LTO build, the reference is
binutils' addr2line: elfutils' (0.188) goes through dwarf_getscopes(), which misses the inlined scopes there
(the count of its differences is printed, not checked). Without python3.11 or its debug file that part is
skipped and says so.

usage: check-inline-addr2line.py DUMP-INLINE-FRAMES WORKLOAD"""
import os
import re
import subprocess
import sys

PYTHON = '/usr/bin/python3.11'
DEBUG_DIR = '/usr/lib/debug'


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True, check=True).stdout


def symbol_range(path, name):
    """(start, end) of the function symbol name in path's symbol table (its debug file's for a stripped one)."""
    for line in run(['nm', '-S', '--defined-only', path]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] == name and parts[2] in 'tT':
            start = int(parts[0], 16)
            return start, start + int(parts[1], 16)
    raise SystemExit(f'{path}: no function {name}')


def instructions(path, start, end):
    """The instruction addresses of path in [start, end), as objdump decodes them."""
    out = run(['objdump', '-d', '--no-show-raw-insn', f'--start-address={start:#x}', f'--stop-address={end:#x}',
               path])
    return [int(m.group(1), 16) for m in re.finditer(r'^\s*([0-9a-f]+):\s', out, re.M)]


def addr2line(program, path, addresses):
    """Per address, the function names program (eu-addr2line or addr2line) -i -f gives, innermost first ([] for
    '??')."""
    out = run([program, '-a', '-i', '-f', '-e', path], '\n'.join(f'{a:#x}' for a in addresses) + '\n')
    chains, lines = [], out.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith('0x'):
            raise SystemExit(f'{program}: unexpected line {lines[i]!r}')
        chain, i = [], i + 1
        # Pairs of a name line ("NAME" or "NAME inlined at FILE:LINE in OUTER") and a location line.
        while i < len(lines) and not lines[i].startswith('0x'):
            chain.append(lines[i].split(' ')[0])
            i += 2
        chains.append([] if chain == ['??'] else chain)
    return chains


def dump(tool, dwarf_file, addresses):
    out = run([tool, dwarf_file], ''.join(f'{a:x}\n' for a in addresses))
    return [[] if line == '??' else line.split(' ') for line in out.splitlines()]


def compare(what, program, tool, binary, dwarf_file, addresses):
    expected = addr2line(program, binary, addresses)
    got = dump(tool, dwarf_file, addresses)
    assert len(expected) == len(addresses) == len(got), (len(expected), len(addresses), len(got))
    # No function in the DWARF: the reader says so ([]) and the symbolizer keeps its ELF name, where addr2line
    # prints that name (astfold_pattern.lto_priv.0): no inlined frame either way.
    bad = [(a, e, g) for a, e, g in zip(addresses, expected, got) if e != g and not (g == [] and len(e) == 1)]
    inlined = sum(1 for e in expected if len(e) > 1)
    print(f'{what} against {program}: {len(addresses)} addresses, {inlined} in inlined code, {len(bad)} differ')
    for a, e, g in bad[:10]:
        print(f'  {a:#x}: {program} {e}, reader {g}')
    return expected, bad


def build_id_debug_file(path):
    m = re.search(r'Build ID: ([0-9a-f]+)', run(['eu-readelf', '-n', path]))
    if not m:
        return None
    debug = os.path.join(DEBUG_DIR, '.build-id', m.group(1)[:2], m.group(1)[2:] + '.debug')
    return debug if os.path.exists(debug) else None


def main():
    tool, workload = sys.argv[1:3]
    failed = False

    start, end = symbol_range(workload, 'run_batch')
    batch = instructions(workload, start, end)
    for program in ('eu-addr2line', 'addr2line'):
        expected, bad = compare('workload run_batch', program, tool, workload, workload, batch)
        failed |= bool(bad)
    # The workload's point: addresses in the three-deep chain, and in both stages.
    if ['mix_round', 'stage_hash', 'run_batch'] not in expected or ['stage_sum', 'run_batch'] not in expected:
        print(f'workload: the expected chains are missing from {sorted(set(map(tuple, expected)))}')
        failed = True

    debug = build_id_debug_file(PYTHON) if os.path.exists(PYTHON) else None
    if not debug:
        print(f'SKIP python3.11: {PYTHON} or its debug file (python3.11-dbg) is missing')
        if os.environ.get('CI') == 'true':  # tools/install-deps.sh installs both: a skip there is a failure
            failed = True
    else:
        start, end = symbol_range(debug, '_PyEval_EvalFrameDefault')
        ceval = instructions(PYTHON, start, end)
        # 700 spread over the interpreter's loop, 300 over the whole text (every function, most of them small).
        addresses = ceval[::max(1, len(ceval) // 700)][:700]
        m = re.search(r'\.text\s+([0-9a-f]+)\s+([0-9a-f]+)\s+', run(['objdump', '-h', PYTHON]))
        size, vma = int(m.group(1), 16), int(m.group(2), 16)
        step = size // 300
        for k in range(300):
            near = instructions(PYTHON, vma + k * step, vma + k * step + 16)
            if near:
                addresses.append(near[0])
        compare('python3.11 (not checked)', 'eu-addr2line', tool, PYTHON, debug, addresses)
        expected, bad = compare('python3.11', 'addr2line', tool, PYTHON, debug, addresses)
        failed |= bool(bad) or len(addresses) < 900 or sum(1 for e in expected if len(e) > 1) < 100
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
