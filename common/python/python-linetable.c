/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "python-linetable.h"

int python_line_format(uint32_t version_hex, PythonLineFormat *ret)
{
        uint32_t minor_version = version_hex >> 16; /* 0x030b: 3.11 */

        if (minor_version < 0x0306 || minor_version >= 0x0400)
                return -EPROTONOSUPPORT;
        *ret = minor_version <= 0x0309 ? PYTHON_LINES_LNOTAB :
               minor_version == 0x030a ? PYTHON_LINES_310 : PYTHON_LINES_311;
        return 0;
}

int python_line_iter_init(PythonLineIter *it, PythonLineFormat format, const uint8_t *table, size_t size,
                          int firstlineno)
{
        *it = (PythonLineIter){
                .format = format,
                .table = table,
                .size = size,
                .line = firstlineno,
        };
        if (size > PYTHON_LINETABLE_MAX)
                it->error = -E2BIG;
        else if (!IN_SET(format, PYTHON_LINES_LNOTAB, PYTHON_LINES_310, PYTHON_LINES_311))
                it->error = -EINVAL;
        else if (size > 0 && !table)
                it->error = -EINVAL;
        else if (firstlineno < 0)
                it->error = -EBADMSG;
        return it->error;
}

/* The 3.11 varint at *pos, its chunks of 6 bits least significant first, bit 6 set on all but the last; it may
 * not run past end (the next entry's first byte, the only bytes with bit 7 set). */
static int read_varint(const uint8_t *table, size_t *pos, size_t end, uint32_t *ret)
{
        uint32_t value = 0;

        for (unsigned shift = 0;; shift += 6) {
                uint8_t b;

                if (*pos >= end || shift > 30)
                        return -EBADMSG;
                b = table[(*pos)++];
                if (shift == 30 && (b & 63) > 3)
                        return -EBADMSG; /* more than 32 bits */
                value |= (uint32_t)(b & 63) << shift;
                if (!(b & 64))
                        break;
        }
        *ret = value;
        return 0;
}

static int read_signed_varint(const uint8_t *table, size_t *pos, size_t end, int64_t *ret)
{
        uint32_t u;
        int r;

        r = read_varint(table, pos, end, &u);
        if (r < 0)
                return r;
        *ret = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
        return 0;
}

/* One entry of the 3.11 location table: its length in bytes of bytecode, its line (NONE or the computed one). */
static int next_entry_311(PythonLineIter *it, uint32_t *ret_length, int64_t *ret_line)
{
        const uint8_t *t = it->table;
        uint8_t first = t[it->pos];
        unsigned code = (first >> 3) & 15;
        size_t end = it->pos + 1, p = it->pos + 1;
        int64_t delta = 0;
        int r;

        if (!(first & 128))
                return -EBADMSG;
        /* The entry's other bytes run to the next first byte, as the interpreter skips them. */
        while (end < it->size && !(t[end] & 128))
                end++;

        switch (code) {
        case 15: /* no location */
                break;
        case 13: /* no columns: the line's delta */
        case 14: /* long form: the line's delta, then the end line's delta and the columns */
                r = read_signed_varint(t, &p, end, &delta);
                if (r < 0)
                        return r;
                break;
        case 10:
        case 11:
        case 12: /* one-line forms: the line's delta in the code, two column bytes follow */
                delta = code - 10;
                break;
        default: /* short forms: the same line, one column byte follows */
                break;
        }
        it->pos = end;
        it->line += delta;
        *ret_length = ((first & 7) + 1) * 2;
        *ret_line = code == 15 ? PYTHON_LINE_NONE : it->line;
        return 0;
}

/* One pair of co_lnotab (3.6 - 3.9) or of 3.10's co_linetable: bytes, then lines advanced. In co_lnotab the
 * line advance applies to the instructions after the pair's bytes; in 3.10's, to the pair's own bytes. */
static int next_pair(PythonLineIter *it, uint32_t *ret_length, int64_t *ret_line)
{
        uint8_t length;
        int8_t delta;

        if (it->size - it->pos < 2)
                return -EBADMSG;
        length = it->table[it->pos];
        delta = (int8_t)it->table[it->pos + 1];
        it->pos += 2;
        *ret_length = length;
        if (it->format == PYTHON_LINES_LNOTAB) {
                *ret_line = it->line;
                it->line += delta;
        } else if (delta == -128)
                *ret_line = PYTHON_LINE_NONE;
        else {
                it->line += delta;
                *ret_line = it->line;
        }
        return 0;
}

