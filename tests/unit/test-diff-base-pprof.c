/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A diff's base from a pprof file: hand-made GetProfile data packed by pprof_build() (raw and gzip-compressed),
 * read back by pprof_read() and made into a window's tables, every count computed here by hand; then files that
 * lie (ids that name nothing, twice the same id, negative counts, no period, cut gzip streams), each refused with
 * its error. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "diff-base-pprof.h"
#include "diff-table.h"
#include "macros.h"
#include "pprof-build.h"
#include "pprof-gzip.h"
#include "pprof-read.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;

/* Innermost first, as GetProfile sends them. */
static const uint32_t stack_kernel[] = { 3, 0, 1 };  /* do_syscall_64 (kernel), work, main */
static const uint32_t stack_inline[] = { 2, 0, 1 };  /* leaf inlined into work, main */
static const uint32_t stack_python[] = { 4, 1 };     /* handler (Python), main */
static const uint32_t stack_recurse[] = { 0, 0, 1 }; /* work, work, main */
static const uint32_t stack_child[] = { 0, 1 };      /* work, main in the second process */

static PprofMapping mappings_1[] = { { "app", "/usr/bin/app", "0123abcd", 0x400000, 0x401000, 0x1000 } };
static PprofFunction functions_1[] = {
        { "app", "work", "", 0x400100 },
        { "app", "main", "", 0x400200 },
        { "app", "leaf", "", 0x400100, true },
        { "[kernel]", "do_syscall_64", "", UINT64_C(0xffffffff81000000) },
        { "/srv/app.py", "handler", "", 0, false, "/srv/app.py", 12, 14 },
};
static PprofThread threads_1[] = { { 11, "worker" }, { 10, "app" } };
static PprofStack stacks_1[] = {
        { stack_kernel, 3, 1, 11, 5, 0 },
        { stack_inline, 3, 0, 10, 3, 0 },
        { stack_python, 2, 0, 11, 2, 0 },
        { stack_recurse, 3, 0, 10, 4, 0 },
};
static PprofMapping mappings_2[] = { { "app", "/usr/bin/app", "0123abcd", 0x500000, 0x501000, 0x1000 } };
static PprofFunction functions_2[] = { { "app", "work", "", 0x500100 }, { "app", "main", "", 0x500200 } };
static PprofThread threads_2[] = { { 21, "app-child" } };
static PprofStack stacks_2[] = { { stack_child, 2, 0, 21, 7, 0 } };

static void pack(uint8_t **ret, size_t *ret_size)
{
        PprofProcess processes[2] = {
                { .pid = 10, .comm = "app", .unit = "", .mappings = mappings_1, .n_mappings = 1,
                  .functions = functions_1, .n_functions = ELEMENTSOF(functions_1), .threads = threads_1,
                  .n_threads = ELEMENTSOF(threads_1), .stacks = stacks_1, .n_stacks = ELEMENTSOF(stacks_1) },
                { .pid = 20, .comm = "app-child", .unit = "", .mappings = mappings_2, .n_mappings = 1,
                  .functions = functions_2, .n_functions = ELEMENTSOF(functions_2), .threads = threads_2,
                  .n_threads = 1, .stacks = stacks_2, .n_stacks = 1 },
        };
        PprofData d = { .total_samples = 21, .start_usec = 1000000, .end_usec = 3500000, .frequency = 99,
                        .processes = processes, .n_processes = 2 };

        ck_assert_int_eq(pprof_build(&d, "test", ret, ret_size), 0);
}

static const ReportRow *row(const ReportTable *t, const char *name, const char *module, bool inlined)
{
        for (size_t i = 0; i < t->n_rows; i++)
                if (strcmp(t->rows[i].name, name) == 0 && (!module || strcmp(t->rows[i].module, module) == 0) &&
                    t->rows[i].inlined == inlined)
                        return &t->rows[i];
        ck_abort_msg("no row %s", name);
        return NULL;
}

static void check_row(const ReportTable *t, const char *name, const char *module, bool inlined, uint64_t inclusive,
                      uint64_t exclusive)
{
        const ReportRow *r = row(t, name, module, inlined);

        ck_assert_msg(r->inclusive == inclusive && r->exclusive == exclusive, "%s: %" PRIu64 "/%" PRIu64, name,
                      r->inclusive, r->exclusive);
}

