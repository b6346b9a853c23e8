# SPDX-License-Identifier: LGPL-2.1-or-later
"""The line tables of real code objects and the interpreter's own answer, for test-python-linetable.c.

Run by any CPython from 3.6 on. For every code object of json/decoder.py (the standard library's, as this
interpreter compiled it) and of a few made here (a generated function of many lines with long jumps both ways,
a lambda, a nested def, a generator, code starting far down its file), prints

    code VERSION_HEX FIRSTLINENO UNITS TABLE_HEX
    lines L0 L1 ... (one per code unit: PyCode_Addr2Line(code, 2 * unit), -1 for none)

The table is co_linetable from 3.10 on, co_lnotab before. The lines are the interpreter's C function's answer,
called through ctypes; from 3.10 on the script also checks them against co_lines() (and co_positions() from
3.11) and exits 1 if the interpreter contradicts itself."""
import ctypes
import json.decoder
import sys
import types

addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int


def generated_source():
    """A function of many lines: blank gaps of 1 to 400 lines (varints of several bytes, co_lnotab's pairs of
    no bytes), a loop (lines going back), a statement spread over lines, a long jump forward in one branch."""
    lines = ["def generated(n):", "    total = 0"]
    for i in range(60):
        lines += [""] * ((i * 37) % 400 if i % 3 else i % 5)
        lines.append(f"    for k{i} in range(n):")
        lines.append(f"        total += k{i} * {i}")
        if i % 7 == 0:
            lines += [f"        if total > {i}:", "            total -= (1 +", "", "                2)"]
    lines.append("    return total")
    return "\n".join(lines) + "\n"


def made_code():
    namespace = {}
    exec(compile(generated_source(), "<generated>", "exec"), namespace)
    # The same function starting at line 70001 of its file.
    exec(compile("\n" * 70000 + generated_source().replace("generated", "far"), "<far>", "exec"), namespace)

    def outer():
        def nested(x):
            return [y * 2
                    for y in range(x)]
        return nested

    def gen(n):
        for i in range(n):
            yield i
            yield (
                i + 1)

    square = lambda v: (v *
                        v)
    return [namespace["generated"].__code__, namespace["far"].__code__, outer.__code__,
            outer().__code__, gen.__code__, square.__code__]


def all_code(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from all_code(c)


def main():
    with open(json.decoder.__file__) as f:
        module = compile(f.read(), json.decoder.__file__, "exec")
    codes = list(all_code(module))
    for c in made_code():
        codes += list(all_code(c))

    bad = 0
    for code in codes:
        table = code.co_linetable if sys.version_info >= (3, 10) else code.co_lnotab
        units = len(code.co_code) // 2
        lines = [addr2line(code, 2 * u) for u in range(units)]
        if sys.version_info >= (3, 10):
            by_lines = [-1] * units
            for start, end, line in code.co_lines():
                for u in range(start // 2, end // 2):
                    by_lines[u] = -1 if line is None else line
            bad += by_lines != lines
        if sys.version_info >= (3, 11):
            positions = [-1 if p[0] is None else p[0] for p in code.co_positions()]
            bad += positions != lines
        print("code", hex(sys.hexversion), code.co_firstlineno, units, table.hex() or "-")
        print("lines", *lines)
    if bad:
        print(f"{bad} code objects whose lines the interpreter gives two ways", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
