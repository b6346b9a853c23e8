/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"

/* vprof's saved-state files: a checksummed header, then a list of tagged, length-prefixed sections, which may
 * nest. The layout, and the rules for adding to a file without breaking older readers (new data is a new
 * section; SECTION_REQUIRED when skipping it would mislead; never a field appended to a section, whose exact
 * size readers insist on), are docs/STATE_FORMAT.md, "Section files". */

#define SECTION_FILE_VERSION 1u
#define SECTION_MAGIC_SIZE 8
#define SECTION_FILE_HEADER_SIZE 32
/* Bigger files are refused before being read: a million functions with long names fit well below. */
#define SECTION_FILE_MAX ((size_t)1 << 30)
/* Function names can be long (C++ templates), but not this long: anything longer is corrupt. */
#define SECTION_STRING_MAX ((size_t)1 << 20)

/* A tag reads as its four letters in a hex dump. */
#define SECTION_TAG(a, b, c, d)                                                                             \
        ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

enum {
        SECTION_REQUIRED = 1u << 0, /* a reader that does not know the tag must refuse the file */
};

uint32_t section_crc32(uint32_t crc, const void *data, size_t size);

/* Writing: errors are sticky and reported by section_writer_finish(). */
typedef struct SectionWriter {
        uint8_t *data;
        size_t size, allocated;
        int error;
} SectionWriter;

void section_writer_init(SectionWriter *w, const char magic[SECTION_MAGIC_SIZE]);
void section_writer_done(SectionWriter *w); /* frees the buffer unless finished */
void section_write_u32(SectionWriter *w, uint32_t v);
void section_write_u64(SectionWriter *w, uint64_t v);
void section_write_string(SectionWriter *w, const char *s); /* NULL: no string */
/* Returns the offset to hand to section_end(); sections nest. */
size_t section_begin(SectionWriter *w, uint32_t tag, uint32_t flags);
void section_end(SectionWriter *w, size_t offset);
/* Fills in the header; the caller frees *ret. Leaves w empty. */
int section_writer_finish(SectionWriter *w, void **ret, size_t *ret_size, uint32_t *ret_crc);

/* Reading: every read is bounds-checked. The first problem is kept in the error slot the readers of a file
 * share; later reads yield zeros, so a parser can read a whole record and check once. */
typedef struct SectionReader {
        const uint8_t *p;
        size_t left;
        const char **error;
} SectionReader;

typedef struct Section {
        uint32_t tag;
        uint32_t flags;
        SectionReader contents;
} Section;

/* Checks the header (magic, version, size, CRC) and returns the payload's list of sections. -EMEDIUMTYPE:
 * not this kind of file; -EPROTONOSUPPORT: a newer version; -EFBIG: too big; -EBADMSG: truncated or corrupt.
 * The reason goes to *error_slot, which must outlive the readers. */
int section_file_open(const void *data, size_t size, const char magic[SECTION_MAGIC_SIZE],
                      const char **error_slot, SectionReader *ret);

/* Records the reason (if the first) and returns -EBADMSG. */
int section_fail(SectionReader *r, const char *reason);
bool section_failed(const SectionReader *r);
/* -EBADMSG unless the reader was used up exactly and without error. */
int section_check_end(SectionReader *r);

uint32_t section_read_u32(SectionReader *r);
uint64_t section_read_u64(SectionReader *r);
/* A string of at most max bytes before the NUL, pointing into the data; *ret NULL for "no string", which
 * only allow_null accepts. */
int section_read_string(SectionReader *r, size_t max, bool allow_null, const char **ret);
/* A u32 count of records of at least min_size bytes each, refused when they cannot fit in what is left. */
int section_read_count(SectionReader *r, size_t min_size, size_t *ret);

/* The next section of a list: 1 with *ret filled, 0 at the end, -EBADMSG when a header does not fit. */
int section_next(SectionReader *list, Section *ret);
/* For a section the caller does not know: 0 if it may be skipped, -EBADMSG if it is required. */
int section_skip(Section *s);
/* Every section of a list: the contents of the one tagged tags[i] into sections[i], seen[i] set; any other
 * skipped (section_skip()). A tag that comes twice fails the list with the reason twice. */
int section_gather(SectionReader *list, const uint32_t *tags, size_t n_tags, SectionReader *sections,
                   bool *seen, const char *twice);

/* Bare sections, without the file header: the records of a journal (section-journal.h), each checked by the
 * journal's own framing. The writer's data then starts with the first section; take it from w->data. */
void section_writer_init_bare(SectionWriter *w);
/* A reader of bare bytes (a list of sections, or a record's fields); the reason of a failure goes to *error_slot,
 * which is reset here and must outlive the reader. */
void section_reader_init(SectionReader *ret, const void *data, size_t size, const char **error_slot);
