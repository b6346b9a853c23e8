/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The line tables of CPython's code objects: which source line an instruction of the bytecode belongs to,
 * decoded as the interpreter decodes them (Objects/codeobject.c), in three formats:
 *   - co_lnotab (3.6 to 3.9): pairs (bytes advanced, signed lines advanced); the last line runs to the end;
 *   - co_linetable of 3.10: pairs (bytes advanced, signed lines advanced, -128 = no line);
 *   - co_linetable of 3.11 and later (Objects/locations.md): entries of a first byte 1cccclll, lll + 1 code
 *     units of one location of kind cccc (short forms 0-9, one-line forms 10-12, 13 no columns, 14 long form,
 *     15 no location), followed by (signed) varints of 6 bits each.
 * The table is untrusted (read from a target's memory): every read stays inside it, a table larger than
 * PYTHON_LINETABLE_MAX is refused, and a truncated or malformed one is an error, never a read past its end.
 *
 * Offsets are in bytes of bytecode (2 per code unit), as the interpreter's own address ranges are; the
 * lookups take code units, the instruction index that a frame's instruction pointer gives. */

#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* Larger than any table a real code object has (a 10 000-line generated function has about 60 KiB). */
#define PYTHON_LINETABLE_MAX (1024u * 1024u)
/* An instruction without a line (the interpreter's None, -1). */
#define PYTHON_LINE_NONE (-1)

typedef enum PythonLineFormat {
        PYTHON_LINES_LNOTAB, /* 3.6 - 3.9: co_lnotab */
        PYTHON_LINES_310,    /* 3.10: co_linetable */
        PYTHON_LINES_311,    /* 3.11 and later: co_linetable, the location table */
} PythonLineFormat;

/* The format of the interpreter of PY_VERSION_HEX version_hex: -EPROTONOSUPPORT before 3.6. */
int python_line_format(uint32_t version_hex, PythonLineFormat *ret);

/* Bytes [start, end) of the bytecode belong to line (or PYTHON_LINE_NONE). */
typedef struct PythonLineRange {
        uint32_t start;
        uint32_t end;
        int32_t line;
} PythonLineRange;

/* Walks a table range by range, in order of offset; the caller owns the table, which must outlive it. */
typedef struct PythonLineIter {
        PythonLineFormat format;
        const uint8_t *table;
        size_t size;
        size_t pos;
        uint32_t offset;   /* start of the next range, bytes */
        int64_t line;      /* the line the table has reached (the interpreter's computed_line) */
        int error;         /* sticky: once malformed, always malformed */
        int done;
} PythonLineIter;

/* -E2BIG for a table larger than PYTHON_LINETABLE_MAX, -EINVAL for an unknown format (the iterator then fails
 * on its first step too). */
int python_line_iter_init(PythonLineIter *it, PythonLineFormat format, const uint8_t *table, size_t size,
                          int firstlineno);
/* The next non-empty range: 1, or 0 at the end of the table, or -EBADMSG (truncated entry, a varint longer
 * than 32 bits, a line outside 0..INT32_MAX, a first byte that starts no entry). */
int python_line_iter_next(PythonLineIter *it, PythonLineRange *ret);

/* The line of the instruction at code unit unit: 0 and *ret_line (>= 0), or -ENOENT when the instruction has
 * no line or lies past the table's end, -EBADMSG, -E2BIG. A negative unit (a frame that has not started:
 * its instruction pointer is one before the first) is the first line, as the interpreter says. */
int python_linetable_line(PythonLineFormat format, const uint8_t *table, size_t size, int firstlineno,
                          int64_t unit, int *ret_line);

/* A whole table decoded once, for many lookups: its ranges in order, neighbours of one line merged. */
typedef struct PythonLines {
        int firstlineno;
        size_t n;
        PythonLineRange ranges[];
} PythonLines;

/* -ENOMEM, and the errors of the iterator. */
int python_lines_decode(PythonLineFormat format, const uint8_t *table, size_t size, int firstlineno,
                        PythonLines **ret);
PythonLines *python_lines_free(PythonLines *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(PythonLines *, python_lines_free);
/* As python_linetable_line(), by binary search. */
int python_lines_find(const PythonLines *l, int64_t unit, int *ret_line);
/* Bytes the decoded table holds. */
size_t python_lines_memory(const PythonLines *l);
