/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "python-layout.h"

/* PythonLayout from an interpreter's DWARF (its own .debug_info, or the python3.X-dbg file found by
 * build-id): the byte offsets of the members that the layout names (DW_TAG_member's
 * DW_AT_data_member_location, through nested structures for gilstate.autoTSSkey._key), and the sizes of
 * PyASCIIObject and PyCompactUnicodeObject. The DWARF is the file's word: each offset is bounded by its
 * structure's size. */

/* Read the DWARF of the ELF file open at fd (not kept) for an interpreter of version_hex. Fields it finds
 * are set in *ret and flagged in found[] (indexed as python_layout_fields); the others are left as they
 * were. The number of fields found, or -ENODATA when the file has no usable DWARF (none, unterminated
 * strings), -EOPNOTSUPP when vprof was built without libdw, -ENOMEM. */
int python_dwarf_layout(int fd, uint32_t version_hex, PythonLayout *ret, bool *found);
