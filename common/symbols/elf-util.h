/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "macros.h"

/* Reading an ELF file of a target with libelf, shared by the readers of symbols and of CFI.
 *
 * Whoever may write the file may change it while we read it, and it must not cost the daemon more than the
 * file's names. libelf never sees the file itself: it parses a private image (elf_memory()) of the file's
 * size, an anonymous mapping in which only the parts asked for are read, with pread(). A shared mapping of
 * the file, libelf's ELF_C_READ_MMAP, raised SIGBUS at the first read past the end of a file truncated
 * meanwhile, and with ELF_C_READ libelf reads the headers itself after any check of ours (a header rewritten
 * in between asks for as many section descriptors as the file size allows, gigabytes for a sparse file).
 * Here:
 *  - the header and the section and program header tables are read once, checked (at most ELF_HEADERS_MAX
 *    of each), and what libelf parses is that copy;
 *  - a section or range is read into the image when a reader asks for it, at most as many bytes as the
 *    reader allows (-EFBIG past that), before libelf hands out its contents;
 *  - a read that comes up short means the file shrank since it was opened: -EIO, the file is damaged;
 *  - elf_file_check() says whether the file changed at all (size, times, inode) since it was opened, for the
 *    reader to drop what it made of a file that may now be a mix of two (-EIO too).
 * Untouched pages of the image read as zeros and cost nothing. */

/* The most sections or program headers a file may have: linked programs have a few dozen. */
#define ELF_HEADERS_MAX 65536u
/* The largest file size that gets an image: address space, not memory, but bounded all the same. */
#define ELF_FILE_MAX (UINT64_C(64) << 30)
/* Section names (.shstrtab): a few hundred bytes in practice. */
#define ELF_SECTION_NAMES_MAX (UINT64_C(16) << 20)

typedef struct ElfFile {
        Elf *elf;
        GElf_Ehdr ehdr;
        int fd;          /* not owned; -1 for an image in memory already (elf_file_memory()) */
        uint8_t *image;  /* mapped here for a file, the caller's for elf_file_memory() */
        size_t size;
        bool *loaded;    /* per section index: read into the image */
        size_t n_loaded;
        struct stat st;  /* the file when it was opened */
} ElfFile;

/* The ELF file open at fd (which must stay open while f lives): -ENOEXEC when it is not a regular ELF file,
 * -EFBIG when it has too many headers or is too large, -EIO when it shrank while its headers were read,
 * -EOPNOTSUPP when libelf cannot be initialized. */
int elf_file_open(int fd, ElfFile **ret);
/* An ELF image already in memory (decompressed MiniDebugInfo): image must outlive f. -ENOEXEC when not
 * ELF. */
int elf_file_memory(void *image, size_t size, ElfFile **ret);
ElfFile *elf_file_free(ElfFile *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(ElfFile *, elf_file_free);

/* The contents of scn, read into the image first: elf_getdata(), or elf_rawdata() with raw. -ENODATA when
 * the section has none (SHT_NOBITS, size 0), -EFBIG when it has more than max bytes, -EIO when the file is
 * shorter now, -EBADMSG when libelf cannot make sense of it. */
int elf_file_section(ElfFile *f, Elf_Scn *scn, uint64_t max, bool raw, Elf_Data **ret);
/* Read the string table of section index ndx into the image, so that elf_strptr() may look into it: errors
 * as elf_file_section(); -EBADMSG when it is no string table or a compressed one (libelf would inflate it to
 * whatever size its header claims). */
int elf_file_strings(ElfFile *f, size_t ndx, uint64_t max);
/* The section names, read (at most ELF_SECTION_NAMES_MAX) so that elf_strptr() may look into them: 1 and
 * *ret_shstrndx, 0 when the file has no readable ones, -EIO when it shrank. */
int elf_file_section_names(ElfFile *f, size_t *ret_shstrndx);
/* elf_getdata_rawchunk() of bytes the file has at offset, read into the image first. Errors as
 * elf_file_section(). */
int elf_file_chunk(ElfFile *f, uint64_t offset, uint64_t size, Elf_Type type, uint64_t max, Elf_Data **ret);

/* 0 when the file is as it was when opened (always for an image in memory), -EIO when it changed since or
 * cannot be looked at: what was read of it may be a mix of two files. */
int elf_file_check(const ElfFile *f);
