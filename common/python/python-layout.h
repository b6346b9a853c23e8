/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where a CPython interpreter keeps what vprof reads: byte offsets into its structures, per version. Filled by
 * python-offsets.c from the interpreter itself (PyCode_Type's member table, _Py_DebugOffsets from 3.13), from
 * its debug info by build-id (python3.X-dbg), or from the checked-in table per minor version; read by the
 * daemon's code-object reader (code-reader.c) and, later, pushed to the BPF frame walker. Every offset is a
 * byte offset from the start of the structure named in the field's prefix; UINT32_MAX = the version has no
 * such field. */

#include <stdint.h>

#define PYTHON_LAYOUT_NONE UINT32_MAX

typedef struct PythonLayout {
        uint32_t version_hex;               /* PY_VERSION_HEX of the interpreter: 0x030b02f0 = 3.11.2 final */

        /* _PyRuntimeState (the symbol _PyRuntime) */
        uint32_t runtime_tss_key;           /* gilstate.autoTSSkey.key: the pthread key of the thread state (3.11, 3.12) */
        uint32_t runtime_tss_initialized;   /* gilstate.autoTSSkey._is_initialized */
        uint32_t runtime_interpreters_head; /* interpreters.head: the first PyInterpreterState */

        /* PyInterpreterState, PyThreadState */
        uint32_t interp_threads_head;       /* threads.head: the first PyThreadState */
        uint32_t tstate_next;               /* next thread state of the interpreter */
        uint32_t tstate_native_thread_id;   /* the thread's TID (3.11: native_thread_id) */
        uint32_t tstate_cframe;             /* 3.11, 3.12: cframe (a _PyCFrame *); NONE from 3.13 */
        uint32_t cframe_current_frame;      /* _PyCFrame.current_frame; from 3.13 PyThreadState.current_frame */

        /* _PyInterpreterFrame */
        uint32_t frame_code;                /* f_code (3.11, 3.12), f_executable (3.13) */
        uint32_t frame_previous;            /* previous */
        uint32_t frame_instr;               /* prev_instr (3.11, 3.12), instr_ptr (3.13) */
        uint32_t frame_is_entry;            /* is_entry (3.11); NONE from 3.12 (owner == FRAME_OWNED_BY_CSTACK) */
        uint32_t frame_owner;               /* owner */

        /* PyObject, PyCodeObject */
        uint32_t object_type;               /* ob_type */
        uint32_t code_filename;             /* co_filename (str) */
        uint32_t code_name;                 /* co_name (str) */
        uint32_t code_qualname;             /* co_qualname (str, 3.11+) */
        uint32_t code_firstlineno;          /* co_firstlineno (int) */
        uint32_t code_linetable;            /* co_linetable (bytes; 3.10 co_linetable, 3.8-3.9 co_lnotab) */
        uint32_t code_bytecode;             /* co_code_adaptive: the first code unit, what frame_instr points into */

        /* str (PyASCIIObject, PyCompactUnicodeObject), bytes (PyBytesObject) */
        uint32_t unicode_length;            /* length in code points */
        uint32_t unicode_state;             /* the state bit field (kind, compact, ascii) */
        uint32_t unicode_ascii_data;        /* sizeof(PyASCIIObject): a compact ASCII string's characters */
        uint32_t unicode_compact_data;      /* sizeof(PyCompactUnicodeObject): other compact strings' characters */
        uint32_t bytes_size;                /* ob_size */
        uint32_t bytes_data;                /* ob_sval */
} PythonLayout;
