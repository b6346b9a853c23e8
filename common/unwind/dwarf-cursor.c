/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>

#include "dwarf-cursor.h"

/* The formats are those of the LSB (DW_EH_PE_*) and DWARF 5 section 7.6 (LEB128). */

/* The other pointer encodings: the low nibble is the format, bits 4-6 what it is relative to. */
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA8 0x04
#define PE_SIGNED 0x08
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_APPLICATION_MASK 0x70

int read_le(Cursor *c, size_t n, uint64_t *ret)
{
        uint64_t v = 0;

        if (c->end - c->pos < n)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++)
                v |= (uint64_t)c->data[c->pos + i] << (8 * i);
        c->pos += n;
        *ret = v;
        return 0;
}

int read_u8(Cursor *c, uint8_t *ret)
{
        if (c->pos >= c->end)
                return -EBADMSG;
        *ret = c->data[c->pos++];
        return 0;
}

/* The bits beyond 64 of an over-long LEB128 are dropped; the end of the record bounds the loop. */
static int read_leb128(Cursor *c, bool is_signed, uint64_t *ret)
{
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b;

        do {
                if (c->pos >= c->end)
                        return -EBADMSG;
                b = c->data[c->pos++];
                if (shift < 64)
                        v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
        } while (b & 0x80);

        if (is_signed && shift < 64 && (b & 0x40))
                v |= UINT64_MAX << shift;
        *ret = v;
        return 0;
}

int read_uleb128(Cursor *c, uint64_t *ret)
{
        return read_leb128(c, false, ret);
}

int read_sleb128(Cursor *c, int64_t *ret)
{
        uint64_t v;
        int r;

        r = read_leb128(c, true, &v);
        if (r < 0)
                return r;
        *ret = (int64_t)v;
        return 0;
}

int read_block(Cursor *c, Cursor *ret)
{
        uint64_t len;
        Cursor block;
        int r;

        block = *c;
        r = read_uleb128(&block, &len);
        if (r < 0)
                return r;
        if (len > block.end - block.pos)
                return -EBADMSG;
        block.end = block.pos + len;
        c->pos = block.end;
        *ret = block;
        return 0;
}

int skip_block(Cursor *c)
{
        Cursor ignored;

        return read_block(c, &ignored);
}

int read_encoded(Cursor *c, uint8_t encoding, const uint64_t *datarel, uint64_t *ret)
{
        uint64_t field = c->vaddr + c->pos, v;
        size_t size;
        int r;

        if (encoding == PE_OMIT)
                return -EBADMSG;

        switch (encoding & PE_FORMAT_MASK) {
        case PE_ULEB128:
        case PE_SLEB128:
                size = 0;
                break;
        case PE_UDATA2:
        case PE_SDATA2:
                size = 2;
                break;
        case PE_UDATA4:
        case PE_SDATA4:
                size = 4;
                break;
        case PE_ABSPTR:
        case PE_SIGNED:
        case PE_UDATA8:
        case PE_SDATA8:
                size = 8;
                break;
        default:
                return -EBADMSG;
        }
        if (size == 0)
                r = read_leb128(c, encoding & PE_SIGNED, &v);
        else
                r = read_le(c, size, &v);
        if (r < 0)
                return r;
        if (size > 0 && size < 8 && (encoding & PE_SIGNED) && (v >> (size * 8 - 1)))
                v |= UINT64_MAX << (size * 8);

        switch (encoding & PE_APPLICATION_MASK) {
        case 0:
                break;
        case PE_PCREL:
                v += field;
                break;
        case PE_DATAREL:
                if (!datarel)
                        return -EOPNOTSUPP;
                v += *datarel;
                break;
        default: /* textrel, funcrel, aligned: not emitted for x86-64 */
                return -EOPNOTSUPP;
        }
        *ret = v;
        return 0;
}
