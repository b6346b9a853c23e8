# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3.11 that damages its own frame chain through ctypes, then spins forever in the innermost frame, which
never returns (the interpreter would follow the damage on return): for integration-python's hostile case.

Usage: /usr/bin/python3.11 py-hostile-frames.py MODE, MODE one of
  self-loop   the caller's frame is its own caller (previous = itself)
  cycle       the caller's caller is the spinning frame: a loop of two frames
  wild-code   the caller's code object pointer is 0x10: nothing is mapped there
  not-code    the caller's code object pointer is a list's address: an object that is no code object
The chain is sound in the next three, the caller's code object is not (the walk completes; the daemon cannot name it):
  wild-qualname   its co_qualname is 0x10
  huge-qualname   its co_qualname is a str whose length says 2^40
  huge-linetable  its co_linetable is a bytes object whose size says 2^40
Offsets of CPython 3.11 (pycore_frame.h, pycore_pystate.h, cpython/code.h; docs/PYTHON.md): PyThreadState.cframe
56, _PyCFrame.current_frame 8, _PyInterpreterFrame.f_code 32, .previous 48, PyCodeObject.co_qualname 128,
.co_linetable 136, the length of a str and of a bytes 16. Prints "ready" once damaged."""
import ctypes
import sys

assert sys.version_info[:2] == (3, 11), sys.version
TSTATE_CFRAME, CFRAME_CURRENT_FRAME, FRAME_CODE, FRAME_PREVIOUS = 56, 8, 32, 48
CODE_QUALNAME, CODE_LINETABLE, OBJECT_LENGTH = 128, 136, 16
KEEP = []


def word(addr):
    return ctypes.c_uint64.from_address(addr)


def spin(mode):
    ctypes.pythonapi.PyThreadState_Get.restype = ctypes.c_void_p
    tstate = ctypes.pythonapi.PyThreadState_Get()
    me = word(word(tstate + TSTATE_CFRAME).value + CFRAME_CURRENT_FRAME).value  # spin()'s own frame
    caller = word(me + FRAME_PREVIOUS).value                                     # caller()'s, never resumed
    if mode == "self-loop":
        word(caller + FRAME_PREVIOUS).value = caller
    elif mode == "cycle":
        word(caller + FRAME_PREVIOUS).value = me
    elif mode == "wild-code":
        word(caller + FRAME_CODE).value = 0x10
    elif mode == "not-code":
        KEEP.append([1, 2, 3])
        word(caller + FRAME_CODE).value = id(KEEP[-1])
    elif mode in ("wild-qualname", "huge-qualname", "huge-linetable"):
        code = word(caller + FRAME_CODE).value  # caller()'s code object, never run again
        if mode == "wild-qualname":
            word(code + CODE_QUALNAME).value = 0x10
        else:
            # A new object of our own (kept alive, never freed: its length is a lie), made at run time so
            # that no other code object shares it.
            KEEP.append("".join(["q"] * 32) if mode == "huge-qualname" else bytes(range(32)))
            word(id(KEEP[-1]) + OBJECT_LENGTH).value = 1 << 40
            word(code + (CODE_QUALNAME if mode == "huge-qualname" else CODE_LINETABLE)).value = id(KEEP[-1])
    else:
        sys.exit(f"unknown mode {mode}")
    print("ready", flush=True)
    while True:
        pass


def caller(mode):
    spin(mode)


caller(sys.argv[1])
