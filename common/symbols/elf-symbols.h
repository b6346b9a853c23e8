/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* The function symbols of one ELF file (.symtab, else .dynsym), sorted by address, and its PT_LOAD segments
 * so that a file offset can be turned into an ELF virtual address. Pure: no /proc, no logging above debug.
 * A stripped file's symbols can be taken afterwards from a separate debug file or from its MiniDebugInfo;
 * the segments, and so the addresses, stay the file's own. */
typedef struct ElfSymbols ElfSymbols;

/* Where the function symbols came from. */
typedef enum ElfSymbolSource {
        ELF_SYMBOLS_NONE,          /* the file names no function */
        ELF_SYMBOLS_SYMTAB,        /* its own .symtab */
        ELF_SYMBOLS_DYNSYM,        /* its .dynsym: the exported functions only */
        ELF_SYMBOLS_MINIDEBUGINFO, /* the .symtab xz-compressed in .gnu_debugdata, with .dynsym */
        ELF_SYMBOLS_DEBUG_FILE,    /* the .symtab of a separate debug file */
} ElfSymbolSource;

/* Parse the ELF file open at fd (the fd is not kept), read as elf-util.h says: never mapped, every part
 * bounded. -ENOEXEC when it is not ELF, -EFBIG when a part of it is beyond the bounds (a symbol table of
 * 256 MiB, its names 512 MiB, too many headers...), -EIO when it changed while it was read (a damaged file:
 * truncated, rewritten in place). The same errors for the debug file and the MiniDebugInfo below. */
int elf_symbols_load_fd(int fd, ElfSymbols **ret);
int elf_symbols_load_path(const char *path, ElfSymbols **ret);

/* Virtual address (as in the ELF headers) of the byte at file_offset, using the PT_LOAD segment that
 * covers it. -ENOENT when no segment covers it. */
int elf_symbols_offset_to_vaddr(const ElfSymbols *e, uint64_t file_offset, uint64_t *ret_vaddr);

/* The function symbol containing vaddr: its name (owned by e) and vaddr - symbol start in *ret_offset.
 * NULL when none does. A symbol of size 0 covers up to the next symbol. */
const char *elf_symbols_lookup(const ElfSymbols *e, uint64_t vaddr, uint64_t *ret_offset);

/* Take the function symbols of the separate debug file open at fd (its .symtab) in place of e's. -ESTALE
 * when the build-ids of both differ, -ENOENT when the debug file has no function symbol, -ENOEXEC when it is
 * not ELF, -EFBIG, -EIO; e is unchanged then. */
int elf_symbols_use_debug_fd(ElfSymbols *e, int fd);

/* Take the symbols of the MiniDebugInfo of the file open at fd (the one e was loaded from), merged with its
 * .dynsym. -ENOENT when it has none or it names no function, -EBADMSG when it is corrupt, -EFBIG when it is
 * or decompresses to more than 256 MiB, -EIO when the file changed while it was read; e is unchanged
 * then. */
int elf_symbols_use_minidebuginfo(ElfSymbols *e, int fd);

ElfSymbolSource elf_symbols_source(const ElfSymbols *e);
/* The .gnu_debuglink name (a plain file name) and CRC of a file without .symtab functions; NULL when none. */
const char *elf_symbols_debuglink(const ElfSymbols *e, uint32_t *ret_crc);
/* Whether a file without .symtab functions has a .gnu_debugdata section. */
bool elf_symbols_has_minidebuginfo(const ElfSymbols *e);

size_t elf_symbols_count(const ElfSymbols *e);
/* Bytes held, for the symbol cache's budget. */
size_t elf_symbols_memory(const ElfSymbols *e);
bool elf_symbols_is_pie_or_dso(const ElfSymbols *e); /* ET_DYN */
/* Build-id as lowercase hex, or NULL when the file has no NT_GNU_BUILD_ID note. */
const char *elf_symbols_build_id(const ElfSymbols *e);

ElfSymbols *elf_symbols_free(ElfSymbols *e);
DEFINE_TRIVIAL_CLEANUP_FUNC(ElfSymbols *, elf_symbols_free);
