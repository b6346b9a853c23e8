/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CPython's line tables (common/python/python-linetable.h) against the interpreters' own answers: the script
 * python-linetable-dump.py, run at test time by Debian's python3.11 and by every other CPython found here
 * (pyenv's 3.6 to 3.13: the three formats), prints real code objects' tables and PyCode_Addr2Line() for every
 * code unit; the decoder must say the same. Then damaged tables: cut, too large, malformed. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "macros.h"
#include "python-linetable.h"

static const char *arg_script;

/* Cuts of each table tried: spread over it, at entries' starts and middles. */
#define CUTS 40

/* Debian's interpreter first: the target of issue 26; the others where this machine has them. */
static const char *const interpreters[] = {
        "/usr/bin/python3.11",
        "/root/.pyenv/versions/3.6.15/bin/python3.6",
        "/root/.pyenv/versions/3.7.16/bin/python3.7",
        "/root/.pyenv/versions/3.8.18/bin/python3.8",
        "/root/.pyenv/versions/3.9.18/bin/python3.9",
        "/root/.pyenv/versions/3.10.13/bin/python3.10",
        "/root/.pyenv/versions/3.12.1/bin/python3.12",
        "/root/.pyenv/versions/3.13.0/bin/python3.13",
};

typedef struct DumpedCode {
        uint32_t version_hex;
        int firstlineno;
        size_t units;
        uint8_t *table;
        size_t size;
        int *lines;
} DumpedCode;

static void dumped_code_done(DumpedCode *c)
{
        free(c->table);
        free(c->lines);
}

static void parse_hex(const char *hex, uint8_t **ret, size_t *ret_size)
{
        size_t n = strcmp(hex, "-") == 0 ? 0 : strlen(hex) / 2;
        uint8_t *b = malloc(n + 1);

        ck_assert_ptr_nonnull(b);
        for (size_t i = 0; i < n; i++) {
                unsigned v;

                ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
                b[i] = v;
        }
        *ret = b;
        *ret_size = n;
}

/* One "code" line and its "lines" line: 1, or 0 at the end of the output. */
static int read_code(FILE *f, DumpedCode *ret)
{
        _cleanup_free_ char *line = NULL, *hex = NULL;
        size_t n = 0;
        char *p;
        DumpedCode c = {};

        if (getline(&line, &n, f) < 0)
                return 0;
        hex = malloc(strlen(line) + 1);
        ck_assert_ptr_nonnull(hex);
        ck_assert_int_eq(sscanf(line, "code %x %d %zu %s", &c.version_hex, &c.firstlineno, &c.units, hex), 4);
        parse_hex(hex, &c.table, &c.size);

        ck_assert_int_ge(getline(&line, &n, f), 0);
        ck_assert(strncmp(line, "lines", 5) == 0);
        c.lines = calloc(c.units + 1, sizeof(int));
        ck_assert_ptr_nonnull(c.lines);
        p = line + 5;
        for (size_t u = 0; u < c.units; u++) {
                char *end;

                c.lines[u] = strtol(p, &end, 10);
                ck_assert_ptr_ne(end, p);
                p = end;
        }
        *ret = c;
        return 1;
}

/* The decoder's answer for unit u, in the interpreter's terms: the line, or -1 for none. */
static int decoded_line(PythonLineFormat format, const DumpedCode *c, size_t size, int64_t u)
{
        int line = -7, r;

        r = python_linetable_line(format, c->table, size, c->firstlineno, u, &line);
        if (r == -ENOENT)
                return -1;
        ck_assert_msg(r == 0, "unit %lld: %s", (long long)u, strerror(-r));
        return line;
}

static void check_code(const DumpedCode *c, size_t *ret_units)
{
        _cleanup_(python_lines_freep) PythonLines *lines = NULL;
        PythonLineFormat format;

        ck_assert_int_eq(python_line_format(c->version_hex, &format), 0);
        ck_assert_int_eq(python_lines_decode(format, c->table, c->size, c->firstlineno, &lines), 0);
        for (size_t u = 0; u < c->units; u++) {
                int line = -7, r;

                ck_assert_msg(decoded_line(format, c, c->size, u) == c->lines[u],
                              "version %x, first line %d, unit %zu: decoded %d, the interpreter says %d",
                              c->version_hex, c->firstlineno, u, decoded_line(format, c, c->size, u), c->lines[u]);
                r = python_lines_find(lines, u, &line);
                ck_assert_int_eq(r == -ENOENT ? -1 : line, c->lines[u]);
        }
        /* Before the first instruction: the first line, as the interpreter answers for a frame not started. */
        ck_assert_int_eq(decoded_line(format, c, c->size, -1), c->firstlineno);

        /* Cut anywhere, a table gives an error or, for the units it still covers, the same lines; co_lnotab has
         * no end, so its cut table extends its last line, and only the bounds are checked. */
        for (size_t k = 0, size = 0; size < c->size; k++, size = k * c->size / CUTS + k % 3) {
                _cleanup_(python_lines_freep) PythonLines *cut = NULL;
                int r = python_lines_decode(format, c->table, size, c->firstlineno, &cut);

                ck_assert(r == 0 || r == -EBADMSG);
                for (size_t u = 0; r == 0 && u < c->units; u++) {
                        int line = -7, found = python_lines_find(cut, u, &line);

                        ck_assert(found == 0 || found == -ENOENT);
                        if (found == 0 && format != PYTHON_LINES_LNOTAB)
                                ck_assert_int_eq(line, c->lines[u]);
                }
        }
        *ret_units += c->units;
}

START_TEST(test_interpreters)
{
        size_t n_interpreters = 0;

        for (size_t i = 0; i < ELEMENTSOF(interpreters); i++) {
                _cleanup_free_ char *command = NULL;
                size_t n_codes = 0, n_units = 0;
                DumpedCode c;
                FILE *f;

                if (access(interpreters[i], X_OK) < 0) {
                        ck_assert_msg(i > 0, "%s is missing", interpreters[i]);
                        fprintf(stderr, "%s: not here, skipped\n", interpreters[i]);
                        continue;
                }
                ck_assert_int_ge(asprintf(&command, "%s -E -B %s", interpreters[i], arg_script), 0);
                f = popen(command, "r");
                ck_assert_ptr_nonnull(f);
                while (read_code(f, &c) > 0) {
                        check_code(&c, &n_units);
                        dumped_code_done(&c);
                        n_codes++;
                }
                ck_assert_int_eq(pclose(f), 0);
                /* json/decoder.py alone has more than ten code objects (fewer from 3.12, which inlines
                 * comprehensions). */
                ck_assert_int_ge(n_codes, 15);
                fprintf(stderr, "%s: %zu code objects, %zu code units agree\n", interpreters[i], n_codes, n_units);
                n_interpreters++;
        }
        ck_assert_int_ge(n_interpreters, 1);
}
END_TEST

START_TEST(test_formats)
{
        PythonLineFormat f;

        ck_assert_int_eq(python_line_format(0x030b02f0, &f), 0);
        ck_assert_int_eq(f, PYTHON_LINES_311);
        ck_assert_int_eq(python_line_format(0x030d00f0, &f), 0);
        ck_assert_int_eq(f, PYTHON_LINES_311);
        ck_assert_int_eq(python_line_format(0x030a0df0, &f), 0);
        ck_assert_int_eq(f, PYTHON_LINES_310);
        ck_assert_int_eq(python_line_format(0x030812f0, &f), 0);
        ck_assert_int_eq(f, PYTHON_LINES_LNOTAB);
        ck_assert_int_eq(python_line_format(0x020712f0, &f), -EPROTONOSUPPORT);
        ck_assert_int_eq(python_line_format(0x03050000, &f), -EPROTONOSUPPORT);
}
END_TEST

START_TEST(test_malformed)
{
        /* 1 1101 000: no columns, one unit, a line delta whose varint never ends. */
        static const uint8_t endless[] = { 0xe8, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41 };
        /* The same, 36 bits long. */
        static const uint8_t too_long[] = { 0xe8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f };
        /* A first byte without bit 7. */
        static const uint8_t no_entry[] = { 0x68, 0x02 };
        /* Long form, line delta -6 from line 5: a negative line. */
        static const uint8_t negative[] = { 0xf0, 0x0d, 0x00, 0x00, 0x00 };
        /* Short form on line 5, then no location, then one-line form +2: lines 5, none, 7. */
        static const uint8_t good[] = { 0x80, 0x00, 0xf8, 0xe0, 0x00, 0x00 };
        _cleanup_free_ uint8_t *huge = calloc(PYTHON_LINETABLE_MAX + 1, 1);
        _cleanup_(python_lines_freep) PythonLines *l = NULL;
        int line = 0;

        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, endless, sizeof(endless), 5, 0, &line),
                         -EBADMSG);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, too_long, sizeof(too_long), 5, 0, &line),
                         -EBADMSG);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, no_entry, sizeof(no_entry), 5, 0, &line),
                         -EBADMSG);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, negative, sizeof(negative), 5, 0, &line),
                         -EBADMSG);
        ck_assert_int_eq(python_lines_decode(PYTHON_LINES_311, negative, sizeof(negative), 5, &l), -EBADMSG);

        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, good, sizeof(good), 5, 0, &line), 0);
        ck_assert_int_eq(line, 5);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, good, sizeof(good), 5, 1, &line), -ENOENT);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, good, sizeof(good), 5, 2, &line), 0);
        ck_assert_int_eq(line, 7);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, good, sizeof(good), 5, 3, &line), -ENOENT);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, good, sizeof(good), 5, INT64_MAX, &line),
                         -ENOENT);
        ck_assert_int_eq(python_lines_decode(PYTHON_LINES_311, good, sizeof(good), 5, &l), 0);
        ck_assert_int_eq(l->n, 3);
        ck_assert_int_eq(python_lines_find(l, 2, &line), 0);
        ck_assert_int_eq(line, 7);
        ck_assert_int_eq(python_lines_find(l, 3, &line), -ENOENT);

        /* An odd length is a cut pair in the older formats: an error for the instructions past the first pair's
         * 128 bytes, which a lookup reaches only by reading the cut pair, and for the whole table's decoding. */
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_310, good, 3, 5, 9, &line), 0);
        ck_assert_int_eq(line, 5);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_310, good, 3, 5, 100, &line), -EBADMSG);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_LNOTAB, good, 3, 5, 100, &line), -EBADMSG);
        ck_assert_int_eq(python_lines_decode(PYTHON_LINES_310, good, 3, 5, &l), -EBADMSG);
        ck_assert_int_eq(python_linetable_line(99, good, sizeof(good), 5, 0, &line), -EINVAL);

        ck_assert_ptr_nonnull(huge);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, huge, PYTHON_LINETABLE_MAX + 1, 1, 0, &line),
                         -E2BIG);
        ck_assert_int_eq(python_lines_decode(PYTHON_LINES_LNOTAB, huge, PYTHON_LINETABLE_MAX + 1, 1, &l), -E2BIG);
        /* The largest allowed, all "no location" of 8 units: a line past the first million units is none. */
        memset(huge, 0xff, PYTHON_LINETABLE_MAX);
        ck_assert_int_eq(python_linetable_line(PYTHON_LINES_311, huge, PYTHON_LINETABLE_MAX, 1,
                                               8 * 1024 * 1024 - 1, &line),
                         -ENOENT);
}
END_TEST

int main(int argc, char *argv[])
{
        Suite *s = suite_create("python-linetable");
        TCase *tc = tcase_create("core");

        if (argc != 2) {
                fprintf(stderr, "usage: %s python-linetable-dump.py\n", argv[0]);
                return 2;
        }
        arg_script = argv[1];
        tcase_set_timeout(tc, 100);
        tcase_add_test(tc, test_interpreters);
        tcase_add_test(tc, test_formats);
        tcase_add_test(tc, test_malformed);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
