/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "section-file.h"
#include "unaligned-le.h"

#define HEADER_CRC_OFFSET 24
#define SECTION_HEADER_SIZE 16

uint32_t section_crc32(uint32_t crc, const void *data, size_t size)
{
        static uint32_t table[256];
        const uint8_t *p = data;

        assert(data || size == 0);

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

/* Room for n more bytes; NULL (and the error recorded) when there is none. */
static uint8_t *writer_extend(SectionWriter *w, size_t n)
{
        uint8_t *p;

        if (w->error)
                return NULL;
        if (n > SECTION_FILE_MAX - w->size) {
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

void section_writer_init(SectionWriter *w, const char magic[SECTION_MAGIC_SIZE])
{
        uint8_t *h;

        assert(w);
        assert(magic);

        *w = (SectionWriter){};
        h = writer_extend(w, SECTION_FILE_HEADER_SIZE);
        if (!h)
                return;
        memset(h, 0, SECTION_FILE_HEADER_SIZE);
        memcpy(h, magic, SECTION_MAGIC_SIZE);
        put_le32(h + 8, SECTION_FILE_VERSION);
}

void section_writer_init_bare(SectionWriter *w)
{
        assert(w);

        *w = (SectionWriter){};
}

void section_reader_init(SectionReader *ret, const void *data, size_t size, const char **error_slot)
{
        assert(ret);
        assert(data || size == 0);
        assert(error_slot);

        *error_slot = NULL;
        *ret = (SectionReader){ .p = data, .left = size, .error = error_slot };
}

void section_writer_done(SectionWriter *w)
{
        assert(w);

        free(w->data);
        *w = (SectionWriter){};
}

void section_write_u32(SectionWriter *w, uint32_t v)
{
        uint8_t *p = writer_extend(w, sizeof(v));
        if (p)
                put_le32(p, v);
}

void section_write_u64(SectionWriter *w, uint64_t v)
{
        uint8_t *p = writer_extend(w, sizeof(v));
        if (p)
                put_le64(p, v);
}

void section_write_string(SectionWriter *w, const char *s)
{
        size_t n = s ? strlen(s) + 1 : 0;
        uint8_t *p;

        assert(w);

        if (n > SECTION_STRING_MAX + 1) {
                /* Never written, so that the file stays readable; the caller learns at finish. */
                if (!w->error)
                        w->error = -E2BIG;
                return;
        }
        section_write_u32(w, (uint32_t)n);
        if (n == 0)
                return;
        p = writer_extend(w, n);
        if (p)
                memcpy(p, s, n);
}

size_t section_begin(SectionWriter *w, uint32_t tag, uint32_t flags)
{
        size_t offset;

        assert(w);

        offset = w->size;
        section_write_u32(w, tag);
        section_write_u32(w, flags);
        section_write_u64(w, 0); /* the size, filled in by section_end() */
        return offset;
}

void section_end(SectionWriter *w, size_t offset)
{
        assert(w);

        if (w->error)
                return;
        put_le64(w->data + offset + 8, w->size - offset - SECTION_HEADER_SIZE);
}

int section_writer_finish(SectionWriter *w, void **ret, size_t *ret_size, uint32_t *ret_crc)
{
        uint32_t crc;
        int r;

        assert(w);
        assert(ret);
        assert(ret_size);

        r = w->error;
        if (r < 0) {
                section_writer_done(w);
                return r;
        }
        put_le64(w->data + 16, w->size - SECTION_FILE_HEADER_SIZE);
        crc = section_crc32(0, w->data, HEADER_CRC_OFFSET);
        crc = section_crc32(crc, w->data + SECTION_FILE_HEADER_SIZE, w->size - SECTION_FILE_HEADER_SIZE);
        put_le32(w->data + HEADER_CRC_OFFSET, crc);
        *ret = w->data;
        *ret_size = w->size;
        if (ret_crc)
                *ret_crc = crc;
        *w = (SectionWriter){};
        return 0;
}

int section_fail(SectionReader *r, const char *reason)
{
        assert(r);
        assert(reason);

        if (!*r->error)
                *r->error = reason;
        r->left = 0;
        return -EBADMSG;
}

bool section_failed(const SectionReader *r)
{
        assert(r);

        return *r->error != NULL;
}

int section_check_end(SectionReader *r)
{
        assert(r);

        if (section_failed(r))
                return -EBADMSG;
        if (r->left > 0)
                return section_fail(r, "unexpected bytes at the end of a section");
        return 0;
}

int section_file_open(const void *data, size_t size, const char magic[SECTION_MAGIC_SIZE],
                      const char **error_slot, SectionReader *ret)
{
        const uint8_t *h = data;
        uint64_t payload;
        uint32_t version, crc;

        assert(data || size == 0);
        assert(magic);
        assert(error_slot);
        assert(ret);

        *error_slot = NULL;
        if (size >= SECTION_MAGIC_SIZE && memcmp(h, magic, SECTION_MAGIC_SIZE) != 0) {
                *error_slot = "not a vprof state file of this kind";
                return -EMEDIUMTYPE;
        }
        if (size < SECTION_FILE_HEADER_SIZE) {
                *error_slot = "truncated header";
                return -EBADMSG;
        }
        /* The version before anything else: a newer file may have another layout after it. */
        version = get_le32(h + 8);
        if (version > SECTION_FILE_VERSION) {
                *error_slot = "written by a newer vprof (a format version this one does not read)";
                return -EPROTONOSUPPORT;
        }
        if (version == 0 || get_le32(h + 12) != 0 || get_le32(h + 28) != 0) {
                *error_slot = "corrupt header";
                return -EBADMSG;
        }
        payload = get_le64(h + 16);
        if (payload > SECTION_FILE_MAX - SECTION_FILE_HEADER_SIZE || size > SECTION_FILE_MAX) {
                *error_slot = "larger than the limit of 1 GiB";
                return -EFBIG;
        }
        if (payload != size - SECTION_FILE_HEADER_SIZE) {
                bool short_file = payload > size - SECTION_FILE_HEADER_SIZE;
                *error_slot = short_file ? "truncated" : "trailing bytes after the payload";
                return -EBADMSG;
        }
        crc = section_crc32(0, h, HEADER_CRC_OFFSET);
        crc = section_crc32(crc, h + SECTION_FILE_HEADER_SIZE, payload);
        if (crc != get_le32(h + HEADER_CRC_OFFSET)) {
                *error_slot = "checksum mismatch";
                return -EBADMSG;
        }
        *ret = (SectionReader){ .p = h + SECTION_FILE_HEADER_SIZE, .left = payload, .error = error_slot };
        return 0;
}

static const uint8_t *reader_take(SectionReader *r, size_t n)
{
        const uint8_t *p;

        if (section_failed(r))
                return NULL;
        if (n > r->left) {
                section_fail(r, "truncated section");
                return NULL;
        }
        p = r->p;
        r->p += n;
        r->left -= n;
        return p;
}

uint32_t section_read_u32(SectionReader *r)
{
        const uint8_t *p = reader_take(r, sizeof(uint32_t));
        return p ? get_le32(p) : 0;
}

uint64_t section_read_u64(SectionReader *r)
{
        const uint8_t *p = reader_take(r, sizeof(uint64_t));
        return p ? get_le64(p) : 0;
}

int section_read_string(SectionReader *r, size_t max, bool allow_null, const char **ret)
{
        const uint8_t *p;
        uint32_t n;

        assert(r);
        assert(ret);

        n = section_read_u32(r);
        if (section_failed(r))
                return -EBADMSG;
        if (n == 0) {
                if (!allow_null)
                        return section_fail(r, "missing string");
                *ret = NULL;
                return 0;
        }
        if (n - 1 > max)
                return section_fail(r, "string too long");
        p = reader_take(r, n);
        if (!p)
                return -EBADMSG;
        /* NUL-terminated, and nothing cut short by an earlier NUL. */
        if (p[n - 1] != '\0' || memchr(p, '\0', n - 1))
                return section_fail(r, "malformed string");
        *ret = (const char *)p;
        return 0;
}

int section_read_count(SectionReader *r, size_t min_size, size_t *ret)
{
        uint32_t n;

        assert(r);
        assert(ret);

        n = section_read_u32(r);
        if (section_failed(r))
                return -EBADMSG;
        if (min_size > 0 && n > r->left / min_size)
                return section_fail(r, "more records than the section holds");
        *ret = n;
        return 0;
}

int section_next(SectionReader *list, Section *ret)
{
        uint64_t size;
        const uint8_t *p;

        assert(list);
        assert(ret);

        if (section_failed(list))
                return -EBADMSG;
        if (list->left == 0)
                return 0;
        ret->tag = section_read_u32(list);
        ret->flags = section_read_u32(list);
        size = section_read_u64(list);
        if (section_failed(list))
                return -EBADMSG;
        if (size > list->left)
                return section_fail(list, "section larger than what holds it");
        p = reader_take(list, (size_t)size);
        ret->contents = (SectionReader){ .p = p, .left = (size_t)size, .error = list->error };
        return 1;
}

int section_skip(Section *s)
{
        assert(s);

        if (s->flags & SECTION_REQUIRED)
                return section_fail(&s->contents, "a section this vprof does not know is required");
        return 0;
}

int section_gather(SectionReader *list, const uint32_t *tags, size_t n_tags, SectionReader *sections,
                   bool *seen, const char *twice)
{
        Section s;
        int k;

        assert(list);
        assert(tags);
        assert(sections);
        assert(seen);

        while ((k = section_next(list, &s)) > 0) {
                size_t i = 0;

                while (i < n_tags && tags[i] != s.tag)
                        i++;
                if (i == n_tags) {
                        k = section_skip(&s);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (seen[i])
                        return section_fail(list, twice);
                seen[i] = true;
                sections[i] = s.contents;
        }
        return k;
}
