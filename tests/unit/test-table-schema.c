/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "macros.h"
#include "table-schema.h"

/* The table schema (common/profile/table-schema.h): the row signatures it makes are the ones the interface XML
 * declares for each table method, so that the daemon can marshal from it; its columns are what the outputs
 * show. */

static const char *xml_path;

/* The XML's text, read once. */
static char *read_xml(void)
{
        static char *text;
        FILE *f;
        long size;

        if (text)
                return text;
        f = fopen(xml_path, "re");
        ck_assert_msg(f, "cannot open %s", xml_path);
        ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        ck_assert_int_gt(size, 0);
        rewind(f);
        text = calloc(1, (size_t)size + 1);
        ck_assert_ptr_nonnull(text);
        ck_assert_uint_eq(fread(text, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        return text;
}

/* The element type of the rows' array that method returns: its out argument typed a(...), as declared. */
static void xml_row_signature(const char *method, char *buf, size_t size)
{
        char open[128];
        const char *start, *end, *p, *found = NULL;

        snprintf(open, sizeof(open), "<method name=\"%s\">", method);
        start = strstr(read_xml(), open);
        ck_assert_msg(start, "%s not in the XML", method);
        end = strstr(start, "</method>");
        ck_assert_ptr_nonnull(end);
        for (p = start; (p = strstr(p, "type=\"a(")) && p < end; p++)
                if (strstr(p, "direction=\"out\"") < strstr(p, "/>"))
                        found = p;
        ck_assert_msg(found, "%s returns no array of rows", method);
        found += strlen("type=\"a");
        p = strchr(found, '"');
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_lt((size_t)(p - found), size);
        memcpy(buf, found, (size_t)(p - found));
        buf[p - found] = '\0';
}

static const struct {
        const char *method;
        TableKind kind;
        TableShape shape;
} methods[] = {
        {"GetFunctions", TABLE_FUNCTIONS, TABLE_SAMPLING},
        {"GetModules", TABLE_MODULES, TABLE_SAMPLING},
        {"GetThreads", TABLE_THREADS, TABLE_SAMPLING},
        {"GetProcesses", TABLE_PROCESSES, TABLE_SAMPLING},
        {"GetFunctionValues", TABLE_FUNCTIONS, TABLE_VALUES},
        {"GetModuleValues", TABLE_MODULES, TABLE_VALUES},
        {"GetThreadValues", TABLE_THREADS, TABLE_VALUES},
        {"GetProcessValues", TABLE_PROCESSES, TABLE_VALUES},
};

START_TEST(test_signatures_match_xml)
{
        for (size_t i = 0; i < ELEMENTSOF(methods); i++) {
                char declared[64], made[64], contents[64];

                xml_row_signature(methods[i].method, declared, sizeof(declared));
                ck_assert_int_eq(table_schema_row_signature(methods[i].kind, methods[i].shape, false, made,
                                                            sizeof(made)),
                                 0);
                ck_assert_msg(strcmp(made, declared) == 0, "%s: the schema makes %s, the XML declares %s",
                              methods[i].method, made, declared);
                /* The contents, for entering one row: the same without the parentheses. */
                ck_assert_int_eq(table_schema_row_signature(methods[i].kind, methods[i].shape, true, contents,
                                                            sizeof(contents)),
                                 0);
                ck_assert_uint_eq(strlen(contents), strlen(made) - 2);
                ck_assert_int_eq(strncmp(contents, made + 1, strlen(contents)), 0);
        }
}
END_TEST

START_TEST(test_signature_bounds)
{
        char buf[4];

        ck_assert_int_eq(table_schema_row_signature(TABLE_FUNCTIONS, TABLE_SAMPLING, false, buf, sizeof(buf)),
                         -ENOBUFS);
        ck_assert_int_eq(table_schema_row_signature(_TABLE_KIND_MAX, TABLE_SAMPLING, false, buf, sizeof(buf)),
                         -EINVAL);
        ck_assert_int_eq(table_schema_row_signature(TABLE_FUNCTIONS, _TABLE_SHAPE_MAX, false, buf, sizeof(buf)),
                         -EINVAL);
}
END_TEST

/* Names are unique within a table, every column has a heading, and a JSON key unless it is the text table's
 * own. */
START_TEST(test_columns_well_formed)
{
        for (TableKind k = 0; k < _TABLE_KIND_MAX; k++) {
                size_t n;
                const TableColumn *c = table_schema_columns(k, &n);

                ck_assert_ptr_nonnull(c);
                ck_assert_uint_gt(n, 0);
                ck_assert_ptr_eq(table_schema_find(k, c[0].name), &c[0]);
                for (size_t i = 0; i < n; i++) {
                        ck_assert_ptr_nonnull(c[i].heading);
                        ck_assert_msg(c[i].json_key || (c[i].flags & TABLE_COLUMN_TEXT_ONLY), "%s", c[i].name);
                        ck_assert_msg(c[i].type != TABLE_TYPE_FORMAT || c[i].format, "%s", c[i].name);
                        /* The client reads a bus cell into the getter's place: the types must agree. */
                        if (c[i].bus_type)
                                ck_assert_msg((c[i].bus_type == 's' && c[i].type == TABLE_TYPE_STRING) ||
                                                      (c[i].bus_type == 'u' && c[i].type == TABLE_TYPE_U32) ||
                                                      (c[i].bus_type == 't' && c[i].type == TABLE_TYPE_U64) ||
                                                      (c[i].bus_type == 'd' && c[i].type == TABLE_TYPE_DOUBLE),
                                              "%s: bus type %c", c[i].name, c[i].bus_type);
                        for (size_t j = i + 1; j < n; j++)
                                ck_assert_msg(strcmp(c[i].name, c[j].name) != 0, "%s twice in %s", c[i].name,
                                              table_kind_to_string(k));
                }
        }
        ck_assert_ptr_null(table_schema_find(TABLE_FUNCTIONS, "no-such-column"));
}
END_TEST

/* The getters read the decoded row: counts as integers, percents with two decimals, values with one, in
 * milliseconds when asked. */
START_TEST(test_cells)
{
        TableSymbols symbols = {.source = (char *)"dynsym", .debuginfod = (char *)"pending", .samples = 8,
                                .unnamed_samples = 2};
        TableRow row = {.id = 42, .name = (char *)"main", .module = (char *)"app", .source = (char *)"app.c:12",
                        .inclusive = 7, .exclusive = 3, .inclusive_percent = 70.0, .exclusive_percent = 30.0,
                        .symbols = &symbols};
        const TableColumn *values;
        size_t n;
        char buf[64];

        for (size_t i = 0; i < TABLE_N_VALUES; i++)
                row.values[i] = 1.5 * (double)(i + 1);

        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_FUNCTIONS, "function"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "main");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_FUNCTIONS, "source"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "app.c:12");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_FUNCTIONS, "exclusive"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "3");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_FUNCTIONS, "inclusive-percent"), &row, false, 0,
                                         buf, sizeof(buf)),
                         "70.00");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_THREADS, "tid"), &row, false, 0, buf, sizeof(buf)),
                         "42");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_MODULES, "symbols"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "dynsym, debuginfod pending");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_MODULES, "unnamed-percent"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "25.00");

        values = table_schema_value_columns(&n);
        ck_assert_uint_eq(n, TABLE_N_VALUES);
        /* Elapsed inclusive, 1.5 samples at 100 Hz: 15 ms. */
        ck_assert_str_eq(table_cell_text(&values[0], &row, false, 100, buf, sizeof(buf)), "1.5");
        ck_assert_str_eq(table_cell_text(&values[0], &row, true, 100, buf, sizeof(buf)), "15.0");
        ck_assert_str_eq(values[0].heading_ms, "ELAPSED INCLUSIVE (ms)");
        /* A percent has no unit. */
        ck_assert_str_eq(table_cell_text(&values[4], &row, true, 100, buf, sizeof(buf)), "7.50");
        ck_assert_ptr_null(values[4].json_key_ms);

        /* An inlined frame's row: its name marked in the text, its module not; JSON has a key of its own. */
        row.inlined = true;
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_FUNCTIONS, "function"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "main (inlined)");
        ck_assert_str_eq(table_cell_text(table_schema_find(TABLE_FUNCTIONS, "module"), &row, false, 0, buf,
                                         sizeof(buf)),
                         "app");
        ck_assert_str_eq(table_cell_string(table_schema_find(TABLE_FUNCTIONS, "function"), &row), "main");
}
END_TEST

START_TEST(test_views)
{
        const TableColumn *values;
        const unsigned *v;
        size_t n, n_values;

        values = table_schema_value_columns(&n_values);
        v = table_schema_view_values(TABLE_VIEW_ALL, &n);
        ck_assert_uint_eq(n, TABLE_N_VALUES);
        v = table_schema_view_values(TABLE_VIEW_APPLICATION, &n);
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_lt(v[i], n_values);
                ck_assert_msg(strncmp(values[v[i]].json_key, "application_", 12) == 0, "%s", values[v[i]].json_key);
        }
        ck_assert_ptr_null(table_schema_view_values(_TABLE_VIEW_MAX, &n));
        ck_assert_uint_eq(n, 0);
}
END_TEST

static Suite *table_schema_suite(void)
{
        Suite *s = suite_create("table-schema");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_signatures_match_xml);
        tcase_add_test(tc, test_signature_bounds);
        tcase_add_test(tc, test_columns_well_formed);
        tcase_add_test(tc, test_cells);
        tcase_add_test(tc, test_views);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char *argv[])
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s ORG.VPROF.PROFILER1.XML\n", argv[0]);
                return 2;
        }
        xml_path = argv[1];
        return run_suite(table_schema_suite());
}
