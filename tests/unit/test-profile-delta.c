/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "profile-delta.h"
#include "profile-random.h"
#include "profile-serialize.h"

/* The central property: replaying the deltas of a period onto the profile as it was before gives exactly the
 * profile after it, byte for byte of its saved form. */

static void serialize(const Profile *p, uint8_t **ret, size_t *ret_size)
{
        ck_assert_int_eq(profile_serialize_data(p, (void **)ret, ret_size), 0);
}

static Profile *copy(const Profile *p)
{
        _cleanup_free_ uint8_t *data = NULL;
        const char *error = NULL;
        Profile *q = NULL;
        size_t size;

        serialize(p, &data, &size);
        ck_assert_msg(profile_serialize_parse(data, size, &q, &error) == 0, "parse: %s", error);
        return q;
}

static void assert_same_bytes(const Profile *a, const Profile *b, const char *what)
{
        _cleanup_free_ uint8_t *x = NULL, *y = NULL;
        size_t nx, ny;

        serialize(a, &x, &nx);
        serialize(b, &y, &ny);
        ck_assert_msg(nx == ny && memcmp(x, y, nx) == 0, "%s: %zu bytes against %zu, or other bytes", what, nx, ny);
}

/* The delta's written form, bare sections. */
static void write_delta(const ProfileDelta *d, const Profile *p, uint8_t **ret, size_t *ret_size)
{
        SectionWriter w;

        section_writer_init_bare(&w);
        profile_delta_write(d, p, &w);
        ck_assert_int_eq(w.error, 0);
        *ret = w.data;
        *ret_size = w.size;
}

static int apply(const uint8_t *data, size_t size, Profile *p, const char **ret_error)
{
        const char *error = NULL;
        SectionReader r;
        int k;

        section_reader_init(&r, data, size, &error);
        k = profile_delta_apply(&r, p);
        if (ret_error)
                *ret_error = error;
        return k;
}

/* n random samples into p and d, as the daemon's drain does. */
static void add_samples(RandomStream *rs, Profile *p, ProfileDelta *d, size_t n)
{
        uint32_t frames[RANDOM_MAX_FRAMES], stack_id;
        ProfileSample s;

        for (size_t i = 0; i < n; i++) {
                random_sample(rs, p, frames, &s, &stack_id);
                ck_assert_int_eq(profile_delta_add(d, &s, stack_id), 0);
        }
}

static void replay_stream(uint64_t seed, bool limits, bool off_cpu)
{
        _cleanup_(profile_freep) Profile *p = NULL, *replica = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        RandomStream rs;

        random_stream_init(&rs, seed, off_cpu);
        ck_assert_int_eq(profile_new(997, &p), 0);
        if (limits)
                profile_set_limits(p, 25, 30);
        ck_assert_int_eq(profile_delta_new(&d), 0);

        /* Some history before the snapshot the deltas continue; the replica starts from its saved form. */
        profile_delta_begin(d, p);
        add_samples(&rs, p, d, random_below(&rs, 300));
        replica = copy(p);

        for (int interval = 0; interval < 25; interval++) {
                _cleanup_free_ uint8_t *data = NULL;
                const char *error = NULL;
                size_t size, n = random_below(&rs, 4) == 0 ? 0 : random_below(&rs, 400);

                profile_delta_begin(d, p);
                add_samples(&rs, p, d, n);
                profile_delta_end(d, p);
                ck_assert(n > 0 || profile_delta_empty(d));
                ck_assert_uint_eq(profile_delta_lost(d), 0);
                write_delta(d, p, &data, &size);
                ck_assert_msg(apply(data, size, replica, &error) == 0, "seed %llu interval %d: %s",
                              (unsigned long long)seed, interval, error);
                assert_same_bytes(p, replica, "after a replayed interval");
        }
        if (limits) {
                ck_assert_uint_gt(profile_other_stack_samples(p), 0);
                ck_assert_uint_gt(profile_other_function_samples(p), 0);
        }
}

START_TEST(test_replay_equals_live)
{
        for (uint64_t seed = 1; seed <= 12; seed++)
                replay_stream(seed, false, false);
}
END_TEST

START_TEST(test_replay_equals_live_off_cpu)
{
        for (uint64_t seed = 100; seed <= 112; seed++)
                replay_stream(seed, false, true);
}
END_TEST

START_TEST(test_replay_equals_live_past_limits)
{
        for (uint64_t seed = 200; seed <= 212; seed++)
                replay_stream(seed, true, seed % 2);
}
END_TEST

/* profile_add_counts() of n samples is n profile_add_sample() calls, for every kind, a kernel-only stack and a
 * recursive one. */
