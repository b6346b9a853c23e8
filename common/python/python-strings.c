/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "python-strings.h"
#include "utf8.h"

/* The state bit field of PyASCIIObject, 3.3 to 3.13: interned:2, kind:3, compact:1, ascii:1, then others. */
#define STATE_KIND(s) (((s) >> 2) & 7u)
#define STATE_COMPACT(s) (((s) >> 5) & 1u)
#define STATE_ASCII(s) (((s) >> 6) & 1u)

/* Bytes a copied header of a str or bytes object holds: enough for every field read from it. */
#define OBJECT_HEADER_MAX 128u

int python_field_u64(const uint8_t *header, size_t size, uint32_t offset, uint64_t *ret)
{
        if (offset == PYTHON_LAYOUT_NONE || offset > size || size - offset < sizeof(uint64_t))
                return -EINVAL;
        memcpy(ret, header + offset, sizeof(uint64_t));
        return 0;
}

int python_field_u32(const uint8_t *header, size_t size, uint32_t offset, uint32_t *ret)
{
        if (offset == PYTHON_LAYOUT_NONE || offset > size || size - offset < sizeof(uint32_t))
                return -EINVAL;
        memcpy(ret, header + offset, sizeof(uint32_t));
        return 0;
}

static uint32_t code_point_at(const uint8_t *data, size_t i, unsigned kind)
{
        uint16_t u16;
        uint32_t u32;

        switch (kind) {
        case PYTHON_UNICODE_1BYTE:
                return data[i];
        case PYTHON_UNICODE_2BYTE:
                memcpy(&u16, data + 2 * i, sizeof(u16));
                return u16;
        default:
                memcpy(&u32, data + 4 * i, sizeof(u32));
                return u32;
        }
}

/* One code point in UTF-8, or in Python's backslashreplace form when UTF-8 cannot carry it: bytes written (at
 * most 10). */
static size_t put_code_point(uint32_t c, char *out)
{
        if (c == 0)
                return (size_t)sprintf(out, "\\x00"); /* a NUL would cut the name short */
        if (c < 0x80) {
                out[0] = (char)c;
                return 1;
        }
        if (c < 0x800) {
                out[0] = (char)(0xc0 | (c >> 6));
                out[1] = (char)(0x80 | (c & 0x3f));
                return 2;
        }
        if (c >= 0xd800 && c <= 0xdfff)
                return (size_t)sprintf(out, "\\u%04x", c);
        if (c < 0x10000) {
                out[0] = (char)(0xe0 | (c >> 12));
                out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
                out[2] = (char)(0x80 | (c & 0x3f));
                return 3;
        }
        if (c <= 0x10ffff) {
                out[0] = (char)(0xf0 | (c >> 18));
                out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
                out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
                out[3] = (char)(0x80 | (c & 0x3f));
                return 4;
        }
        return (size_t)sprintf(out, "\\U%08x", c);
}

int python_text_to_utf8(const void *data, size_t length, unsigned kind, char **ret)
{
        _cleanup_free_ char *s = NULL;
        size_t n = 0;
        int r;

        if (!IN_SET(kind, PYTHON_UNICODE_1BYTE, PYTHON_UNICODE_2BYTE, PYTHON_UNICODE_4BYTE))
                return -EINVAL;
        if (length > PYTHON_STRING_MAX)
                return -E2BIG;
        s = malloc(length * 10 + 1);
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < length; i++)
                n += put_code_point(code_point_at(data, i, kind), s + n);
        s[n] = '\0';
        /* Control characters become escapes too, as every string from outside does. */
        r = utf8_escape_in_place(&s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

/* The first header bytes of the object at address, and its type checked: -EFAULT, -EINVAL. */
static int read_header(const PythonLayout *l, const PythonMemory *m, uint64_t type, uint64_t address,
                       uint8_t *header, size_t size)
{
        uint64_t ob_type;
        int r;

        if (address == 0)
                return -EFAULT;
        r = m->read(m->ctx, address, header, size);
        if (r < 0)
                return r;
        r = python_field_u64(header, size, l->object_type, &ob_type);
        if (r < 0)
                return r;
        if (type != 0 && ob_type != type)
                return -EINVAL;
        return 0;
}

int python_string_read(const PythonLayout *l, const PythonMemory *m, uint64_t unicode_type, uint64_t address,
                       char **ret)
{
        uint8_t header[OBJECT_HEADER_MAX];
        _cleanup_free_ uint8_t *data = NULL;
        uint64_t length, data_offset;
        uint32_t state;
        unsigned kind;
        int r;

        /* The ASCII form's header is the shortest: reading more could run off the end of a mapping. */
        if (l->unicode_ascii_data == PYTHON_LAYOUT_NONE || l->unicode_ascii_data > sizeof(header))
                return -EINVAL;
        r = read_header(l, m, unicode_type, address, header, l->unicode_ascii_data);
        if (r < 0)
                return r;
        r = python_field_u64(header, l->unicode_ascii_data, l->unicode_length, &length);
        if (r < 0)
                return r;
        r = python_field_u32(header, l->unicode_ascii_data, l->unicode_state, &state);
        if (r < 0)
                return r;

        if (!STATE_COMPACT(state))
                return -EINVAL;
        kind = STATE_KIND(state);
        if (STATE_ASCII(state)) {
                if (kind != PYTHON_UNICODE_1BYTE)
                        return -EINVAL;
                data_offset = l->unicode_ascii_data;
        } else
                data_offset = l->unicode_compact_data;
        if (data_offset == PYTHON_LAYOUT_NONE ||
            !IN_SET(kind, PYTHON_UNICODE_1BYTE, PYTHON_UNICODE_2BYTE, PYTHON_UNICODE_4BYTE))
                return -EINVAL;
        if (length > PYTHON_STRING_MAX) /* a negative Py_ssize_t too */
                return -E2BIG;
        if (address + data_offset < address)
                return -EFAULT;

        data = malloc(length * kind + 1);
        if (!data)
                return -ENOMEM;
        if (length > 0) {
                r = m->read(m->ctx, address + data_offset, data, length * kind);
                if (r < 0)
                        return r;
        }
        /* An ASCII string holds only ASCII: a byte above 127 means this is no such string. */
        if (STATE_ASCII(state))
                for (size_t i = 0; i < length; i++)
                        if (data[i] & 0x80)
                                return -EINVAL;
        return python_text_to_utf8(data, length, kind, ret);
}

int python_bytes_read(const PythonLayout *l, const PythonMemory *m, uint64_t bytes_type, uint64_t address,
                      size_t max, uint8_t **ret, size_t *ret_size)
{
        uint8_t header[OBJECT_HEADER_MAX];
        _cleanup_free_ uint8_t *data = NULL;
        uint64_t size;
        int r;

        if (l->bytes_data == PYTHON_LAYOUT_NONE || l->bytes_data > sizeof(header))
                return -EINVAL;
        r = read_header(l, m, bytes_type, address, header, l->bytes_data);
        if (r < 0)
                return r;
        r = python_field_u64(header, l->bytes_data, l->bytes_size, &size);
        if (r < 0)
                return r;
        if ((int64_t)size < 0)
                return -EINVAL;
        if (size > max)
                return -E2BIG;
        if (address + l->bytes_data < address)
                return -EFAULT;

        data = malloc(size + 1);
        if (!data)
                return -ENOMEM;
        if (size > 0) {
                r = m->read(m->ctx, address + l->bytes_data, data, size);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(data);
        *ret_size = size;
        return 0;
}
