/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "elf-util.h"
#include "python-detect.h"
#include "python-layout.h"

/* CPython 3.13 publishes the offsets that debuggers and profilers need in _Py_DebugOffsets, the first member
 * of _PyRuntime, statically initialized: the file's data holds it. The 3.13 format is read (the cookie
 * "xdebugpy", the version, then groups of 64-bit numbers, each group led by its structure's size); each
 * offset must lie inside the size its group gives. 3.14 changed the format: not read. */

/* The fields of PythonLayout that p's _Py_DebugOffsets gives, set in *ret and flagged in found[] (indexed as
 * python_layout_fields): their number; -ENOENT when p is no 3.13 or its _PyRuntime holds no such table,
 * -EOPNOTSUPP for a free-threaded build (other object layouts), -EBADMSG when the table is not believable,
 * -EIO. */
int python_debug_offsets_read(ElfFile *f, const PythonInterpreter *p, PythonLayout *ret, bool *found);