START_TEST(test_weighted_counting)
{
        _cleanup_(profile_freep) Profile *a = NULL, *b = NULL;
        uint32_t main_id, rec, sys, stack_rec, stack_sys, stack_other;
        const uint32_t rec_frames[] = { 0, 1, 1, 0 }; /* ids: main 0, rec 1, sys 2 */
        const uint32_t sys_frames[] = { 2 };
        const uint32_t mixed[] = { 2, 1, 0 };

        for (int i = 0; i < 2; i++) {
                Profile **p = i == 0 ? &a : &b;
                ck_assert_int_eq(profile_new(99, p), 0);
                profile_set_limits(*p, 0, 2);
                ck_assert_int_eq(profile_intern_function(*p, "app", "main", &main_id), 0);
                ck_assert_int_eq(profile_intern_function(*p, "app", "rec", &rec), 0);
                ck_assert_int_eq(profile_intern_function(*p, "[kernel]", "sys", &sys), 0);
                /* One sample each defines the stacks (the third is past the limit), in both. */
                ck_assert_int_eq(profile_add_sample_stack(*p, &(ProfileSample){ .tid = 7, .thread_name = "t",
                                 .frames = rec_frames, .n_frames = 4 }, &stack_rec), 0);
                ck_assert_int_eq(profile_add_sample_stack(*p, &(ProfileSample){ .tid = 7, .frames = sys_frames,
                                 .n_frames = 1, .n_kernel_frames = 1, .kind = PROFILE_SAMPLE_KERNEL }, &stack_sys), 0);
                ck_assert_int_eq(profile_add_sample_stack(*p, &(ProfileSample){ .tid = 8, .frames = mixed,
                                 .n_frames = 3, .n_kernel_frames = 1, .kind = PROFILE_SAMPLE_KERNEL },
                                 &stack_other), 0);
        }
        ck_assert_uint_eq(stack_rec, 0);
        ck_assert_uint_eq(stack_sys, 1);
        ck_assert_uint_eq(stack_other, PROFILE_STACK_OTHER);

        for (int k = 0; k < 5; k++) {
                ck_assert_int_eq(profile_add_sample(a, &(ProfileSample){ .tid = 7, .frames = rec_frames,
                                 .n_frames = 4 }), 0);
                ck_assert_int_eq(profile_add_sample(a, &(ProfileSample){ .tid = 9, .frames = rec_frames, .n_frames = 4,
                                 .kind = PROFILE_SAMPLE_BLOCKED, .duration_ns = 1000 + k }), 0);
                ck_assert_int_eq(profile_add_sample(a, &(ProfileSample){ .tid = 7, .frames = sys_frames, .n_frames = 1,
                                 .n_kernel_frames = 1, .kind = PROFILE_SAMPLE_KERNEL }), 0);
                ck_assert_int_eq(profile_add_sample(a, &(ProfileSample){ .tid = 8, .frames = mixed, .n_frames = 3,
                                 .n_kernel_frames = 1, .kind = PROFILE_SAMPLE_KERNEL }), 0);
                ck_assert_int_eq(profile_add_sample(a, &(ProfileSample){ .tid = 8, .frames = mixed, .n_frames = 3,
                                 .kind = PROFILE_SAMPLE_PREEMPTED, .duration_ns = 77 }), 0);
        }
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 7, .stack_id = stack_rec,
                         .values = { .user_samples = 5 } }), 0);
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 9, .stack_id = stack_rec,
                         .values = { .blocked_ns = 5 * 1000 + 10 } }), 0);
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 7, .stack_id = stack_sys, .n_kernel_frames = 1,
                         .values = { .kernel_samples = 5 } }), 0);
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 8, .stack_id = PROFILE_STACK_OTHER,
                         .frames = mixed, .n_frames = 3, .n_kernel_frames = 1, .values = { .kernel_samples = 5 } }), 0);
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 8, .stack_id = PROFILE_STACK_OTHER,
                         .frames = mixed, .n_frames = 3, .values = { .preempted_ns = 5 * 77 } }), 0);
        assert_same_bytes(a, b, "weighted");
        ck_assert_uint_eq(profile_total(b), 3 + 15);

        /* Bad arguments count nothing. */
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 7, .stack_id = 2, .values = { 1 } }), -EINVAL);
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 7, .stack_id = stack_rec, .n_kernel_frames = 5,
                         .values = { 1 } }), -EINVAL);
        ck_assert_int_eq(profile_add_counts(b, &(ProfileCounts){ .tid = 7, .stack_id = PROFILE_STACK_OTHER,
                         .frames = (const uint32_t[]){ 99 }, .n_frames = 1, .values = { 1 } }), -EINVAL);
        assert_same_bytes(a, b, "after refused counts");
}
END_TEST

