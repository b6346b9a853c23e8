# SPDX-License-Identifier: LGPL-2.1-or-later
"""The live interpreter that test-python-code.c reads (run by /usr/bin/python3.11, and pyenv's 3.8 to 3.13).

Prints, then waits for its standard input to close:

    types ID(code type) ID(str) ID(bytes)
    code ADDRESS FIRSTLINENO QUALNAME_HEX FILENAME_HEX BYTECODE_HEX  (before 3.11: co_name, no bytecode)
    lines L0 L1 ...                      (PyCode_Addr2Line() per code unit, -1 for none)
    generator ADDRESS CODE_ADDRESS LINE  (a suspended generator: its frame's line; 0 0 0 before 3.11)
    list ADDRESS                         (an object that is no code object)
    ready

The names are what the reader must give: UTF-8, with Python's backslashreplace for what UTF-8 cannot carry.
Code objects: a method's nested function (Outer.method.<locals>.inner), names in Latin-1 (naïve_ü), in the
BMP (函数) and beyond it (𠀀), and code compiled for files of such names, one with a lone surrogate."""
import ctypes
import sys

addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int


class Outer:
    def method(self):
        def inner(x):
            total = 0
            for i in range(x):
                total += i * i
            return total
        return inner


def naïve_ü(n):
    return [n,
            n + 1]


def 函数():
    return 1


def 𠀀():
    return 2


def counting(n):
    for i in range(n):
        yield i
        yield -i


def compiled(filename):
    namespace = {}
    exec(compile("x = 1\n\n\ndef from_file(a):\n    b = a + 1\n    return b\n", filename, "exec"), namespace)
    return namespace["from_file"].__code__


def instructions(code):
    """co_code_adaptive, what the interpreter runs, with its inline cache entries zeroed (the units where co_code
    has opcode 0, CACHE): their counters are not what the reader should compare."""
    if not hasattr(code, "_co_code_adaptive"):
        return b""  # before 3.11: the bytecode is a separate bytes object, which the reader does not locate
    adaptive = bytearray(code._co_code_adaptive)
    for u in range(0, len(adaptive), 2):
        if code.co_code[u] == 0:
            adaptive[u:u + 2] = b"\0\0"
    return bytes(adaptive)


def hexname(s):
    return s.encode("utf-8", "backslashreplace").hex() or "-"


def main():
    codes = [Outer().method().__code__, Outer.method.__code__, naïve_ü.__code__, 函数.__code__, 𠀀.__code__,
             counting.__code__, compiled("/tmp/vprof test/ünï 名 🐍.py"), compiled("/tmp/bad\udcff.py")]
    # Run first: running specializes instructions (3.12 at once), and the bytecode printed must stay as it is.
    gen = counting(10)
    next(gen)
    next(gen)
    next(gen)
    print("types", id(type(codes[0])), id(str), id(bytes))
    for code in codes:
        qualname = code.co_qualname if sys.version_info >= (3, 11) else code.co_name
        print("code", id(code), code.co_firstlineno, hexname(qualname), hexname(code.co_filename),
              instructions(code).hex() or "-")
        print("lines", *[addr2line(code, 2 * u) for u in range(len(code.co_code) // 2)])
    if sys.version_info >= (3, 11):
        print("generator", id(gen), id(gen.gi_code), gen.gi_frame.f_lineno)
    else:  # its frame is a PyFrameObject of its own, not inside the generator
        print("generator", 0, 0, 0)
    a_list = [1, 2, 3]
    print("list", id(a_list))
    print("ready", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
