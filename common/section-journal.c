/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "section-journal.h"
#include "unaligned-le.h"

#define HEADER_CRC_OFFSET 28

void section_journal_header(const SectionJournalHeader *h, uint8_t ret[SECTION_JOURNAL_HEADER_SIZE])
{
        assert(h);
        assert(ret);

        memset(ret, 0, SECTION_JOURNAL_HEADER_SIZE);
        memcpy(ret, SECTION_JOURNAL_MAGIC, SECTION_MAGIC_SIZE);
        put_le32(ret + 8, SECTION_JOURNAL_VERSION);
        put_le64(ret + 16, h->generation);
        put_le32(ret + 24, h->snapshot_crc);
        put_le32(ret + HEADER_CRC_OFFSET, section_crc32(0, ret, HEADER_CRC_OFFSET));
}

void section_journal_record_begin(SectionWriter *w, uint64_t sequence, uint64_t time_usec)
{
        assert(w);

        section_write_u32(w, 0); /* the size and the CRC, at the end */
        section_write_u32(w, 0);
        section_write_u64(w, sequence);
        section_write_u64(w, time_usec);
}

int section_journal_record_finish(SectionWriter *w)
{
        size_t payload;

        assert(w);

        if (w->error < 0)
                return w->error;
        if (w->size < SECTION_JOURNAL_RECORD_HEADER_SIZE + SECTION_JOURNAL_PAYLOAD_MIN ||
            w->size > UINT32_MAX)
                return -EINVAL;
        payload = w->size - SECTION_JOURNAL_RECORD_HEADER_SIZE;
        put_le32(w->data, (uint32_t)payload);
        put_le32(w->data + 4, section_crc32(0, w->data + SECTION_JOURNAL_RECORD_HEADER_SIZE, payload));
        return 0;
}

int section_journal_open(const void *data, size_t size, const char **error_slot,
                         SectionJournalHeader *ret_header, SectionJournalReader *ret)
{
        const uint8_t *h = data;

        assert(data || size == 0);
        assert(error_slot);
        assert(ret_header);
        assert(ret);

        *error_slot = NULL;
        if (size >= SECTION_MAGIC_SIZE && memcmp(h, SECTION_JOURNAL_MAGIC, SECTION_MAGIC_SIZE) != 0) {
                *error_slot = "not a vprof journal";
                return -EMEDIUMTYPE;
        }
        if (size < SECTION_JOURNAL_HEADER_SIZE) {
                *error_slot = "truncated header";
                return -EBADMSG;
        }
        if (get_le32(h + 8) > SECTION_JOURNAL_VERSION) {
                *error_slot = "written by a newer vprof (a journal version this one does not read)";
                return -EPROTONOSUPPORT;
        }
        if (get_le32(h + 8) == 0 || get_le32(h + 12) != 0 ||
            get_le32(h + HEADER_CRC_OFFSET) != section_crc32(0, h, HEADER_CRC_OFFSET)) {
                *error_slot = "damaged header";
                return -EBADMSG;
        }
        *ret_header = (SectionJournalHeader){ .generation = get_le64(h + 16),
                                              .snapshot_crc = get_le32(h + 24) };
        *ret = (SectionJournalReader){
                .data = data, .size = size, .offset = SECTION_JOURNAL_HEADER_SIZE, .error = error_slot,
        };
        return 0;
}

static int journal_fail(SectionJournalReader *j, const char *reason)
{
        if (!*j->error)
                *j->error = reason;
        return -EBADMSG;
}

int section_journal_next(SectionJournalReader *j, SectionJournalRecord *ret)
{
        const uint8_t *p;
        uint64_t sequence;
        uint32_t payload;
        size_t left;

        assert(j);
        assert(ret);

        p = j->data + j->offset;
        left = j->size - j->offset;
        if (*j->error)
                return -EBADMSG;
        if (left == 0)
                return 0;
        if (left < SECTION_JOURNAL_RECORD_HEADER_SIZE)
                return journal_fail(j, "a record cut short at the end (a write that did not finish)");
        payload = get_le32(p);
        if (payload < SECTION_JOURNAL_PAYLOAD_MIN)
                return journal_fail(j, "a damaged record (its size is too small)");
        if (payload > left - SECTION_JOURNAL_RECORD_HEADER_SIZE)
                return journal_fail(j, "a record cut short at the end (a write that did not finish)");
        if (get_le32(p + 4) != section_crc32(0, p + SECTION_JOURNAL_RECORD_HEADER_SIZE, payload))
                return journal_fail(j, "a damaged record (checksum mismatch)");
        sequence = get_le64(p + SECTION_JOURNAL_RECORD_HEADER_SIZE);
        if (sequence != j->sequence + 1)
                return journal_fail(j, "a record out of sequence");

        *ret = (SectionJournalRecord){
                .sequence = sequence,
                .time_usec = get_le64(p + SECTION_JOURNAL_RECORD_HEADER_SIZE + 8),
                .offset = j->offset,
                .size = SECTION_JOURNAL_RECORD_HEADER_SIZE + (size_t)payload,
        };
        section_reader_init(&ret->sections,
                            p + SECTION_JOURNAL_RECORD_HEADER_SIZE + SECTION_JOURNAL_PAYLOAD_MIN,
                            payload - SECTION_JOURNAL_PAYLOAD_MIN, &j->record_error);
        j->sequence = sequence;
        j->offset += ret->size;
        return 1;
}