/* A delta applies only to the tables it continues. */
START_TEST(test_delta_continues_its_tables)
{
        _cleanup_(profile_freep) Profile *p = NULL, *base = NULL, *other_frequency = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        const char *error;
        RandomStream rs;
        size_t size;

        random_stream_init(&rs, 7, true);
        ck_assert_int_eq(profile_new(99, &p), 0);
        ck_assert_int_eq(profile_new(999, &other_frequency), 0);
        ck_assert_int_eq(profile_delta_new(&d), 0);
        base = copy(p);
        profile_delta_begin(d, p);
        add_samples(&rs, p, d, 200);
        profile_delta_end(d, p);
        write_delta(d, p, &data, &size);

        ck_assert_int_eq(apply(data, size, other_frequency, &error), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(error, "frequency"));
        ck_assert_int_eq(apply(data, size, base, &error), 0);
        assert_same_bytes(p, base, "applied once");
        /* Twice: the ids it defines are taken. */
        ck_assert_int_eq(apply(data, size, base, &error), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(error, "does not continue"));
        assert_same_bytes(p, base, "refused the second time");
}
END_TEST

/* Cut anywhere, the delta applies wholly (at a section boundary: the definitions before the cut) or not at all,
 * and never leaves counts the loader would refuse. */
START_TEST(test_truncated_deltas)
{
        _cleanup_(profile_freep) Profile *p = NULL, *base = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        _cleanup_free_ uint8_t *data = NULL, *base_bytes = NULL;
        size_t size, base_size, applied = 0;
        RandomStream rs;

        random_stream_init(&rs, 11, true);
        ck_assert_int_eq(profile_new(99, &p), 0);
        profile_set_limits(p, 0, 15);
        ck_assert_int_eq(profile_delta_new(&d), 0);
        profile_delta_begin(d, p);
        add_samples(&rs, p, d, 50);
        base = copy(p);
        serialize(base, &base_bytes, &base_size);
        profile_delta_begin(d, p);
        add_samples(&rs, p, d, 60);
        profile_delta_end(d, p);
        write_delta(d, p, &data, &size);

        for (size_t len = 0; len <= size; len++) {
                _cleanup_(profile_freep) Profile *q = copy(base), *check = NULL;
                _cleanup_free_ uint8_t *bytes = NULL;
                const char *error = NULL;
                size_t n;
                int k;

                k = apply(data, len, q, &error);
                ck_assert_msg(k == 0 || k == -EBADMSG, "length %zu: %d", len, k);
                if (k == 0)
                        applied++;
                else
                        ck_assert_uint_eq(profile_total(q), profile_total(base));
                check = copy(q); /* still a profile the loader takes */
                if (len == size)
                        assert_same_bytes(p, q, "whole");
                else if (k < 0 && len < 40) {
                        serialize(q, &bytes, &n);
                        ck_assert(n == base_size && memcmp(bytes, base_bytes, n) == 0);
                }
        }
        ck_assert_uint_ge(applied, 1);
}
END_TEST

/* Random damage: refused, or applied into tables the loader still takes; never a crash (the sanitizer build). */
START_TEST(test_mutated_deltas)
{
        _cleanup_(profile_freep) Profile *p = NULL, *base = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        RandomStream rs;
        size_t size;

        random_stream_init(&rs, 13, true);
        ck_assert_int_eq(profile_new(99, &p), 0);
        ck_assert_int_eq(profile_delta_new(&d), 0);
        profile_delta_begin(d, p);
        add_samples(&rs, p, d, 40);
        base = copy(p);
        profile_delta_begin(d, p);
        add_samples(&rs, p, d, 80);
        profile_delta_end(d, p);
        write_delta(d, p, &data, &size);

        for (int i = 0; i < 3000; i++) {
                _cleanup_(profile_freep) Profile *q = copy(base), *check = NULL;
                _cleanup_free_ uint8_t *m = malloc(size);
                int k;

                memcpy(m, data, size);
                for (int flips = 1 + (int)random_below(&rs, 3); flips > 0; flips--)
                        m[random_below(&rs, (uint32_t)size)] ^= (uint8_t)(1u << random_below(&rs, 8));
                k = apply(m, size, q, NULL);
                ck_assert(k == 0 || k == -EBADMSG);
                check = copy(q);
        }
}
END_TEST

