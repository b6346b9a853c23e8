/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "python-detect.h"
#include "python-layout.h"

/* The PythonLayout of a detected interpreter, from the best source for each field: its debug info (DWARF, by
 * build-id), then what the interpreter publishes in its own data (_Py_DebugOffsets from 3.13, PyCode_Type's
 * member table), then the checked-in table of its minor version (python-versions.h). Each field says where
 * it came from and which sources agreed on it. */

typedef enum PythonLayoutSource {
        PYTHON_LAYOUT_SOURCE_NONE,          /* unknown: the field is PYTHON_LAYOUT_NONE */
        PYTHON_LAYOUT_SOURCE_TABLE,         /* the checked-in table of the minor version */
        PYTHON_LAYOUT_SOURCE_MEMBERS,       /* PyCode_Type's tp_members in the file's data */
        PYTHON_LAYOUT_SOURCE_DEBUG_OFFSETS, /* _Py_DebugOffsets at the start of _PyRuntime (3.13) */
        PYTHON_LAYOUT_SOURCE_DWARF,         /* the interpreter's debug info */
        _PYTHON_LAYOUT_SOURCE_MAX,
} PythonLayoutSource;

/* At least the number of PythonLayout's fields but version_hex (python_layout_n_fields). */
#define PYTHON_LAYOUT_FIELDS_MAX 40

typedef struct PythonOffsets {
        PythonLayout layout;
        uint8_t source[PYTHON_LAYOUT_FIELDS_MAX]; /* PythonLayoutSource of python_layout_fields[i] */
        uint8_t agreed[PYTHON_LAYOUT_FIELDS_MAX]; /* 1 << source for each source that gave the same value */
        unsigned conflicts;  /* fields on which two sources disagreed: the better one was taken */
        bool table_verified; /* the table of this minor was checked against a real interpreter */
        int dwarf_result;    /* fields the DWARF gave, or why none: -ENOENT no debug file, -ENODATA, ... */
        int members_result;  /* fields the member table gave, or why none: -EOPNOTSUPP relocations... */
        int debug_offsets_result; /* fields _Py_DebugOffsets gave, or why none: -ENOENT before 3.13 */
} PythonOffsets;

/* Fill *ret for the interpreter p detected in the ELF file open at fd (not kept); root as for its detection
 * (the target's root, where p->dwarf_path is). 0 on success; -EPROTONOSUPPORT when vprof knows no layout of
 * its minor version, -ENOMEM. A source that fails is skipped (its result says why). */
int python_offsets_fill(int fd, const PythonInterpreter *p, const char *root, PythonOffsets *ret);

const char *python_layout_source_to_string(PythonLayoutSource s);
