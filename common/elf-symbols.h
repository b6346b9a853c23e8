/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* The function symbols of one ELF file (.symtab, else .dynsym), sorted by address, and its PT_LOAD segments
 * so that a file offset can be turned into an ELF virtual address. Pure: no /proc, no logging above debug. */
typedef struct ElfSymbols ElfSymbols;

/* Parse the ELF file open at fd (the fd is not kept). -ENOEXEC when it is not ELF. */
int elf_symbols_load_fd(int fd, ElfSymbols **ret);
int elf_symbols_load_path(const char *path, ElfSymbols **ret);

/* Virtual address (as in the ELF headers) of the byte at file_offset, using the PT_LOAD segment that
 * covers it. -ENOENT when no segment covers it. */
int elf_symbols_offset_to_vaddr(const ElfSymbols *e, uint64_t file_offset, uint64_t *ret_vaddr);

/* The function symbol containing vaddr: its name (owned by e) and vaddr - symbol start in *ret_offset.
 * NULL when none does. A symbol of size 0 covers up to the next symbol. */
const char *elf_symbols_lookup(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_offset);

size_t elf_symbols_count(const ElfSymbols *e);
/* Bytes held, for the symbol cache's budget. */
size_t elf_symbols_memory(const ElfSymbols *e);
bool elf_symbols_is_pie_or_dso(const ElfSymbols *e); /* ET_DYN */
/* Build-id as lowercase hex, or NULL when the file has no NT_GNU_BUILD_ID note. */
const char *elf_symbols_build_id(const ElfSymbols *e);

ElfSymbols *elf_symbols_free(ElfSymbols *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(ElfSymbols *, elf_symbols_free);
