/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "code-reader.h"

/* The head of a code object read in one go: up to its last field read, co_code_adaptive excluded (3.11: 184
 * bytes). */
#define CODE_HEADER_MAX 512u

static uint32_t field_end(uint32_t offset, uint32_t size)
{
        return offset == PYTHON_LAYOUT_NONE ? 0 : offset + size;
}

/* The bytes of the head that the fields read need. */
static int code_header_size(const PythonLayout *l, size_t *ret)
{
        uint32_t end = 0;

        end = MAX(end, field_end(l->object_type, 8));
        end = MAX(end, field_end(l->code_filename, 8));
        end = MAX(end, field_end(l->code_name, 8));
        end = MAX(end, field_end(l->code_qualname, 8));
        end = MAX(end, field_end(l->code_firstlineno, 4));
        end = MAX(end, field_end(l->code_linetable, 8));
        if (end == 0 || end > CODE_HEADER_MAX)
                return -EINVAL;
        *ret = end;
        return 0;
}

static int parse_fingerprint(const PythonLayout *l, const PythonTypes *types, const uint8_t *header,
                             size_t size, PythonCodeFingerprint *ret)
{
        PythonCodeFingerprint f = {};
        uint32_t firstlineno;
        int r;

        r = python_field_u64(header, size, l->object_type, &f.type);
        if (r < 0)
                return r;
        if (f.type != types->code || types->code == 0)
                return -EINVAL;
        /* co_qualname from 3.11; the plain name before. */
        r = python_field_u64(header, size,
                             l->code_qualname != PYTHON_LAYOUT_NONE ? l->code_qualname : l->code_name, &f.qualname);
        if (r < 0)
                return r;
        r = python_field_u64(header, size, l->code_filename, &f.filename);
        if (r < 0)
                return r;
        r = python_field_u64(header, size, l->code_linetable, &f.linetable);
        if (r < 0)
                return r;
        r = python_field_u32(header, size, l->code_firstlineno, &firstlineno);
        if (r < 0)
                return r;
        f.firstlineno = (int32_t)firstlineno;
        *ret = f;
        return 0;
}

int python_code_fingerprint(const PythonLayout *l, const PythonTypes *types, const PythonMemory *m,
                            uint64_t address, PythonCodeFingerprint *ret)
{
        uint8_t header[CODE_HEADER_MAX];
        size_t size;
        int r;

        r = code_header_size(l, &size);
        if (r < 0)
                return r;
        if (address == 0)
                return -EFAULT;
        r = m->read(m->ctx, address, header, size);
        if (r < 0)
                return r;
        return parse_fingerprint(l, types, header, size, ret);
}

int python_code_read(const PythonLayout *l, const PythonTypes *types, const PythonMemory *m, uint64_t address,
                     PythonCode **ret)
{
        _cleanup_(python_code_freep) PythonCode *c = NULL;
        _cleanup_free_ uint8_t *table = NULL;
        PythonLineFormat format;
        size_t table_size;
        int r;

        r = python_line_format(l->version_hex, &format);
        if (r < 0)
                return r;
        c = calloc(1, sizeof(PythonCode));
        if (!c)
                return -ENOMEM;
        c->address = address;
        r = python_code_fingerprint(l, types, m, address, &c->fingerprint);
        if (r < 0)
                return r;
        /* The interpreter's own first lines are >= 0 (1 for a file, 0 for some generated code). */
        if (c->fingerprint.firstlineno < 0)
                return -EINVAL;
        c->firstlineno = c->fingerprint.firstlineno;

        r = python_string_read(l, m, types->unicode, c->fingerprint.qualname, &c->qualname);
        if (r < 0)
                return r;
        r = python_string_read(l, m, types->unicode, c->fingerprint.filename, &c->filename);
        if (r < 0)
                return r;
        r = python_bytes_read(l, m, types->bytes, c->fingerprint.linetable, PYTHON_LINETABLE_MAX, &table,
                              &table_size);
        if (r < 0)
                return r;
        r = python_lines_decode(format, table, table_size, c->firstlineno, &c->lines);
        if (r < 0)
                return r;

        if (l->code_bytecode != PYTHON_LAYOUT_NONE && l->version_hex >= 0x030b0000) {
                if (address + l->code_bytecode < address)
                        return -EFAULT;
                c->bytecode = address + l->code_bytecode;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

PythonCode *python_code_free(PythonCode *c)
{
        if (!c)
                return NULL;
        free(c->qualname);
        free(c->filename);
        python_lines_free(c->lines);
        free(c);
        return NULL;
}

int python_code_line(const PythonCode *c, uint64_t instr, int *ret_line)
{
        int64_t distance;

        if (c->bytecode == 0)
                return -EOPNOTSUPP;
        /* Before the first unit is a frame not started; farther than any code is no instruction of it. */
        if (instr < c->bytecode)
                return instr + 2 == c->bytecode ? python_lines_find(c->lines, -1, ret_line) : -ENOENT;
        if (instr - c->bytecode > (uint64_t)UINT32_MAX)
                return -ENOENT;
        distance = (int64_t)(instr - c->bytecode);
        if (distance % 2 != 0)
                return -EINVAL;
        return python_lines_find(c->lines, distance / 2, ret_line);
}

int python_code_line_at(const PythonCode *c, int64_t unit, int *ret_line)
{
        return python_lines_find(c->lines, unit, ret_line);
}

size_t python_code_memory(const PythonCode *c)
{
        if (!c)
                return 0;
        return sizeof(PythonCode) + (c->qualname ? strlen(c->qualname) + 1 : 0) +
               (c->filename ? strlen(c->filename) + 1 : 0) + python_lines_memory(c->lines);
}
