/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pprof_build() on hand-made GetProfile data: the packed bytes unpacked with protobuf-c's generated code, every
 * field checked against the input; pprof_gzip() inflated back with zlib. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check-main.h"
#include "macros.h"
#include "pprof-build.h"
#include "pprof-gzip.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;

/* Two processes of a service: the same functions in both (one Function each, a Location per process), a kernel
 * frame, a demangled name, a thread known and one not, off-CPU time. */
static const uint32_t stack_a[] = { 4, 0, 1 };    /* kernel leaf, then work, main */
static const uint32_t stack_b[] = { 2, 1 };       /* Foo::bar(), main */
static const uint32_t stack_other[] = { 3 };      /* [other] */
static const uint32_t stack_c[] = { 0, 1 };       /* work, main in the second process */

static PprofMapping mappings_1[] = {
        { "app", "/usr/bin/app", "0123abcd", 0x400000, 0x401000, 0x1000 },
        { "libc.so.6", "/lib/libc.so.6", "", 0x7f0000, 0x7f8000, 0x2000 },
};
static PprofFunction functions_1[] = {
        { "app", "work", "", 0x400100 },
        { "app", "main", "", 0x400200 },
        { "app", "Foo::bar()", "_ZN3Foo3barEv", 0x400300 },
        { "[other]", "[other]", "", 0 },
        { "[kernel]", "do_syscall_64", "", UINT64_C(0xffffffff81000000) },
};
static PprofThread threads_1[] = { { 11, "worker" }, { 10, "app" } };
static PprofStack stacks_1[] = {
        { stack_a, 3, 1, 11, 5, 0 },
        { stack_b, 2, 0, 0, 3, 700 },
        { stack_other, 1, 0, 10, 2, 0 },
};
static PprofMapping mappings_2[] = { { "app", "/usr/bin/app", "0123abcd", 0x500000, 0x501000, 0x1000 } };
static PprofFunction functions_2[] = { { "app", "work", "", 0x500100 }, { "app", "main", "", 0x500200 } };
static PprofStack stacks_2[] = { { stack_c, 2, 0, 21, 7, 0 } };

static PprofData make_data(PprofProcess processes[2])
{
        processes[0] = (PprofProcess){
                .pid = 10, .comm = "app", .unit = "app.service",
                .mappings = mappings_1, .n_mappings = ELEMENTSOF(mappings_1),
                .functions = functions_1, .n_functions = ELEMENTSOF(functions_1),
                .threads = threads_1, .n_threads = ELEMENTSOF(threads_1),
                .stacks = stacks_1, .n_stacks = ELEMENTSOF(stacks_1),
        };
        processes[1] = (PprofProcess){
                .pid = 20, .comm = "app-child", .unit = "app.service",
                .mappings = mappings_2, .n_mappings = ELEMENTSOF(mappings_2),
                .functions = functions_2, .n_functions = ELEMENTSOF(functions_2),
                .stacks = stacks_2, .n_stacks = ELEMENTSOF(stacks_2),
        };
        return (PprofData){
                .total_samples = 17, .start_usec = 1000000, .end_usec = 3500000, .frequency = 99, .off_cpu = true,
                .processes = processes, .n_processes = 2,
        };
}

static PbProfile *build(const PprofData *d)
{
        _cleanup_free_ uint8_t *data = NULL;
        PbProfile *p;
        size_t size;

        ck_assert_int_eq(pprof_build(d, "vprof test", &data, &size), 0);
        p = perftools__profiles__profile__unpack(NULL, size, data);
        ck_assert_ptr_nonnull(p);
        return p;
}

static const char *str(const PbProfile *p, int64_t i)
{
        ck_assert_int_ge(i, 0);
        ck_assert_uint_lt((uint64_t)i, p->n_string_table);
        return p->string_table[i];
}

