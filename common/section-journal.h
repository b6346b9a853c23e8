/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "section-file.h"

/* An append-only journal next to a snapshot file: what changed since the snapshot, one record at a time (the
 * daemon writes one a second), each checked on its own, so that a crash in the middle of a write costs only the
 * record being written. The layout is docs/STATE_FORMAT.md, "The crash journal".
 *
 * The header names the snapshot the journal continues: its generation (the snapshot says its own) and the
 * CRC of its header (section-file.h), so that a journal is never replayed onto another snapshot than its
 * own. What the sections of a record say is the writer's business (daemon/journal.h); they follow
 * section-file.h's rules.
 *
 * Reading stops at the first record that is cut short (the end of the file inside a record: a write the writer
 * did not finish) or damaged (checksum, size or sequence wrong): the records before it are good, nothing after it
 * is trusted. The reader is a pure function of the bytes, for fuzzing as much as for the daemon. */

#define SECTION_JOURNAL_MAGIC "VPROFJNL"
#define SECTION_JOURNAL_VERSION 1u
#define SECTION_JOURNAL_HEADER_SIZE 32
#define SECTION_JOURNAL_RECORD_HEADER_SIZE 8
/* The sequence and the time. */
#define SECTION_JOURNAL_PAYLOAD_MIN 16

typedef struct SectionJournalHeader {
        uint64_t generation;
        uint32_t snapshot_crc;
} SectionJournalHeader;

void section_journal_header(const SectionJournalHeader *h, uint8_t ret[SECTION_JOURNAL_HEADER_SIZE]);

/* A record in w (a bare writer, section_writer_init_bare(), emptied first): begin writes the framing and the
 * sequence and time, the caller its sections, finish fills in the size and the CRC. Returns w's sticky error. */
void section_journal_record_begin(SectionWriter *w, uint64_t sequence, uint64_t time_usec);
int section_journal_record_finish(SectionWriter *w);

typedef struct SectionJournalReader {
        const uint8_t *data;
        size_t size, offset;
        uint64_t sequence; /* of the last record read */
        const char **error;
        /* The error slot of the last record's sections: a record that does not parse costs only itself. */
        const char *record_error;
} SectionJournalReader;

typedef struct SectionJournalRecord {
        uint64_t sequence;
        uint64_t time_usec;
        size_t offset, size; /* of the whole record in the journal */
        SectionReader sections; /* its error slot is the reader's record_error, until the next record */
} SectionJournalRecord;

/* The header of the journal in data: -EMEDIUMTYPE not a journal, -EPROTONOSUPPORT a newer version, -EBADMSG
 * truncated or damaged; the reason in *error_slot, which must outlive the reader and the records' readers. */
int section_journal_open(const void *data, size_t size, const char **error_slot,
                         SectionJournalHeader *ret_header, SectionJournalReader *ret);

/* The next record: 1 and *ret, 0 at the end of a whole journal, -EBADMSG at a record cut short or damaged (the
 * reason in the error slot, its offset in j->offset; the reader stays there). */
int section_journal_next(SectionJournalReader *j, SectionJournalRecord *ret);
