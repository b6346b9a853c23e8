/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libelf.h>
#include <stdbool.h>

/* libdw (0.188) reads the strings of .debug_str and .debug_line_str with strlen(): a section whose last string
 * runs to its end would be read past it. Whether every such section of elf ends in a NUL: to be asked after
 * dwarf_begin_elf(), which decompresses the sections in place, so that the bytes seen are the ones libdw reads;
 * a file that fails it is read as if it had no DWARF. Shared by the line reader and the Python layout reader. */
bool dwarf_strings_terminated(Elf *elf);
