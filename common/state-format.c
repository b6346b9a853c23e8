/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "state-format.h"

#define HEADER_CRC_OFFSET 24
#define SECTION_HEADER_SIZE 16

uint32_t state_crc32(uint32_t crc, const void *data, size_t size)
{
        static uint32_t table[256];
        const uint8_t *p = data;

        /* The daemon is single-threaded, and the table comes out the same if two threads race on it. */
        if (table[1] == 0)
                for (uint32_t i = 0; i < 256; i++) {
                        uint32_t c = i;
                        for (int k = 0; k < 8; k++)
                                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
                        table[i] = c;
                }
        crc = ~crc;
        for (size_t i = 0; i < size; i++)
                crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
        return ~crc;
}

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

/* Room for n more bytes; NULL (and the error recorded) when there is none. */
static uint8_t *writer_extend(StateWriter *w, size_t n)
{
        uint8_t *p;

        if (w->error)
                return NULL;
        if (n > STATE_FILE_MAX - w->size) {
                w->error = -EFBIG;
                return NULL;
        }
        if (w->size + n > w->allocated) {
                size_t a = MAX(w->allocated * 2, MAX(w->size + n, (size_t)4096));
                p = realloc(w->data, a);
                if (!p) {
                        w->error = -ENOMEM;
                        return NULL;
                }
                w->data = p;
                w->allocated = a;
        }
        p = w->data + w->size;
        w->size += n;
        return p;
}

void state_writer_init(StateWriter *w, const char magic[STATE_MAGIC_SIZE])
{
        uint8_t *h;

        *w = (StateWriter){};
        h = writer_extend(w, STATE_HEADER_SIZE);
        if (!h)
                return;
        memset(h, 0, STATE_HEADER_SIZE);
        memcpy(h, magic, STATE_MAGIC_SIZE);
        put_le32(h + 8, STATE_FORMAT_VERSION);
}

void state_writer_init_bare(StateWriter *w)
{
        *w = (StateWriter){};
}

void state_reader_init(StateReader *ret, const void *data, size_t size, const char **error_slot)
{
        *error_slot = NULL;
        *ret = (StateReader){ .p = data, .left = size, .error = error_slot };
}

void state_writer_done(StateWriter *w)
{
        free(w->data);
        *w = (StateWriter){};
}

void state_write_u32(StateWriter *w, uint32_t v)
{
        uint8_t *p = writer_extend(w, sizeof(v));
        if (p)
                put_le32(p, v);
}

void state_write_u64(StateWriter *w, uint64_t v)
{
        uint8_t *p = writer_extend(w, sizeof(v));
        if (p)
                put_le64(p, v);
}

void state_write_string(StateWriter *w, const char *s)
{
        size_t n = s ? strlen(s) + 1 : 0;
        uint8_t *p;

        if (n > STATE_STRING_MAX + 1) {
                /* Never written, so that the file stays readable; the caller learns at finish. */
                if (!w->error)
                        w->error = -E2BIG;
                return;
        }
        state_write_u32(w, (uint32_t)n);
        if (n == 0)
                return;
        p = writer_extend(w, n);
        if (p)
                memcpy(p, s, n);
}

size_t state_begin_section(StateWriter *w, uint32_t tag, uint32_t flags)
{
        size_t offset = w->size;

        state_write_u32(w, tag);
        state_write_u32(w, flags);
        state_write_u64(w, 0); /* the size, filled in by state_end_section() */
        return offset;
}

void state_end_section(StateWriter *w, size_t offset)
{
        if (w->error)
                return;
        put_le64(w->data + offset + 8, w->size - offset - SECTION_HEADER_SIZE);
}

int state_writer_finish(StateWriter *w, void **ret, size_t *ret_size, uint32_t *ret_crc)
{
        uint32_t crc;
        int r = w->error;

        if (r < 0) {
                state_writer_done(w);
                return r;
        }
        put_le64(w->data + 16, w->size - STATE_HEADER_SIZE);
        crc = state_crc32(0, w->data, HEADER_CRC_OFFSET);
        crc = state_crc32(crc, w->data + STATE_HEADER_SIZE, w->size - STATE_HEADER_SIZE);
        put_le32(w->data + HEADER_CRC_OFFSET, crc);
        *ret = w->data;
        *ret_size = w->size;
        if (ret_crc)
                *ret_crc = crc;
        *w = (StateWriter){};
        return 0;
}

int state_fail(StateReader *r, const char *reason)
{
        if (!*r->error)
                *r->error = reason;
        r->left = 0;
        return -EBADMSG;
}

bool state_failed(const StateReader *r)
{
        return *r->error != NULL;
}

