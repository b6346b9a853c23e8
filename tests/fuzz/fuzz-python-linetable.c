/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPython's line table decoder (common/python/python-linetable.c): the input's first byte picks the format,
 * the next four the first line, the rest is the table. A table that decodes whole must give, at every range's
 * edges and at units the input holds, the same answer by the linear lookup and by the decoded table's binary
 * search. Seeds: real tables of json/decoder.py's code objects from /usr/bin/python3.11 (and, where pyenv has
 * them, 3.8 and 3.10 for the older formats). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-input.h"
#include "macros.h"
#include "python-linetable.h"

static void same_answer(PythonLineFormat format, const uint8_t *table, size_t size, int firstlineno,
                        const PythonLines *lines, int64_t unit)
{
        int a = -7, b = -7;
        int ra = python_linetable_line(format, table, size, firstlineno, unit, &a);
        int rb = python_lines_find(lines, unit, &b);

        if (ra != rb || (ra == 0 && a != b))
                abort();
        if (ra == 0 && a < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(python_lines_freep) PythonLines *lines = NULL;
        PythonLineFormat format;
        const uint8_t *table;
        int32_t firstlineno;
        size_t table_size;

        if (size < 5)
                return 0;
        format = (PythonLineFormat)(data[0] % 3);
        memcpy(&firstlineno, data + 1, sizeof(firstlineno));
        table = data + 5;
        table_size = size - 5;

        if (python_lines_decode(format, table, table_size, firstlineno, &lines) < 0) {
                /* Still bounded when it fails: a few lookups anywhere. */
                for (size_t i = 0; i < 4; i++)
                        (void)python_linetable_line(format, table, table_size, firstlineno,
                                                    (int64_t)fuzz_word(data, size, i), &(int){ 0 });
                return 0;
        }
        for (size_t i = 0; i < lines->n && i < 256; i++) {
                const PythonLineRange *r = &lines->ranges[i];

                if (r->start >= r->end || (i > 0 && r->start < lines->ranges[i - 1].end))
                        abort(); /* ranges are non-empty and in order */
                same_answer(format, table, table_size, firstlineno, lines, r->start / 2);
                same_answer(format, table, table_size, firstlineno, lines, ((int64_t)r->end - 1) / 2);
                same_answer(format, table, table_size, firstlineno, lines, r->end / 2);
        }
        same_answer(format, table, table_size, firstlineno, lines, -1);
        for (size_t i = 0; i < 4; i++)
                same_answer(format, table, table_size, firstlineno, lines,
                            (int64_t)(fuzz_word(data, size, i) % 65536));
        return 0;
}

/* Prints one line per code object of json/decoder.py: its first line, then its table in hex. */
static const char dump_tables[] =
        "import json.decoder, sys, types\n"
        "def walk(c):\n"
        "    yield c\n"
        "    for k in c.co_consts:\n"
        "        if isinstance(k, types.CodeType): yield from walk(k)\n"
        "src = open(json.decoder.__file__).read()\n"
        "for c in walk(compile(src, json.decoder.__file__, 'exec')):\n"
        "    t = c.co_linetable if sys.version_info >= (3, 10) else c.co_lnotab\n"
        "    print(c.co_firstlineno, t.hex() or '-')\n";

static int write_interpreter_seeds(const char *dir, const char *python, PythonLineFormat format)
{
        _cleanup_free_ char *command = NULL, *line = NULL;
        size_t n = 0, i = 0;
        FILE *f;
        int r = 0;

        if (access(python, X_OK) < 0)
                return 0;
        if (asprintf(&command, "%s -E -B -c \"$VPROF_DUMP_TABLES\"", python) < 0)
                return -ENOMEM;
        setenv("VPROF_DUMP_TABLES", dump_tables, 1);
        f = popen(command, "r");
        if (!f)
                return negative_errno();
        while (r >= 0 && getline(&line, &n, f) > 0) {
                uint8_t seed[8192];
                char name[64], *hex;
                int32_t firstlineno = (int32_t)strtol(line, &hex, 10);
                size_t size = 5;

                seed[0] = (uint8_t)format;
                memcpy(seed + 1, &firstlineno, sizeof(firstlineno));
                hex += strspn(hex, " ");
                for (; size < sizeof(seed) && hex[0] && hex[1] && hex[0] != '\n' && hex[0] != '-'; hex += 2) {
                        unsigned v;

                        if (sscanf(hex, "%2x", &v) != 1)
                                break;
                        seed[size++] = (uint8_t)v;
                }
                snprintf(name, sizeof(name), "format%d-%zu.bin", (int)format, i++);
                r = fuzz_write_file(dir, name, seed, size);
        }
        if (pclose(f) != 0 && r >= 0)
                r = -EIO;
        return r < 0 ? r : (i > 0 ? 0 : -ENOENT);
}

static int write_seeds(const char *dir)
{
        int r;

        r = write_interpreter_seeds(dir, "/usr/bin/python3.11", PYTHON_LINES_311);
        if (r < 0)
                return r;
        r = write_interpreter_seeds(dir, "/root/.pyenv/versions/3.10.13/bin/python3.10", PYTHON_LINES_310);
        if (r < 0)
                return r;
        return write_interpreter_seeds(dir, "/root/.pyenv/versions/3.8.18/bin/python3.8", PYTHON_LINES_LNOTAB);
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
