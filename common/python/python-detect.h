/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macros.h"

/* Whether an ELF file that a process maps (the python3.X executable or libpython3.X.so.1.0) is a CPython
 * interpreter, which version, and where its parts are: by its symbols and data, never by its name. Every
 * address is the file's own virtual address (st_value), to be moved by the mapping's load bias.
 * Library-like: no logging above debug. */

typedef struct PythonDetectOptions {
        const char *root;      /* the target's root directory (/proc/PID/root) for debug files; NULL: ours */
        const char *debug_dir; /* as debug-file.h; NULL: /usr/lib/debug */
        const char *path;      /* the file's path as the target sees it, for a .gnu_debuglink; may be NULL */
} PythonDetectOptions;

typedef struct PythonInterpreter {
        uint32_t version_hex;     /* PY_VERSION_HEX */
        bool version_from_symbol; /* read from Py_Version (3.11+), else from the PY_VERSION string */
        uint64_t runtime;         /* _PyRuntime */
        uint64_t runtime_size;
        uint64_t eval_start; /* _PyEval_EvalFrameDefault: [eval_start, eval_end) */
        uint64_t eval_end;
        uint64_t eval_cold_start; /* its .cold part split off by GCC; both 0 when unknown or none */
        uint64_t eval_cold_end;
        uint64_t code_type; /* PyCode_Type; 0 when the file does not name it */
        bool pie_or_dso;    /* ET_DYN: the addresses move with the mapping */
        char *build_id;     /* lowercase hex, NULL when none */
        char *dwarf_path;   /* the file with its debug info: the separate debug file (as the target
                             * sees it, inside root) or NULL */
        bool own_dwarf;     /* the file itself has .debug_info */
} PythonInterpreter;

/* Detect the interpreter in the ELF file open at fd (not kept). 0 and *ret on success; -ENOEXEC when it is
 * no ELF file, -EMEDIUMTYPE when it is ELF but no CPython interpreter (no _PyRuntime and
 * _PyEval_EvalFrameDefault defined in it: a program linking libpython has them undefined), -EBADMSG when
 * their addresses make no sense (outside the file's executable code), -EPROTONOSUPPORT when no Python 3
 * version can be read from it, -EIO when it is truncated (shorter than its headers say) or changed while
 * read, -EFBIG, -ENOMEM. */
int python_detect_fd(int fd, const PythonDetectOptions *o, PythonInterpreter **ret);
int python_detect_path(const char *path, const PythonDetectOptions *o, PythonInterpreter **ret);

PythonInterpreter *python_interpreter_free(PythonInterpreter *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(PythonInterpreter *, python_interpreter_free);
