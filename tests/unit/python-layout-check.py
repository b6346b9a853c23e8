# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run by the interpreter under test (test-python-detect.c): does a layout vprof found hold in this very process?

Arguments: FIELD VALUE pairs of PythonLayout (byte offsets; the fields vprof does not know are left out). Each
one is checked against what the interpreter says of its own objects, read through ctypes at those offsets: a
code object's fields, the running frame of this thread and the one that called it, the thread state through
_PyRuntime's TSS key, strings and bytes. Prints "ok N" (N fields checked) or the mismatches, and exits 1 then.
"""

import ctypes
import sys
import threading

L = {name: int(value) for name, value in zip(sys.argv[1::2], sys.argv[2::2])}
checked = set()
failures = []


def ptr(address):
    return ctypes.c_void_p.from_address(address).value or 0


def check(field, what, got, want):
    checked.add(field)
    if got != want:
        failures.append(f"{field}: {what}: {got!r} != {want!r}")


def probe():
    code = probe.__code__
    c = id(code)
    if "object_type" in L:
        check("object_type", "type of a code object", ptr(c + L["object_type"]), id(type(code)))
    for field, attr in (("code_filename", "co_filename"), ("code_name", "co_name"),
                        ("code_qualname", "co_qualname"), ("code_linetable", "co_linetable")):
        if field in L:
            check(field, attr, ptr(c + L[field]), id(getattr(code, attr)))
    if "code_firstlineno" in L:
        check("code_firstlineno", "co_firstlineno", ctypes.c_int.from_address(c + L["code_firstlineno"]).value,
              code.co_firstlineno)

    api = ctypes.pythonapi
    api.PyThreadState_Get.restype = ctypes.c_void_p
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    ts = api.PyThreadState_Get()
    # The frame running now is probe()'s: ctypes reads from inside it (through no Python helper, whose frame
    # would be the current one).
    cframe = ctypes.c_void_p.from_address(ts + L["tstate_cframe"]).value
    frame = ctypes.c_void_p.from_address(cframe + L["cframe_current_frame"]).value
    check("frame_code", "current frame's code", ptr(frame + L["frame_code"]), c)
    check("tstate_cframe", "current frame's code", ptr(frame + L["frame_code"]), c)
    check("cframe_current_frame", "current frame's code", ptr(frame + L["frame_code"]), c)
    start = c + L["code_bytecode"]
    instr = ptr(frame + L["frame_instr"])
    check("frame_instr", "instruction inside the code", start <= instr < start + len(code.co_code), True)
    check("code_bytecode", "instruction inside the code", start <= instr < start + len(code.co_code), True)
    previous = ptr(frame + L["frame_previous"])
    check("frame_previous", "caller's code", ptr(previous + L["frame_code"]), id(caller.__code__))
    if "frame_is_entry" in L:
        # Called from Python, not from C: not an entry frame; the caller is none either.
        check("frame_is_entry", "is_entry", ctypes.c_bool.from_address(frame + L["frame_is_entry"]).value, False)
    if "frame_owner" in L:
        check("frame_owner", "owner (FRAME_OWNED_BY_THREAD)",
              ctypes.c_char.from_address(frame + L["frame_owner"]).value, b"\0")
    check("tstate_native_thread_id", "native thread id",
          ctypes.c_ulong.from_address(ts + L["tstate_native_thread_id"]).value, threading.get_native_id())

    runtime = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime"))
    check("runtime_tss_initialized", "TSS key initialized",
          ctypes.c_int.from_address(runtime + L["runtime_tss_initialized"]).value, 1)
    libc = ctypes.CDLL(None)
    libc.pthread_getspecific.restype = ctypes.c_void_p
    libc.pthread_getspecific.argtypes = [ctypes.c_uint]
    key = ctypes.c_uint.from_address(runtime + L["runtime_tss_key"]).value
    check("runtime_tss_key", "pthread_getspecific(key)", libc.pthread_getspecific(key), ts)
    interp = ptr(runtime + L["runtime_interpreters_head"])
    check("runtime_interpreters_head", "interpreter", interp, api.PyInterpreterState_Get())
    threads, t = [], ptr(interp + L["interp_threads_head"])
    while t and len(threads) < 100:
        threads.append(t)
        t = ptr(t + L["tstate_next"])
    check("interp_threads_head", "this thread among the interpreter's", ts in threads, True)
    check("tstate_next", "threads listed", len(threads), threading.active_count())


def caller():
    probe()


def strings():
    s = "".join(["abc"] * 3)
    u = "".join(["\u00e9"] * 5)
    b = bytes(range(65, 71))
    check("unicode_length", "len(str)", ctypes.c_ssize_t.from_address(id(s) + L["unicode_length"]).value, len(s))
    state = ctypes.c_uint.from_address(id(s) + L["unicode_state"]).value
    check("unicode_state", "ascii and compact bits", (state >> 5) & 3, 3)
    state = ctypes.c_uint.from_address(id(u) + L["unicode_state"]).value
    check("unicode_state", "latin-1 kind, compact, not ascii", ((state >> 2) & 7, (state >> 5) & 3), (1, 1))
    check("unicode_ascii_data", "ASCII characters", ctypes.string_at(id(s) + L["unicode_ascii_data"], len(s)),
          s.encode())
    check("unicode_compact_data", "latin-1 characters",
          ctypes.string_at(id(u) + L["unicode_compact_data"], len(u)), u.encode("latin-1"))
    check("bytes_size", "len(bytes)", ctypes.c_ssize_t.from_address(id(b) + L["bytes_size"]).value, len(b))
    check("bytes_data", "bytes", ctypes.string_at(id(b) + L["bytes_data"], len(b)), b)


# A second thread, blocked, so that the interpreter's list of threads has more than one.
ready, done = threading.Event(), threading.Event()
worker = threading.Thread(target=lambda: (ready.set(), done.wait()))
worker.start()
ready.wait()
caller()
strings()
done.set()
worker.join()
if failures:
    print("\n".join(failures))
    sys.exit(1)
unchecked = set(L) - checked
print(f"ok {len(checked)}" + (f" (not checked: {' '.join(sorted(unchecked))})" if unchecked else ""))
