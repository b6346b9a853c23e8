/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A CPython code object read from a target's memory (3.11 and later; names and lines only before): what the
 * daemon shows of a Python frame, its qualified name, file, first line and line table, and the line of an
 * instruction the frame walker reported. The object is untrusted: its type is checked against PyCode_Type,
 * its strings and table are bounded (python-strings.h, python-linetable.h). */

#include <stdint.h>

#include "macros.h"
#include "python-layout.h"
#include "python-linetable.h"
#include "python-strings.h"

/* Addresses of the interpreter's type objects in the target. The code type is required; the others, 0 when
 * unknown, only skip a check. */
typedef struct PythonTypes {
        uint64_t code;
        uint64_t unicode;
        uint64_t bytes;
} PythonTypes;

/* What a freed code object's reuse most likely changes, cheap to read again (one read of the object's head):
 * a cache compares it on every hit. */
typedef struct PythonCodeFingerprint {
        uint64_t type;
        uint64_t qualname;  /* the str's address */
        uint64_t filename;
        uint64_t linetable;
        int32_t firstlineno;
} PythonCodeFingerprint;

typedef struct PythonCode {
        uint64_t address;
        PythonCodeFingerprint fingerprint;
        char *qualname;      /* co_qualname (co_name before 3.11), valid UTF-8 */
        char *filename;      /* co_filename, valid UTF-8 */
        int firstlineno;
        uint64_t bytecode;   /* the address of the first code unit (co_code_adaptive); 0 before 3.11 */
        PythonLines *lines;  /* the decoded line table */
} PythonCode;

/* Reads the head of the code object at address: -EFAULT when unreadable, -EINVAL when its type is not
 * types->code or the layout lacks a field. */
int python_code_fingerprint(const PythonLayout *l, const PythonTypes *types, const PythonMemory *m,
                            uint64_t address, PythonCodeFingerprint *ret);

/* Reads the code object at address whole: -EFAULT, -EINVAL (wrong type, a str that is none, a negative first
 * line), -E2BIG (a name or table past its bound), -EBADMSG (a malformed line table), -EPROTONOSUPPORT (a
 * version without a line format), -ENOMEM. */
int python_code_read(const PythonLayout *l, const PythonTypes *types, const PythonMemory *m, uint64_t address,
                     PythonCode **ret);
PythonCode *python_code_free(PythonCode *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(PythonCode *, python_code_free);

/* The line of the instruction a frame's instruction pointer (3.11: prev_instr) points to: 0 and *ret_line, or
 * -ENOENT (an instruction without a line, or past the code), -EINVAL (not on a code unit's boundary),
 * -EOPNOTSUPP (no bytecode address: before 3.11). One before the first unit, as a frame that has not started
 * has, is the first line. */
int python_code_line(const PythonCode *c, uint64_t instr, int *ret_line);

/* The line of the instruction unit code units in, for frames that give an index rather than a pointer (before
 * 3.11: f_lasti, in code units in 3.10, in bytes, twice as many, in 3.8 and 3.9): 0 and *ret_line, -ENOENT;
 * a negative unit is the first line. */
int python_code_line_at(const PythonCode *c, int64_t unit, int *ret_line);

/* Bytes the object holds, for a cache's bound. */
size_t python_code_memory(const PythonCode *c);
