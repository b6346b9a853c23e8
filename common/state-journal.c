/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "state-journal.h"

#define HEADER_CRC_OFFSET 28

static void put_le32(uint8_t *p, uint32_t v)
{
        v = htole32(v);
        memcpy(p, &v, sizeof(v));
}

static void put_le64(uint8_t *p, uint64_t v)
{
        v = htole64(v);
        memcpy(p, &v, sizeof(v));
}

static uint32_t get_le32(const uint8_t *p)
{
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return le32toh(v);
}

static uint64_t get_le64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return le64toh(v);
}

void state_journal_header(const StateJournalHeader *h, uint8_t ret[STATE_JOURNAL_HEADER_SIZE])
{
        memset(ret, 0, STATE_JOURNAL_HEADER_SIZE);
        memcpy(ret, STATE_JOURNAL_MAGIC, STATE_MAGIC_SIZE);
        put_le32(ret + 8, STATE_JOURNAL_VERSION);
        put_le64(ret + 16, h->generation);
        put_le32(ret + 24, h->snapshot_crc);
        put_le32(ret + HEADER_CRC_OFFSET, state_crc32(0, ret, HEADER_CRC_OFFSET));
}

void state_journal_record_begin(StateWriter *w, uint64_t sequence, uint64_t time_usec)
{
        state_write_u32(w, 0); /* the size and the CRC, at the end */
        state_write_u32(w, 0);
        state_write_u64(w, sequence);
        state_write_u64(w, time_usec);
}

int state_journal_record_finish(StateWriter *w)
{
        size_t payload;

        if (w->error < 0)
                return w->error;
        if (w->size < STATE_JOURNAL_RECORD_HEADER_SIZE + STATE_JOURNAL_PAYLOAD_MIN || w->size > UINT32_MAX)
                return -EINVAL;
        payload = w->size - STATE_JOURNAL_RECORD_HEADER_SIZE;
        put_le32(w->data, (uint32_t)payload);
        put_le32(w->data + 4, state_crc32(0, w->data + STATE_JOURNAL_RECORD_HEADER_SIZE, payload));
        return 0;
}

int state_journal_open(const void *data, size_t size, const char **error_slot, StateJournalHeader *ret_header,
                       StateJournalReader *ret)
{
        const uint8_t *h = data;

        *error_slot = NULL;
        if (size >= STATE_MAGIC_SIZE && memcmp(h, STATE_JOURNAL_MAGIC, STATE_MAGIC_SIZE) != 0) {
                *error_slot = "not a vprof journal";
                return -EMEDIUMTYPE;
        }
        if (size < STATE_JOURNAL_HEADER_SIZE) {
                *error_slot = "truncated header";
                return -EBADMSG;
        }
        if (get_le32(h + 8) > STATE_JOURNAL_VERSION) {
                *error_slot = "written by a newer vprof (a journal version this one does not read)";
                return -EPROTONOSUPPORT;
        }
        if (get_le32(h + 8) == 0 || get_le32(h + 12) != 0 ||
            get_le32(h + HEADER_CRC_OFFSET) != state_crc32(0, h, HEADER_CRC_OFFSET)) {
                *error_slot = "damaged header";
                return -EBADMSG;
        }
        *ret_header = (StateJournalHeader){ .generation = get_le64(h + 16), .snapshot_crc = get_le32(h + 24) };
        *ret = (StateJournalReader){
                .data = data, .size = size, .offset = STATE_JOURNAL_HEADER_SIZE, .error = error_slot,
        };
        return 0;
}

static int journal_fail(StateJournalReader *j, const char *reason)
{
        if (!*j->error)
                *j->error = reason;
        return -EBADMSG;
}

int state_journal_next(StateJournalReader *j, StateJournalRecord *ret)
{
        const uint8_t *p = j->data + j->offset;
        size_t left = j->size - j->offset;
        uint64_t sequence;
        uint32_t payload;

        if (*j->error)
                return -EBADMSG;
        if (left == 0)
                return 0;
        if (left < STATE_JOURNAL_RECORD_HEADER_SIZE)
                return journal_fail(j, "a record cut short at the end (a write that did not finish)");
        payload = get_le32(p);
        if (payload < STATE_JOURNAL_PAYLOAD_MIN)
                return journal_fail(j, "a damaged record (its size is too small)");
        if (payload > left - STATE_JOURNAL_RECORD_HEADER_SIZE)
                return journal_fail(j, "a record cut short at the end (a write that did not finish)");
        if (get_le32(p + 4) != state_crc32(0, p + STATE_JOURNAL_RECORD_HEADER_SIZE, payload))
                return journal_fail(j, "a damaged record (checksum mismatch)");
        sequence = get_le64(p + STATE_JOURNAL_RECORD_HEADER_SIZE);
        if (sequence != j->sequence + 1)
                return journal_fail(j, "a record out of sequence");

        *ret = (StateJournalRecord){
                .sequence = sequence,
                .time_usec = get_le64(p + STATE_JOURNAL_RECORD_HEADER_SIZE + 8),
                .offset = j->offset,
                .size = STATE_JOURNAL_RECORD_HEADER_SIZE + (size_t)payload,
        };
        state_reader_init(&ret->sections, p + STATE_JOURNAL_RECORD_HEADER_SIZE + STATE_JOURNAL_PAYLOAD_MIN,
                          payload - STATE_JOURNAL_PAYLOAD_MIN, &j->record_error);
        j->sequence = sequence;
        j->offset += ret->size;
        return 1;
}