int state_check_end(StateReader *r)
{
        if (state_failed(r))
                return -EBADMSG;
        if (r->left > 0)
                return state_fail(r, "unexpected bytes at the end of a section");
        return 0;
}

int state_open(const void *data, size_t size, const char magic[STATE_MAGIC_SIZE], const char **error_slot,
               StateReader *ret)
{
        const uint8_t *h = data;
        uint64_t payload;
        uint32_t version, crc;

        *error_slot = NULL;
        if (size >= STATE_MAGIC_SIZE && memcmp(h, magic, STATE_MAGIC_SIZE) != 0) {
                *error_slot = "not a vprof state file of this kind";
                return -EMEDIUMTYPE;
        }
        if (size < STATE_HEADER_SIZE) {
                *error_slot = "truncated header";
                return -EBADMSG;
        }
        /* The version before anything else: a newer file may have another layout after it. */
        version = get_le32(h + 8);
        if (version > STATE_FORMAT_VERSION) {
                *error_slot = "written by a newer vprof (a format version this one does not read)";
                return -EPROTONOSUPPORT;
        }
        if (version == 0 || get_le32(h + 12) != 0 || get_le32(h + 28) != 0) {
                *error_slot = "corrupt header";
                return -EBADMSG;
        }
        payload = get_le64(h + 16);
        if (payload > STATE_FILE_MAX - STATE_HEADER_SIZE || size > STATE_FILE_MAX) {
                *error_slot = "larger than the limit of 1 GiB";
                return -EFBIG;
        }
        if (payload != size - STATE_HEADER_SIZE) {
                bool short_file = payload > size - STATE_HEADER_SIZE;
                *error_slot = short_file ? "truncated" : "trailing bytes after the payload";
                return -EBADMSG;
        }
        crc = state_crc32(0, h, HEADER_CRC_OFFSET);
        crc = state_crc32(crc, h + STATE_HEADER_SIZE, payload);
        if (crc != get_le32(h + HEADER_CRC_OFFSET)) {
                *error_slot = "checksum mismatch";
                return -EBADMSG;
        }
        *ret = (StateReader){ .p = h + STATE_HEADER_SIZE, .left = payload, .error = error_slot };
        return 0;
}

static const uint8_t *reader_take(StateReader *r, size_t n)
{
        const uint8_t *p;

        if (state_failed(r))
                return NULL;
        if (n > r->left) {
                state_fail(r, "truncated section");
                return NULL;
        }
        p = r->p;
        r->p += n;
        r->left -= n;
        return p;
}

uint32_t state_read_u32(StateReader *r)
{
        const uint8_t *p = reader_take(r, sizeof(uint32_t));
        return p ? get_le32(p) : 0;
}

uint64_t state_read_u64(StateReader *r)
{
        const uint8_t *p = reader_take(r, sizeof(uint64_t));
        return p ? get_le64(p) : 0;
}

int state_read_string(StateReader *r, size_t max, bool allow_null, const char **ret)
{
        uint32_t n = state_read_u32(r);
        const uint8_t *p;

        if (state_failed(r))
                return -EBADMSG;
        if (n == 0) {
                if (!allow_null)
                        return state_fail(r, "missing string");
                *ret = NULL;
                return 0;
        }
        if (n - 1 > max)
                return state_fail(r, "string too long");
        p = reader_take(r, n);
        if (!p)
                return -EBADMSG;
        /* NUL-terminated, and nothing cut short by an earlier NUL. */
        if (p[n - 1] != '\0' || memchr(p, '\0', n - 1))
                return state_fail(r, "malformed string");
        *ret = (const char *)p;
        return 0;
}

int state_read_count(StateReader *r, size_t min_size, size_t *ret)
{
        uint32_t n = state_read_u32(r);

        if (state_failed(r))
                return -EBADMSG;
        if (min_size > 0 && n > r->left / min_size)
                return state_fail(r, "more records than the section holds");
        *ret = n;
        return 0;
}

int state_next_section(StateReader *list, StateSection *ret)
{
        uint64_t size;
        const uint8_t *p;

        if (state_failed(list))
                return -EBADMSG;
        if (list->left == 0)
                return 0;
        ret->tag = state_read_u32(list);
        ret->flags = state_read_u32(list);
        size = state_read_u64(list);
        if (state_failed(list))
                return -EBADMSG;
        if (size > list->left)
                return state_fail(list, "section larger than what holds it");
        p = reader_take(list, (size_t)size);
        ret->contents = (StateReader){ .p = p, .left = (size_t)size, .error = list->error };
        return 1;
}

int state_skip_section(StateSection *s)
{
        if (s->flags & STATE_SECTION_REQUIRED)
                return state_fail(&s->contents, "a section this vprof does not know is required");
        return 0;
}
