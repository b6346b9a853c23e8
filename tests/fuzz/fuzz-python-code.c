/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The code-object reader (common/python/code-reader.c, python-strings.c) and its cache over a fake memory
 * image: the input is the memory at IMAGE_BASE, the code object at its start, read with Debian's python3.11
 * layout; its pointers are addresses in the image (or anywhere: outside it, reads fail). Whatever is read
 * must be bounded and valid: names valid UTF-8 of one line, the lines of the decoded table inside it. Seeds: a
 * well-formed image (a code object, its two names of different kinds, a real line table of /usr/bin/python3.11
 * when it is here) and variants of it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code-reader.h"
#include "fuzz-input.h"
#include "macros.h"
#include "python-code-cache.h"
#include "utf8.h"

#define IMAGE_BASE UINT64_C(0x10000)
#define CODE_TYPE UINT64_C(0xc0de0)
#define STR_TYPE UINT64_C(0x57e0)
#define BYTES_TYPE UINT64_C(0xb7e0)

/* Debian's python3.11 (3.11.2) on x86-64, the fields the reader uses (tests/unit/test-python-code.c has all). */
static const PythonLayout layout = {
        .version_hex = 0x030b02f0,
        .object_type = 8,
        .code_filename = 112,
        .code_name = 120,
        .code_qualname = 128,
        .code_firstlineno = 72,
        .code_linetable = 136,
        .code_bytecode = 184,
        .unicode_length = 16,
        .unicode_state = 32,
        .unicode_ascii_data = 48,
        .unicode_compact_data = 72,
        .bytes_size = 16,
        .bytes_data = 32,
};

typedef struct Image {
        const uint8_t *data;
        size_t size;
} Image;

static int read_image(void *ctx, uint64_t addr, void *buf, size_t len)
{
        const Image *image = ctx;

        if (addr < IMAGE_BASE || addr - IMAGE_BASE > image->size || image->size - (addr - IMAGE_BASE) < len)
                return -EFAULT;
        memcpy(buf, image->data + (addr - IMAGE_BASE), len);
        return 0;
}

static void check_code(const PythonCode *c)
{
        int line;

        if (!utf8_is_printable(c->qualname, strlen(c->qualname)) ||
            !utf8_is_printable(c->filename, strlen(c->filename)))
                abort();
        for (size_t i = 0; i < c->lines->n; i++)
                if (python_code_line(c, c->bytecode + c->lines->ranges[i].start, &line) == 0 && line < 0)
                        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(python_code_cache_freep) PythonCodeCache *cache = NULL;
        _cleanup_(python_code_freep) PythonCode *c = NULL;
        Image image = { .data = data, .size = size };
        PythonMemory m = { .read = read_image, .ctx = &image };
        /* With the types known, then unchecked but the code type's. */
        PythonTypes types = { .code = CODE_TYPE, .unicode = STR_TYPE, .bytes = BYTES_TYPE };
        PythonTypes loose = { .code = CODE_TYPE };
        const PythonCode *kept;

        if (python_code_read(&layout, &types, &m, IMAGE_BASE, &c) >= 0)
                check_code(c);
        c = python_code_free(c);
        if (python_code_read(&layout, &loose, &m, IMAGE_BASE, &c) >= 0)
                check_code(c);

        /* The cache, small, at the start and at addresses the input names, twice each. */
        cache = python_code_cache_new(2, 4096);
        if (!cache)
                return 0;
        for (size_t i = 0; i < 8; i++) {
                uint64_t address = i < 2 ? IMAGE_BASE : IMAGE_BASE + fuzz_word(data, size, i) % (size + 1);

                if (python_code_cache_get(cache, &layout, &loose, &m, address, &kept) >= 0)
                        check_code(kept);
                if (i % 3 == 2)
                        python_code_cache_next_generation(cache);
        }
        return 0;
}

static void put_u64(uint8_t *image, size_t offset, uint64_t value)
{
        memcpy(image + offset, &value, sizeof(value));
}

/* A str at offset of the image: ASCII, or Latin-1 (compact, not ASCII). */
static void put_str(uint8_t *image, size_t offset, const char *s, bool ascii)
{
        uint32_t state = (1u << 2) | (1u << 5) | (ascii ? 1u << 6 : 0) | (1u << 7);

        put_u64(image, offset + layout.object_type, STR_TYPE);
        put_u64(image, offset + layout.unicode_length, strlen(s));
        memcpy(image + offset + layout.unicode_state, &state, sizeof(state));
        memcpy(image + offset + (ascii ? layout.unicode_ascii_data : layout.unicode_compact_data), s, strlen(s));
}

/* A real line table: the first code object of json/decoder.py with more than a few instructions, as this
 * machine's python3.11 compiles it; else a hand-made one. */
static size_t real_linetable(uint8_t *buf, size_t size)
{
        static const uint8_t made[] = { 0x80, 0x00, 0xd8, 0x04, 0x08, 0xf8, 0xe0, 0x00, 0x00, 0xf0, 0x0a, 0x00 };
        _cleanup_free_ char *line = NULL;
        size_t n = 0, length = 0;
        FILE *f;

        f = popen("/usr/bin/python3.11 -E -B -c 'import json.decoder as d; "
                  "print(d.JSONDecoder.raw_decode.__code__.co_linetable.hex())' 2>/dev/null", "r");
        if (f) {
                if (getline(&line, &n, f) > 0)
                        for (char *p = line; length < size && p[0] && p[1] && p[0] != '\n'; p += 2) {
                                unsigned v;

                                if (sscanf(p, "%2x", &v) != 1)
                                        break;
                                buf[length++] = (uint8_t)v;
                        }
                pclose(f);
        }
        if (length == 0) {
                memcpy(buf, made, sizeof(made));
                length = sizeof(made);
        }
        return length;
}

static int write_seeds(const char *dir)
{
        uint8_t image[2048] = {};
        uint8_t table[1024];
        size_t table_size = real_linetable(table, sizeof(table) - 1);
        int32_t firstlineno = 332;
        int r;

        /* The code object at 0, its names at 256 and 384, its line table at 512. */
        put_u64(image, layout.object_type, CODE_TYPE);
        memcpy(image + layout.code_firstlineno, &firstlineno, sizeof(firstlineno));
        put_u64(image, layout.code_qualname, IMAGE_BASE + 256);
        put_u64(image, layout.code_name, IMAGE_BASE + 256);
        put_u64(image, layout.code_filename, IMAGE_BASE + 384);
        put_u64(image, layout.code_linetable, IMAGE_BASE + 512);
        put_str(image, 256, "JSONDecoder.raw_decode", true);
        put_str(image, 384, "/usr/lib/python3.11/json/d\xe9\x63oder.py", false);
        put_u64(image, 512 + layout.object_type, BYTES_TYPE);
        put_u64(image, 512 + layout.bytes_size, table_size);
        memcpy(image + 512 + layout.bytes_data, table, MIN(table_size, sizeof(image) - 512 - layout.bytes_data));

        r = fuzz_write_file(dir, "code.image", image, 512 + layout.bytes_data + table_size);
        if (r < 0)
                return r;
        /* The same with its line table cut short, and with its file name a pointer to itself. */
        r = fuzz_write_file(dir, "code-cut.image", image, 512 + layout.bytes_data + table_size / 2);
        if (r < 0)
                return r;
        put_u64(image, layout.code_filename, IMAGE_BASE);
        return fuzz_write_file(dir, "code-self.image", image, 512 + layout.bytes_data + table_size);
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
