/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "elf-util.h"

/* The contents of a section of a file read as elf-util.h says, inflated when the section is compressed, as
 * the .debug_* sections of debug files often are (objcopy --compress-debug-sections, Debian's dh_strip):
 * ELF's SHF_COMPRESSED (zlib; zstd when libelf knows it), or the older GNU form, a .zdebug_* section that
 * starts with "ZLIB" and the size (gnu). libelf inflates it into a buffer of the size the header claims:
 * that size is checked against max first, as the compressed bytes are. -EFBIG beyond max; -EBADMSG for a
 * header or stream that libelf refuses, or a compression it does not know; else the errors of
 * elf_file_section(). The data stays libelf's, valid while f lives. */
int compressed_section_read(ElfFile *f, Elf_Scn *scn, bool gnu, uint64_t max, Elf_Data **ret);