static const Perftools__Profiles__Location *location(const PbProfile *p, uint64_t id)
{
        ck_assert_uint_ge(id, 1);
        ck_assert_uint_le(id, p->n_location);
        ck_assert_uint_eq(p->location[id - 1]->id, id);
        return p->location[id - 1];
}

static const Perftools__Profiles__Function *function(const PbProfile *p, uint64_t id)
{
        ck_assert_uint_ge(id, 1);
        ck_assert_uint_le(id, p->n_function);
        ck_assert_uint_eq(p->function[id - 1]->id, id);
        return p->function[id - 1];
}

static const Perftools__Profiles__Mapping *mapping(const PbProfile *p, uint64_t id)
{
        ck_assert_uint_ge(id, 1);
        ck_assert_uint_le(id, p->n_mapping);
        ck_assert_uint_eq(p->mapping[id - 1]->id, id);
        return p->mapping[id - 1];
}

/* A label of the sample by key: its string, or its number in *num; NULL when absent. */
static const char *label(const PbProfile *p, const Perftools__Profiles__Sample *s, const char *key, int64_t *num)
{
        for (size_t i = 0; i < s->n_label; i++)
                if (strcmp(str(p, s->label[i]->key), key) == 0) {
                        if (num)
                                *num = s->label[i]->num;
                        return str(p, s->label[i]->str);
                }
        return NULL;
}