static void check_tables(const WindowTables *w)
{
        const StackTable *s = w->stacks;
        bool kernel_seen = false, inline_seen = false;

        ck_assert_uint_eq(w->frequency, 99);
        ck_assert_uint_eq(w->functions->total_samples, 21);
        ck_assert_uint_eq(w->functions->window_start_usec, 1000000);
        ck_assert_uint_eq(w->functions->window_end_usec, 3500000);
        /* Inclusive once per sample (work twice in the recursion counts 4), exclusive in the leaf. */
        ck_assert_uint_eq(w->functions->n_rows, 5);
        check_row(w->functions, "main", "app", false, 21, 0);
        check_row(w->functions, "work", "app", false, 19, 11);
        check_row(w->functions, "leaf", "app", true, 3, 3);
        check_row(w->functions, "do_syscall_64", "[kernel]", false, 5, 5);
        check_row(w->functions, "handler", "/srv/app.py", false, 2, 2);
        ck_assert_str_eq(w->functions->rows[0].name, "main"); /* sorted by inclusive */
        ck_assert_uint_eq(w->modules->n_rows, 3);
        check_row(w->modules, "app", NULL, false, 21, 14);
        check_row(w->modules, "[kernel]", NULL, false, 5, 5);
        check_row(w->modules, "/srv/app.py", NULL, false, 2, 2);
        /* Threads by name, from the samples' labels. */
        ck_assert_uint_eq(w->threads->n_rows, 3);
        check_row(w->threads, "worker", NULL, false, 7, 7);
        check_row(w->threads, "app", NULL, false, 7, 7);
        check_row(w->threads, "app-child", NULL, false, 7, 7);
        /* The stacks outermost first, the kernel's at the end, the inlined frame marked. */
        ck_assert_uint_eq(s->total_samples, 21);
        ck_assert_uint_eq(s->n_stacks, 5);
        for (size_t i = 0; i < s->n_stacks; i++) {
                const StackEntry *e = &s->stacks[i];

                ck_assert_str_eq(s->functions[e->frames[0]].function, "main");
                if (e->n_kernel) {
                        ck_assert_uint_eq(e->n_kernel, 1);
                        ck_assert_uint_eq(e->n_frames, 3);
                        ck_assert_str_eq(s->functions[e->frames[2]].function, "do_syscall_64");
                        ck_assert_uint_eq(e->samples, 5);
                        kernel_seen = true;
                }
                if (s->functions[e->frames[e->n_frames - 1]].inlined) {
                        ck_assert_str_eq(s->functions[e->frames[1]].function, "work");
                        ck_assert_str_eq(s->functions[e->frames[2]].function, "leaf");
                        inline_seen = true;
                }
                if (strcmp(s->functions[e->frames[e->n_frames - 1]].function, "handler") == 0)
                        ck_assert(s->functions[e->frames[e->n_frames - 1]].python);
        }
        ck_assert(kernel_seen && inline_seen);
}

START_TEST(test_round_trip)
{
        _cleanup_free_ uint8_t *data = NULL;
        _cleanup_free_ void *gz = NULL;
        _cleanup_(window_tables_done) WindowTables raw = {}, packed = {};
        _cleanup_(diff_table_freep) DiffTable *t = NULL;
        size_t size, gz_size;

        pack(&data, &size);
        ck_assert_int_eq(window_tables_from_pprof(data, size, &raw), 0);
        check_tables(&raw);
        ck_assert_int_eq(pprof_gzip(data, size, 0, &gz, &gz_size), 0);
        ck_assert_int_eq(window_tables_from_pprof(gz, gz_size, &packed), 0);
        check_tables(&packed);
        /* A profile against itself: nothing changed, in every row. */
        ck_assert_int_eq(diff_tables(&raw, &packed, DIFF_BY_FUNCTION, true, &t), 0);
        ck_assert_uint_eq(t->n_rows, 5);
        for (size_t i = 0; i < t->n_rows; i++)
                ck_assert(t->rows[i].points == 0 && !t->rows[i].is_new && !t->rows[i].gone);
}
END_TEST

/* The valid file unpacked, changed by f, packed again. */
static uint8_t *repack(void (*f)(PbProfile *p), size_t *ret_size)
{
        _cleanup_free_ uint8_t *data = NULL;
        uint8_t *out;
        PbProfile *p;
        size_t size;

        pack(&data, &size);
        p = perftools__profiles__profile__unpack(NULL, size, data);
        ck_assert_ptr_nonnull(p);
        f(p);
        out = malloc(perftools__profiles__profile__get_packed_size(p) + 1);
        ck_assert_ptr_nonnull(out);
        *ret_size = perftools__profiles__profile__pack(p, out);
        perftools__profiles__profile__free_unpacked(p, NULL);
        return out;
}

/* Such a file read: the error expected. */
static void expect_error(void (*f)(PbProfile *p), int error)
{
        _cleanup_(pprof_read_freep) PprofRead *r = NULL;
        size_t size;
        _cleanup_free_ uint8_t *data = repack(f, &size);

        ck_assert_int_eq(pprof_read(data, size, &r), error);
        ck_assert_ptr_null(r);
}

