/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "inline-frames.h"
#include "macros.h"

/* Where code is written: the DWARF line table of an ELF file (libdw), for the SOURCE column of the function
 * tables. A reader keeps each file it opened until it is freed, so that the functions of one query share the
 * parse of their file's line tables; it is meant to live for one query, not to be cached. Without libdw at build
 * time every lookup answers -EOPNOTSUPP. */
typedef struct LineReader LineReader;

int line_reader_new(LineReader **ret);
LineReader *line_reader_free(LineReader *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(LineReader *, line_reader_free);

/* "FILE:LINE" (FILE as the line table names it, made absolute with the unit's compile directory when it is
 * relative) of the ELF virtual address vaddr of the file open at fd (the reader takes fd, also on failure;
 * a file it has open already, by device and inode, is not parsed again). -ENOENT when the file has no line for
 * vaddr (no DWARF: a stripped file), -ENOBUFS when buf is too small, -EOPNOTSUPP without libdw, -ENOMEM. */
int line_reader_lookup(LineReader *r, int fd, uint64_t vaddr, char *buf, size_t size);

/* The inlined functions at vaddr of the file open at fd (taken as by line_reader_lookup()), innermost first and
 * the function they were inlined into last (inline-frames.h), into frames[0..max): their number, 1 when vaddr is
 * in no inlined code. -ENOENT when the file's DWARF holds no function at vaddr (or it has no DWARF),
 * -EOPNOTSUPP without libdw, -ENOMEM, -E2BIG when the DWARF is past the walk's bounds. The names live as long as
 * the reader. */
int line_reader_inline(LineReader *r, int fd, uint64_t vaddr, InlineFrame *frames, size_t max);

/* The files the reader holds open, and their size in bytes: what libdw may map and read of them, a measure of
 * its memory (sections it decompresses take more). */
size_t line_reader_files(const LineReader *r);
uint64_t line_reader_bytes(const LineReader *r);