START_TEST(test_empty_and_other_entries)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        _cleanup_free_ uint8_t *first = NULL, *second = NULL;
        const uint32_t frames[] = { 0, 0 };
        uint32_t id, stack_id;
        size_t n_first, n_second;

        ck_assert_int_eq(profile_new(99, &p), 0);
        profile_set_limits(p, 0, 1);
        ck_assert_int_eq(profile_delta_new(&d), 0);
        profile_delta_begin(d, p);
        profile_delta_end(d, p);
        ck_assert(profile_delta_empty(d));
        q = copy(p);

        /* A definition alone makes a delta. */
        profile_delta_begin(d, p);
        ck_assert_int_eq(profile_intern_function(p, "app", "main", &id), 0);
        profile_delta_end(d, p);
        ck_assert(!profile_delta_empty(d));
        write_delta(d, p, &first, &n_first);

        /* The first stack takes the only place; the next ones are other-stack entries, aggregated by frames. */
        profile_delta_begin(d, p);
        for (int i = 0; i < 6; i++) {
                ProfileSample s = { .tid = 1, .thread_name = "one", .frames = frames, .n_frames = 1 + (i > 0) };
                ck_assert_int_eq(profile_add_sample_stack(p, &s, &stack_id), 0);
                ck_assert_uint_eq(stack_id, i == 0 ? 0 : PROFILE_STACK_OTHER);
                ck_assert_int_eq(profile_delta_add(d, &s, stack_id), 0);
        }
        profile_delta_end(d, p);
        ck_assert_uint_eq(profile_delta_n_entries(d), 2);
        write_delta(d, p, &second, &n_second);

        ck_assert_int_eq(apply(first, n_first, q, NULL), 0);
        ck_assert_int_eq(apply(second, n_second, q, NULL), 0);
        assert_same_bytes(p, q, "other-stack entries");
        ck_assert_uint_eq(profile_other_stack_samples(q), 5);
}
END_TEST

/* Past the stack limit, samples of many distinct stacks with the same leaf and the same functions share an entry:
 * a workload whose every stack is new keeps its deltas small. */
START_TEST(test_other_entries_aggregate)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        uint32_t id[4], frames[64], stack_id;
        RandomStream rs;
        size_t size;

        random_stream_init(&rs, 21, false);
        ck_assert_int_eq(profile_new(99, &p), 0);
        profile_set_limits(p, 0, 1);
        for (int i = 0; i < 4; i++) {
                char name[8];
                snprintf(name, sizeof(name), "f%d", i);
                ck_assert_int_eq(profile_intern_function(p, i == 3 ? "[kernel]" : "app", name, &id[i]), 0);
        }
        ck_assert_int_eq(profile_delta_new(&d), 0);
        q = copy(p);
        profile_delta_begin(d, p);
        for (int i = 0; i < 2000; i++) {
                /* A kernel frame or not, the leaf f0, then f1 and f2 in any order at any depth. */
                uint32_t n_kernel = random_below(&rs, 2), depth = 2 + random_below(&rs, 60), n = 0;
                ProfileSample s = { .tid = 5, .thread_name = "t", .frames = frames };

                if (n_kernel)
                        frames[n++] = id[3];
                frames[n++] = id[0];
                while (n < depth)
                        frames[n++] = id[1 + random_below(&rs, 2)];
                s.n_frames = n;
                s.n_kernel_frames = n_kernel;
                s.kind = n_kernel ? PROFILE_SAMPLE_KERNEL : PROFILE_SAMPLE_USER;
                ck_assert_int_eq(profile_add_sample_stack(p, &s, &stack_id), 0);
                ck_assert_int_eq(profile_delta_add(d, &s, stack_id), 0);
        }
        profile_delta_end(d, p);
        /* One stack, then at most (kernel or not) x (the leaf with {}, {f1}, {f2}, {f1, f2}) other-stack entries. */
        ck_assert_uint_le(profile_delta_n_entries(d), 1 + 2 * 4);
        write_delta(d, p, &data, &size);
        ck_assert_uint_lt(size, 1024);
        ck_assert_int_eq(apply(data, size, q, NULL), 0);
        assert_same_bytes(p, q, "aggregated other-stack entries");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("profile-delta");
        TCase *tc = tcase_create("replay");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_replay_equals_live);
        tcase_add_test(tc, test_replay_equals_live_off_cpu);
        tcase_add_test(tc, test_replay_equals_live_past_limits);
        tcase_add_test(tc, test_weighted_counting);
        tcase_add_test(tc, test_delta_continues_its_tables);
        tcase_add_test(tc, test_truncated_deltas);
        tcase_add_test(tc, test_mutated_deltas);
        tcase_add_test(tc, test_empty_and_other_entries);
        tcase_add_test(tc, test_other_entries_aggregate);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