int python_line_iter_next(PythonLineIter *it, PythonLineRange *ret)
{
        if (it->error)
                return it->error;
        if (it->done)
                return 0;

        /* Every step consumes at least one byte: no loop is longer than the table. */
        while (it->pos < it->size) {
                uint32_t length;
                int64_t line;
                int r;

                r = it->format == PYTHON_LINES_311 ? next_entry_311(it, &length, &line) :
                                                     next_pair(it, &length, &line);
                if (r < 0)
                        return (it->error = r);
                /* The line reached, whether this range has it or none. */
                if (it->line < 0 || it->line > INT32_MAX)
                        return (it->error = -EBADMSG);
                /* Entries of no length only move the line (3.10, co_lnotab's long jumps). */
                if (length == 0)
                        continue;
                *ret = (PythonLineRange){ .start = it->offset, .end = it->offset + length, .line = (int32_t)line };
                it->offset += length;
                return 1;
        }

        it->done = 1;
        /* co_lnotab has no end: the line reached holds for the rest of the bytecode. */
        if (it->format == PYTHON_LINES_LNOTAB) {
                if (it->line < 0 || it->line > INT32_MAX)
                        return (it->error = -EBADMSG);
                *ret = (PythonLineRange){ .start = it->offset, .end = UINT32_MAX, .line = (int32_t)it->line };
                return 1;
        }
        return 0;
}

/* The line of a found range, or of a unit before the code's start. */
static int line_result(int line, int *ret_line)
{
        if (line == PYTHON_LINE_NONE)
                return -ENOENT;
        *ret_line = line;
        return 0;
}

int python_linetable_line(PythonLineFormat format, const uint8_t *table, size_t size, int firstlineno,
                          int64_t unit, int *ret_line)
{
        PythonLineIter it;
        PythonLineRange range;
        int r;

        r = python_line_iter_init(&it, format, table, size, firstlineno);
        if (r < 0)
                return r;
        if (unit < 0)
                return firstlineno < 0 ? -EBADMSG : line_result(firstlineno, ret_line);
        if (unit > UINT32_MAX / 2)
                return -ENOENT;

        while ((r = python_line_iter_next(&it, &range)) > 0)
                if ((uint64_t)unit * 2 < range.end)
                        return (uint64_t)unit * 2 >= range.start ? line_result(range.line, ret_line) : -ENOENT;
        return r < 0 ? r : -ENOENT;
}

int python_lines_decode(PythonLineFormat format, const uint8_t *table, size_t size, int firstlineno,
                        PythonLines **ret)
{
        _cleanup_(python_lines_freep) PythonLines *l = NULL;
        PythonLineIter it;
        PythonLineRange range;
        size_t capacity;
        int r;

        r = python_line_iter_init(&it, format, table, size, firstlineno);
        if (r < 0)
                return r;
        /* Every range takes at least one byte of the table, and co_lnotab has one more at its end. */
        capacity = size + 1;
        l = malloc(sizeof(PythonLines) + capacity * sizeof(PythonLineRange));
        if (!l)
                return -ENOMEM;
        l->firstlineno = firstlineno;
        l->n = 0;

        while ((r = python_line_iter_next(&it, &range)) > 0) {
                PythonLineRange *last = l->n > 0 ? &l->ranges[l->n - 1] : NULL;

                if (l->n >= capacity)
                        return -EBADMSG; /* cannot happen: the bound above */
                if (last && last->line == range.line && last->end == range.start)
                        last->end = range.end;
                else
                        l->ranges[l->n++] = range;
        }
        if (r < 0)
                return r;
        if (l->n < capacity) {
                /* Give back what merging saved. */
                PythonLines *shrunk = realloc(l, sizeof(PythonLines) + MAX(l->n, 1u) * sizeof(PythonLineRange));

                if (shrunk)
                        l = shrunk;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

PythonLines *python_lines_free(PythonLines *l)
{
        free(l);
        return NULL;
}

int python_lines_find(const PythonLines *l, int64_t unit, int *ret_line)
{
        size_t lo = 0, hi;
        uint64_t offset;

        if (unit < 0)
                return l->firstlineno < 0 ? -EBADMSG : line_result(l->firstlineno, ret_line);
        if (unit > UINT32_MAX / 2)
                return -ENOENT;
        offset = (uint64_t)unit * 2;

        /* The first range that ends after offset. */
        hi = l->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (l->ranges[mid].end <= offset)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo >= l->n || offset < l->ranges[lo].start)
                return -ENOENT;
        return line_result(l->ranges[lo].line, ret_line);
}

size_t python_lines_memory(const PythonLines *l)
{
        return l ? sizeof(PythonLines) + l->n * sizeof(PythonLineRange) : 0;
}
