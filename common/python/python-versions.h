/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "python-layout.h"

/* The checked-in layouts of CPython 3.8 to 3.13 on 64-bit little-endian Linux (x86-64, AArch64: the same
 * LP64 structures), one per minor version, for an interpreter without debug info; and the names of
 * PythonLayout's fields, for reports and for walking a layout field by field. docs/PYTHON.md says where each
 * number comes from. */

/* A field of PythonLayout: its name and its offset in the struct (all fields are uint32_t). */
typedef struct PythonLayoutField {
        const char *name;
        size_t offset;
} PythonLayoutField;

extern const PythonLayoutField python_layout_fields[];
extern const size_t python_layout_n_fields;

/* The index of the field of this name in python_layout_fields, or -1. */
ssize_t python_layout_field_index(const char *name);

static inline uint32_t *python_layout_field(PythonLayout *l, size_t i)
{
        return (uint32_t *)((char *)l + python_layout_fields[i].offset);
}

static inline uint32_t python_layout_field_get(const PythonLayout *l, size_t i)
{
        return *(const uint32_t *)((const char *)l + python_layout_fields[i].offset);
}

typedef struct PythonVersionTable {
        unsigned minor;
        bool verified;          /* checked here against debug info and a live interpreter (3.11 only) */
        PythonLayout layout;    /* version_hex holds the minor's first release */
} PythonVersionTable;

/* The table of 3.minor, or NULL when vprof knows no layout of it. */
const PythonVersionTable *python_versions_lookup(unsigned minor);