static void unknown_location(PbProfile *p)
{
        p->sample[0]->location_id[0] = 999;
}
static void unknown_function(PbProfile *p)
{
        p->location[0]->line[0]->function_id = 999;
}
static void unknown_mapping(PbProfile *p)
{
        p->location[0]->mapping_id = 999;
}
static void same_location_id(PbProfile *p)
{
        p->location[1]->id = p->location[0]->id;
}
static void location_id_zero(PbProfile *p)
{
        p->location[0]->id = 0;
}
static void negative_count(PbProfile *p)
{
        p->sample[0]->value[0] = -1;
}
static void values_missing(PbProfile *p)
{
        p->sample[0]->n_value = 1;
}
static void name_out_of_table(PbProfile *p)
{
        p->function[0]->name = (int64_t)p->n_string_table;
}
static void first_string_not_empty(PbProfile *p)
{
        char *first = p->string_table[0];

        p->string_table[0] = p->string_table[1];
        p->string_table[1] = first;
}
static void negative_period(PbProfile *p)
{
        p->period = -10101010;
}
static void zero_period(PbProfile *p)
{
        p->period = 0;
}
static void no_duration(PbProfile *p)
{
        p->duration_nanos = 0;
}
/* Changed in place (the message's own allocations stay as they are, for free_unpacked()). */
static void no_sample_count(PbProfile *p)
{
        /* cpu/nanoseconds twice: the first, the CPU time, counted as value / period. */
        p->sample_type[0]->type = p->sample_type[1]->type;
        p->sample_type[0]->unit = p->sample_type[1]->unit;
        for (size_t i = 0; i < p->n_sample; i++)
                p->sample[i]->value[0] = p->sample[i]->value[1];
}
static void unknown_unit(PbProfile *p)
{
        p->period_type->unit = p->period_type->type; /* "cpu" */
}
static void period_type_out_of_table(PbProfile *p)
{
        no_sample_count(p);
        p->period_type->type = (int64_t)p->n_string_table;
}

START_TEST(test_lies_refused)
{
        expect_error(unknown_location, -EBADMSG);
        expect_error(unknown_function, -EBADMSG);
        expect_error(unknown_mapping, -EBADMSG);
        expect_error(same_location_id, -EBADMSG);
        expect_error(location_id_zero, -EBADMSG);
        expect_error(negative_count, -EBADMSG);
        expect_error(values_missing, -EBADMSG);
        expect_error(name_out_of_table, -EBADMSG);
        expect_error(first_string_not_empty, -EBADMSG);
        expect_error(negative_period, -EMEDIUMTYPE);
        expect_error(zero_period, -EMEDIUMTYPE);
        expect_error(no_duration, -EMEDIUMTYPE);
        expect_error(unknown_unit, -EMEDIUMTYPE);
        expect_error(period_type_out_of_table, -EMEDIUMTYPE);
}
END_TEST

START_TEST(test_time_values_counted_by_period)
{
        _cleanup_(pprof_read_freep) PprofRead *r = NULL;
        size_t size;
        _cleanup_free_ uint8_t *data = repack(no_sample_count, &size);

        ck_assert_int_eq(pprof_read(data, size, &r), 0);
        ck_assert_uint_eq(r->total_samples, 21);
        ck_assert_uint_eq(r->frequency, 99);
}
END_TEST

START_TEST(test_not_a_profile)
{
        static const uint8_t garbage[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12 };
        _cleanup_free_ uint8_t *data = NULL;
        _cleanup_free_ void *gz = NULL, *big = NULL, *back = NULL;
        _cleanup_(pprof_read_freep) PprofRead *r = NULL;
        size_t size, gz_size, n;

        ck_assert_int_eq(pprof_read(garbage, sizeof(garbage), &r), -EBADMSG);
        ck_assert_int_eq(pprof_read((const uint8_t *)"", 0, &r), -EBADMSG); /* no string table */
        /* A gzip stream cut short, or its header alone. */
        pack(&data, &size);
        ck_assert_int_eq(pprof_gzip(data, size, 0, &gz, &gz_size), 0);
        ck_assert_int_eq(pprof_read(gz, gz_size / 2, &r), -EBADMSG);
        ck_assert_int_eq(pprof_read(gz, 10, &r), -EBADMSG);
        ck_assert_int_eq(pprof_read(gz, 2, &r), -EBADMSG);
        ck_assert_ptr_null(r);
        /* What inflates past the bound stops there. */
        big = calloc(1, 1 << 20);
        ck_assert_ptr_nonnull(big);
        free(gz);
        gz = NULL;
        ck_assert_int_eq(pprof_gzip(big, 1 << 20, 0, &gz, &gz_size), 0);
        ck_assert_int_eq(pprof_gunzip(gz, gz_size, 1 << 19, &back, &n), -EFBIG);
        ck_assert_int_eq(pprof_gunzip(gz, gz_size, 1 << 20, &back, &n), 0);
        ck_assert_uint_eq(n, 1 << 20);
        ck_assert_int_eq(memcmp(back, big, n), 0);
}
END_TEST

START_TEST(test_files)
{
        _cleanup_(window_tables_done) WindowTables w = {};

        ck_assert_int_eq(window_tables_from_pprof_file("/nonexistent/base.pb.gz", &w), -ENOENT);
        ck_assert_int_eq(window_tables_from_pprof_file("/dev/null", &w), -EBADFD);
        ck_assert_int_eq(window_tables_from_pprof_file("/", &w), -EBADFD);
        ck_assert_int_eq(window_tables_from_pprof_file("/etc/passwd", &w), -EBADMSG);
        ck_assert_ptr_null(w.functions);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("diff-base-pprof");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_lies_refused);
        tcase_add_test(tc, test_time_values_counted_by_period);
        tcase_add_test(tc, test_not_a_profile);
        tcase_add_test(tc, test_files);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
