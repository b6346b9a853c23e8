/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf-util.h"

/* What the Python readers take from an interpreter's ELF file (opened with elf-util.h, so read bounded and
 * never mapped): named symbols of any type (the objects _PyRuntime and PyCode_Type, not only the functions
 * that elf-symbols.h keeps), and bytes or pointers of its static data by ELF virtual address. Everything is
 * the file's word: a caller checks what it makes of it. */

typedef struct PythonSymbol {
        const char *name; /* in: the exact name */
        uint64_t value;   /* out: st_value, the file's virtual address */
        uint64_t size;    /* out: st_size */
        bool found;       /* out: defined (not SHN_UNDEF) in a table looked at */
} PythonSymbol;

/* Look for the wanted symbols in f's .dynsym and .symtab (a symbol defined in either; the first definition
 * met wins). 0 on success, whatever was found; -EFBIG or -EIO when a table is beyond the bounds or the file
 * shrank, -ENOMEM. */
int python_elf_find_symbols(ElfFile *f, PythonSymbol *wanted, size_t n_wanted);

/* Whether f has a section of this name with contents (.debug_info, .symtab...). */
bool python_elf_has_section(ElfFile *f, const char *name);

/* The contents of the section of this name, at most max bytes: 0 and *ret_data, -ENOENT when there is none,
 * other errors as elf_file_section(). */
int python_elf_section(ElfFile *f, const char *name, uint64_t max, Elf_Data **ret_data);

/* size bytes of the file's image of virtual address vaddr (a PT_LOAD segment's file part): 0, -ENOENT when
 * no segment's file part holds all of them (.bss, an address of nothing), -EIO when the file shrank. */
int python_elf_read(ElfFile *f, uint64_t vaddr, void *buf, size_t size);

/* The pointer stored at vaddr as the loader would make it, as a virtual address of the file: for a
 * position-dependent executable the stored value; for a PIE or a library the addend of the R_*_RELATIVE
 * relocation at vaddr (RELA only). -EOPNOTSUPP when the pointer is not one the file alone determines (a
 * symbolic relocation, REL or RELR relocations, another machine than x86-64 or AArch64), -ENOENT, -EIO. */
int python_elf_read_pointer(ElfFile *f, uint64_t vaddr, uint64_t *ret);