START_TEST(test_header)
{
        PprofProcess processes[2];
        PprofData d = make_data(processes);
        PbProfile *p = build(&d);

        ck_assert_str_eq(str(p, 0), "");
        ck_assert_uint_eq(p->n_sample_type, 3);
        ck_assert_str_eq(str(p, p->sample_type[0]->type), "samples");
        ck_assert_str_eq(str(p, p->sample_type[0]->unit), "count");
        ck_assert_str_eq(str(p, p->sample_type[1]->type), "cpu");
        ck_assert_str_eq(str(p, p->sample_type[1]->unit), "nanoseconds");
        ck_assert_str_eq(str(p, p->sample_type[2]->type), "off-cpu");
        ck_assert_str_eq(str(p, p->sample_type[2]->unit), "nanoseconds");
        ck_assert_str_eq(str(p, p->period_type->type), "cpu");
        ck_assert_str_eq(str(p, p->period_type->unit), "nanoseconds");
        ck_assert_int_eq(p->period, 1000000000 / 99);
        ck_assert_int_eq(p->time_nanos, INT64_C(1000000000));
        ck_assert_int_eq(p->duration_nanos, INT64_C(2500000000));
        ck_assert_str_eq(str(p, p->default_sample_type), "cpu");
        ck_assert_uint_eq(p->n_comment, 1);
        ck_assert_str_eq(str(p, p->comment[0]), "vprof test");
        /* Every string once. */
        for (size_t i = 0; i < p->n_string_table; i++)
                for (size_t j = i + 1; j < p->n_string_table; j++)
                        ck_assert_str_ne(p->string_table[i], p->string_table[j]);
        perftools__profiles__profile__free_unpacked(p, NULL);

        /* Without off-CPU time, two sample types. */
        d.off_cpu = false;
        p = build(&d);
        ck_assert_uint_eq(p->n_sample_type, 2);
        for (size_t i = 0; i < p->n_sample; i++)
                ck_assert_uint_eq(p->sample[i]->n_value, 2);
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(test_mappings_functions_locations)
{
        PprofProcess processes[2];
        PprofData d = make_data(processes);
        PbProfile *p = build(&d);
        size_t kernel = 0;

        /* The first process's two mappings, the kernel's (made for its first kernel frame), the second's. */
        ck_assert_uint_eq(p->n_mapping, 4);
        ck_assert_uint_eq(mapping(p, 1)->memory_start, 0x400000);
        ck_assert_uint_eq(mapping(p, 1)->memory_limit, 0x401000);
        ck_assert_uint_eq(mapping(p, 1)->file_offset, 0x1000);
        ck_assert_str_eq(str(p, mapping(p, 1)->filename), "/usr/bin/app");
        ck_assert_str_eq(str(p, mapping(p, 1)->build_id), "0123abcd");
        ck_assert_str_eq(str(p, mapping(p, 2)->filename), "/lib/libc.so.6");
        ck_assert_str_eq(str(p, mapping(p, 2)->build_id), "");
        ck_assert_uint_eq(mapping(p, 4)->memory_start, 0x500000);
        ck_assert_str_eq(str(p, mapping(p, 3)->filename), "[kernel.kallsyms]");
        ck_assert_uint_eq(mapping(p, 3)->memory_start, UINT64_C(0xffffffff81000000));
        ck_assert_uint_eq(mapping(p, 3)->memory_limit, UINT64_C(0xffffffff81000001));
        for (size_t i = 1; i <= p->n_mapping; i++) {
                ck_assert(mapping(p, i)->has_functions);
                kernel += strcmp(str(p, mapping(p, i)->filename), "[kernel.kallsyms]") == 0;
        }
        ck_assert_uint_eq(kernel, 1);

        /* One Function per (module, name): work, main, Foo::bar(), [other], do_syscall_64. */
        ck_assert_uint_eq(p->n_function, 5);
        for (size_t i = 1; i <= p->n_function; i++) {
                const Perftools__Profiles__Function *f = function(p, i);
                if (strcmp(str(p, f->name), "Foo::bar()") == 0)
                        ck_assert_str_eq(str(p, f->system_name), "_ZN3Foo3barEv");
                else
                        ck_assert_str_eq(str(p, f->system_name), str(p, f->name));
        }
        /* A Location per function of a process that a stack uses: 5 of the first, 2 of the second. */
        ck_assert_uint_eq(p->n_location, 7);
        for (size_t i = 1; i <= p->n_location; i++) {
                const Perftools__Profiles__Location *l = location(p, i);
                const Perftools__Profiles__Function *f;

                ck_assert_uint_eq(l->n_line, 1);
                f = function(p, l->line[0]->function_id);
                if (strcmp(str(p, f->name), "[other]") == 0) {
                        ck_assert_uint_eq(l->mapping_id, 0); /* in no file */
                        ck_assert_uint_eq(l->address, 0);
                } else if (strcmp(str(p, f->name), "do_syscall_64") == 0) {
                        ck_assert_str_eq(str(p, mapping(p, l->mapping_id)->filename), "[kernel.kallsyms]");
                        ck_assert_uint_eq(l->address, UINT64_C(0xffffffff81000000));
                } else {
                        const Perftools__Profiles__Mapping *m = mapping(p, l->mapping_id);
                        ck_assert_uint_ge(l->address, m->memory_start);
                        ck_assert_uint_lt(l->address, m->memory_limit);
                }
        }
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* Each sample as its stack: the functions leaf first, the values, the labels. */
START_TEST(test_samples)
{
        PprofProcess processes[2];
        PprofData d = make_data(processes);
        PbProfile *p = build(&d);
        uint64_t samples = 0;

        ck_assert_uint_eq(p->n_sample, 4);
        for (size_t i = 0; i < d.n_processes; i++)
                for (size_t j = 0; j < d.processes[i].n_stacks; j++) {
                        const PprofProcess *pr = &d.processes[i];
                        const PprofStack *st = &pr->stacks[j];
                        const Perftools__Profiles__Sample *s = p->sample[i == 0 ? j : 3];
                        const char *comm;
                        int64_t num = -1;

                        ck_assert_uint_eq(s->n_location_id, st->n_frames);
                        for (size_t f = 0; f < st->n_frames; f++) {
                                const Perftools__Profiles__Location *l = location(p, s->location_id[f]);
                                const PprofFunction *want = &pr->functions[st->frames[f]];
                                ck_assert_str_eq(str(p, function(p, l->line[0]->function_id)->name), want->name);
                                ck_assert_uint_eq(l->address, want->address);
                        }
                        ck_assert_uint_eq(s->n_value, 3);
                        ck_assert_int_eq(s->value[0], (int64_t)st->samples);
                        ck_assert_int_eq(s->value[1], (int64_t)st->samples * (1000000000 / 99));
                        ck_assert_int_eq(s->value[2], (int64_t)st->off_ns);
                        samples += (uint64_t)s->value[0];

                        ck_assert_ptr_nonnull(label(p, s, "pid", &num));
                        ck_assert_int_eq(num, pr->pid);
                        if (st->tid) {
                                ck_assert_ptr_nonnull(label(p, s, "tid", &num));
                                ck_assert_int_eq(num, st->tid);
                        } else
                                ck_assert_ptr_null(label(p, s, "tid", NULL));
                        comm = label(p, s, "comm", NULL);
                        ck_assert_ptr_nonnull(comm);
                        /* The thread's name when it is known and named, else the process's. */
                        ck_assert_str_eq(comm, st->tid == 11 ? "worker" : st->tid == 10 ? "app" : pr->comm);
                        ck_assert_str_eq(label(p, s, "unit", NULL), "app.service");
                }
        ck_assert_uint_eq(samples, d.total_samples);
        perftools__profiles__profile__free_unpacked(p, NULL);

        /* No unit label when the target is no unit. */
        processes[0].unit = processes[1].unit = "";
        p = build(&d);
        for (size_t i = 0; i < p->n_sample; i++)
                ck_assert_ptr_null(label(p, p->sample[i], "unit", NULL));
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

START_TEST(test_bad_index_and_empty)
{
        static const uint32_t bad[] = { 0, 9 };
        PprofStack stack = { bad, 2, 0, 0, 1, 0 };
        PprofProcess processes[2];
        PprofData d = make_data(processes), empty = {};
        _cleanup_free_ uint8_t *data = NULL;
        PbProfile *p;
        size_t size;

        processes[1].stacks = &stack;
        processes[1].n_stacks = 1;
        ck_assert_int_eq(pprof_build(&d, NULL, &data, &size), -EINVAL);

        /* Nothing at all still makes a valid profile. */
        p = build(&empty);
        ck_assert_uint_eq(p->n_sample, 0);
        ck_assert_str_eq(str(p, 0), "");
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* The names of a location's lines, ';'-separated, in their order. */
static void line_names(const PbProfile *p, const Perftools__Profiles__Location *l, char *buf, size_t size)
{
        buf[0] = 0;
        for (size_t i = 0; i < l->n_line; i++) {
                size_t n = strlen(buf);
                snprintf(buf + n, size - n, "%s%s", i ? ";" : "", str(p, function(p, l->line[i]->function_id)->name));
        }
}

/* An address in inlined code: the inlined frames (innermost first) and the function they are inlined into are one
 * Location with a Line each, in that order, at the outer function's address; the same chain again is the same
 * Location; the same function called (a row of its own, not inlined) has a Location of its own; a kernel frame
 * before a chain stays apart. */
START_TEST(test_inlined_lines)
{
        static PprofFunction functions[] = {
                { "app", "add", "", 0x400100, true },         /* 0: inlined */
                { "app", "square", "", 0x400100, true },      /* 1: inlined */
                { "app", "compute", "", 0x400100 },           /* 2: what they are inlined into */
                { "app", "main", "", 0x400200 },              /* 3 */
                { "app", "add", "", 0x400300 },               /* 4: add, called */
                { "[kernel]", "irq_exit", "", UINT64_C(0xffffffff81000000) }, /* 5 */
        };
        static const uint32_t chain[] = { 0, 1, 2, 3 }, again[] = { 5, 1, 2, 3 }, called[] = { 4, 0, 2, 3 };
        static PprofStack stacks[] = {
                { chain, 4, 0, 0, 5, 0 },
                { again, 4, 1, 0, 2, 0 },
                { called, 4, 0, 0, 1, 0 },
        };
        static PprofMapping mappings[] = { { "app", "/usr/bin/app", "", 0x400000, 0x401000, 0 } };
        PprofProcess process = {
                .pid = 10, .comm = "app", .unit = "",
                .mappings = mappings, .n_mappings = 1,
                .functions = functions, .n_functions = ELEMENTSOF(functions),
                .stacks = stacks, .n_stacks = ELEMENTSOF(stacks),
        };
        PprofData d = { .total_samples = 8, .frequency = 99, .processes = &process, .n_processes = 1 };
        static const char *const want[][3] = {
                { "add;square;compute", "main" },
                { "irq_exit", "square;compute", "main" },
                { "add", "add;compute", "main" },
        };
        static const size_t n_want[] = { 2, 3, 3 };
        PbProfile *p = build(&d);
        char names[128];

        ck_assert_uint_eq(p->n_sample, 3);
        for (size_t i = 0; i < p->n_sample; i++) {
                const Perftools__Profiles__Sample *s = p->sample[i];

                ck_assert_uint_eq(s->n_location_id, n_want[i]);
                for (size_t j = 0; j < s->n_location_id; j++) {
                        const Perftools__Profiles__Location *l = location(p, s->location_id[j]);

                        line_names(p, l, names, sizeof(names));
                        ck_assert_str_eq(names, want[i][j]);
                        if (l->n_line > 1)
                                ck_assert_uint_eq(l->address, 0x400100);
                }
        }
        /* main's Location once; "add" one Function for both its Locations. */
        ck_assert_uint_eq(p->sample[0]->location_id[1], p->sample[2]->location_id[2]);
        ck_assert_uint_eq(p->n_function, 5);
        /* add;square;compute, main, irq_exit, square;compute, add (called), add;compute. */
        ck_assert_uint_eq(p->n_location, 6);
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* Python frames at their lines (GetProfile's lines): one Function per (module, name) starting at the def line, a
 * Location per line with that line, so that go tool pprof -list places samples on lines. */
START_TEST(test_frame_lines)
{
        static PprofFunction functions[] = {
                { "app.py", "loop", "", 0, false, "/srv/app.py", 7, 9 },  /* 0: loop at line 9 */
                { "app.py", "loop", "", 0, false, "/srv/app.py", 7, 12 }, /* 1: loop at line 12 */
                { "app.py", "main", "", 0, false, "/srv/app.py", 20, 0 }, /* 2: main, no line of its own */
        };
        static const uint32_t at9[] = { 0, 2 }, at12[] = { 1, 2 };
        static PprofStack stacks[] = { { at9, 2, 0, 0, 3, 0 }, { at12, 2, 0, 0, 1, 0 } };
        PprofProcess process = {
                .pid = 10, .comm = "python3", .unit = "",
                .functions = functions, .n_functions = ELEMENTSOF(functions),
                .stacks = stacks, .n_stacks = ELEMENTSOF(stacks),
        };
        PprofData d = { .total_samples = 4, .frequency = 99, .processes = &process, .n_processes = 1 };
        PbProfile *p = build(&d);
        const Perftools__Profiles__Location *l9, *l12, *lmain;

        ck_assert_uint_eq(p->n_sample, 2);
        ck_assert_uint_eq(p->n_function, 2);
        l9 = location(p, p->sample[0]->location_id[0]);
        l12 = location(p, p->sample[1]->location_id[0]);
        lmain = location(p, p->sample[0]->location_id[1]);
        ck_assert_uint_ne(l9->id, l12->id);
        ck_assert_int_eq(l9->line[0]->line, 9);
        ck_assert_int_eq(l12->line[0]->line, 12);
        ck_assert_uint_eq(l9->line[0]->function_id, l12->line[0]->function_id);
        ck_assert_int_eq(function(p, l9->line[0]->function_id)->start_line, 7);
        ck_assert_str_eq(str(p, function(p, l9->line[0]->function_id)->filename), "/srv/app.py");
        ck_assert_int_eq(lmain->line[0]->line, 20);
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

/* Every function of the data referenced and distinct, no [other] after them (vprofctl diff's files): a lookup
 * of a function made already must not write past the arrays, which have room for the data's functions only. */
START_TEST(test_every_function_used)
{
        /* b alone, then a inlined into b: the chain's Location looks b up once both are made. */
        static PprofFunction functions[] = { { "app", "b", "" }, { "app", "a", "", 0, true } };
        static const uint32_t b_only[] = { 0 }, ab[] = { 1, 0 }, again[] = { 1, 0 };
        static PprofStack stacks[] = { { b_only, 1, 0, 0, 2, 0 }, { ab, 2, 0, 0, 3, 0 }, { again, 2, 0, 0, 1, 0 } };
        PprofProcess process = {
                .pid = 0, .comm = "diff", .unit = "",
                .functions = functions, .n_functions = ELEMENTSOF(functions),
                .stacks = stacks, .n_stacks = ELEMENTSOF(stacks),
        };
        PprofData d = { .total_samples = 6, .frequency = 99, .processes = &process, .n_processes = 1 };
        PbProfile *p = build(&d);

        ck_assert_uint_eq(p->n_sample, 3);
        ck_assert_uint_eq(p->n_function, 2);
        ck_assert_uint_eq(p->n_mapping, 0);
        perftools__profiles__profile__free_unpacked(p, NULL);
}
END_TEST

static void inflate_all(const void *in, size_t n, uint8_t *out, size_t room, size_t *ret_n)
{
        z_stream z = {};

        ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK); /* gzip only */
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)n;
        z.next_out = out;
        z.avail_out = (uInt)room;
        ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
        *ret_n = z.total_out;
        inflateEnd(&z);
}

START_TEST(test_gzip_round_trip)
{
        PprofProcess processes[2];
        PprofData d = make_data(processes);
        _cleanup_free_ uint8_t *packed = NULL, *back = NULL;
        _cleanup_free_ void *gz = NULL;
        size_t size, gz_size, back_size;
        const uint8_t *g;

        ck_assert_int_eq(pprof_build(&d, "vprof test", &packed, &size), 0);
        ck_assert_int_eq(pprof_gzip(packed, size, 0, &gz, &gz_size), 0);
        g = gz;
        ck_assert_uint_gt(gz_size, 18);
        ck_assert_uint_eq(g[0], 0x1f); /* the gzip magic */
        ck_assert_uint_eq(g[1], 0x8b);
        back = malloc(size + 1);
        ck_assert_ptr_nonnull(back);
        inflate_all(gz, gz_size, back, size + 1, &back_size);
        ck_assert_uint_eq(back_size, size);
        ck_assert_mem_eq(back, packed, size);

        /* The bound: exactly the size passes, a byte less does not. */
        free(gz);
        gz = NULL;
        ck_assert_int_eq(pprof_gzip(packed, size, gz_size, &gz, &back_size), 0);
        ck_assert_uint_eq(back_size, gz_size);
        free(gz);
        gz = NULL;
        ck_assert_int_eq(pprof_gzip(packed, size, gz_size - 1, &gz, &back_size), -EFBIG);
        ck_assert_ptr_null(gz);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("pprof-build");
        TCase *tc = tcase_create("build");

        tcase_add_test(tc, test_header);
        tcase_add_test(tc, test_mappings_functions_locations);
        tcase_add_test(tc, test_samples);
        tcase_add_test(tc, test_bad_index_and_empty);
        tcase_add_test(tc, test_inlined_lines);
        tcase_add_test(tc, test_frame_lines);
        tcase_add_test(tc, test_every_function_used);
        tcase_add_test(tc, test_gzip_round_trip);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
