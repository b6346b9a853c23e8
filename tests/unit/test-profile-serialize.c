/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "profile-random.h"
#include "profile-serialize.h"

/* A profile with everything a saved one can hold: recursion, kernel frames, a kernel-only sample (the
 * "[unknown]" user function), blocked and preempted time, three threads (one never named), a function
 * interned but never sampled, and a frameless sample. */

enum { MAIN, WORK, REC, READ, SYS_READ, IDLE, N };

static const char *const names[N][2] = {
        [MAIN] = { "app", "main" },          [WORK] = { "app", "work" },
        [REC] = { "app", "recurse" },        [READ] = { "libc.so.6", "read" },
        [SYS_READ] = { "[kernel]", "ksys_read" }, [IDLE] = { "libidle.so", "never_sampled" },
};

static void add(Profile *p, uint32_t tid, const char *thread, ProfileSampleKind kind, uint64_t ns,
                size_t n_kernel, const uint32_t *frames, size_t n)
{
        const ProfileSample s = {
                .tid = tid, .thread_name = thread, .frames = frames, .n_frames = n, .kind = kind,
                .n_kernel_frames = n_kernel, .duration_ns = ns,
        };
        ck_assert_int_eq(profile_add_sample(p, &s), 0);
}

static void add_round(Profile *p, const uint32_t id[N])
{
        const uint32_t work[] = { id[WORK], id[MAIN] };
        const uint32_t rec[] = { id[WORK], id[REC], id[REC], id[REC], id[MAIN] };
        const uint32_t kernel[] = { id[SYS_READ], id[READ], id[MAIN] };
        const uint32_t kernel_only[] = { id[SYS_READ] };
        const uint32_t blocked[] = { id[READ], id[REC], id[REC], id[MAIN] };

        add(p, 100, "main", PROFILE_SAMPLE_USER, 0, 0, work, ELEMENTSOF(work));
        add(p, 101, "worker-1", PROFILE_SAMPLE_USER, 0, 0, rec, ELEMENTSOF(rec));
        add(p, 101, NULL, PROFILE_SAMPLE_KERNEL, 0, 1, kernel, ELEMENTSOF(kernel));
        add(p, 100, NULL, PROFILE_SAMPLE_KERNEL, 0, 1, kernel_only, ELEMENTSOF(kernel_only));
        add(p, 101, NULL, PROFILE_SAMPLE_BLOCKED, 5000000, 0, blocked, ELEMENTSOF(blocked));
        add(p, 102, NULL, PROFILE_SAMPLE_PREEMPTED, 1234567, 0, work, ELEMENTSOF(work));
        add(p, 102, NULL, PROFILE_SAMPLE_USER, 0, 0, NULL, 0);
}

static Profile *build(uint32_t frequency, uint32_t id[N])
{
        Profile *p = NULL;

        ck_assert_int_eq(profile_new(frequency, &p), 0);
        for (size_t i = 0; i < N; i++)
                ck_assert_int_eq(profile_intern_function(p, names[i][0], names[i][1], &id[i]), 0);
        /* A demangled name keeps its symbol. */
        ck_assert_int_eq(profile_set_mangled(p, id[REC], "_Z7recursei"), 0);
        for (int i = 0; i < 3; i++)
                add_round(p, id);
        return p;
}

static void serialize(const Profile *p, uint8_t **ret, size_t *ret_size)
{
        ck_assert_int_eq(profile_serialize_data(p, (void **)ret, ret_size), 0);
        ck_assert_uint_gt(*ret_size, SECTION_FILE_HEADER_SIZE);
}

static void compare_rows(const ProfileRow *a, size_t n_a, const ProfileRow *b, size_t n_b)
{
        ck_assert_uint_eq(n_a, n_b);
        for (size_t i = 0; i < n_a; i++) {
                ck_assert_str_eq(a[i].name, b[i].name);
                ck_assert((a[i].module == NULL) == (b[i].module == NULL));
                if (a[i].module)
                        ck_assert_str_eq(a[i].module, b[i].module);
                ck_assert_uint_eq(a[i].tid, b[i].tid);
                ck_assert_uint_eq(a[i].inclusive, b[i].inclusive);
                ck_assert_uint_eq(a[i].exclusive, b[i].exclusive);
                ck_assert_mem_eq(&a[i].inclusive_values, &b[i].inclusive_values, sizeof(ProfileValues));
                ck_assert_mem_eq(&a[i].exclusive_values, &b[i].exclusive_values, sizeof(ProfileValues));
        }
}

/* Every table, both kinds of sort, the totals; then the bytes, which also cover what no table shows (an
 * interned function without samples, a thread without a name, the "[unknown]" id). */
static void assert_same(const Profile *a, const Profile *b)
{
        typedef int (*table_fn)(const Profile *, ProfileSort, ProfileRow **, size_t *);
        static const table_fn tables[] = { profile_modules, profile_threads };
        _cleanup_free_ uint8_t *da = NULL, *db = NULL;
        size_t na, nb;

        ck_assert_uint_eq(profile_frequency(a), profile_frequency(b));
        ck_assert_uint_eq(profile_total(a), profile_total(b));
        ck_assert_mem_eq(profile_total_values(a), profile_total_values(b), sizeof(ProfileValues));
        ck_assert_uint_eq(profile_n_functions(a), profile_n_functions(b));
        for (uint32_t i = 0; i < profile_n_functions(a); i++) {
                const char *ma = profile_function_mangled(a, i), *mb = profile_function_mangled(b, i);
                ck_assert((ma == NULL) == (mb == NULL));
                if (ma)
                        ck_assert_str_eq(ma, mb);
        }
        for (ProfileSort sort = 0; sort < _PROFILE_SORT_MAX; sort++) {
                _cleanup_free_ ProfileRow *ra = NULL, *rb = NULL;
                ck_assert_int_eq(profile_functions(a, sort, 0, &ra, &na), 0);
                ck_assert_int_eq(profile_functions(b, sort, 0, &rb, &nb), 0);
                compare_rows(ra, na, rb, nb);
                for (size_t t = 0; t < ELEMENTSOF(tables); t++) {
                        _cleanup_free_ ProfileRow *xa = NULL, *xb = NULL;
                        ck_assert_int_eq(tables[t](a, sort, &xa, &na), 0);
                        ck_assert_int_eq(tables[t](b, sort, &xb, &nb), 0);
                        compare_rows(xa, na, xb, nb);
                }
        }
        {
                _cleanup_free_ ProfileStackRow *sa = NULL, *sb = NULL;
                ck_assert_int_eq(profile_stacks(a, 0, &sa, &na), 0);
                ck_assert_int_eq(profile_stacks(b, 0, &sb, &nb), 0);
                ck_assert_uint_eq(na, nb);
                for (size_t i = 0; i < na; i++) {
                        ck_assert_uint_eq(sa[i].n_frames, sb[i].n_frames);
                        ck_assert_uint_eq(sa[i].n_kernel_frames, sb[i].n_kernel_frames);
                        ck_assert_uint_eq(sa[i].samples, sb[i].samples);
                        ck_assert_mem_eq(sa[i].frames, sb[i].frames, sa[i].n_frames * sizeof(uint32_t));
                }
                ck_assert_uint_eq(profile_n_stacks(a), profile_n_stacks(b));
                ck_assert_uint_eq(profile_other_stack_samples(a), profile_other_stack_samples(b));
                ck_assert_uint_eq(profile_other_function_samples(a), profile_other_function_samples(b));
        }
        serialize(a, &da, &na);
        serialize(b, &db, &nb);
        ck_assert_uint_eq(na, nb);
        ck_assert_mem_eq(da, db, na);
}

static Profile *parse_ok(const uint8_t *data, size_t size)
{
        Profile *p = NULL;
        const char *error = "unset";

        ck_assert_msg(profile_serialize_parse(data, size, &p, &error) == 0, "parse failed: %s", error);
        ck_assert_ptr_null(error);
        return p;
}

static int parse_error(const uint8_t *data, size_t size, const char **ret_error)
{
        Profile *p = NULL;
        const char *error = NULL;
        int r;

        r = profile_serialize_parse(data, size, &p, &error);
        ck_assert_msg(r < 0, "a bad file of %zu bytes was accepted", size);
        ck_assert_ptr_null(p);
        ck_assert_ptr_nonnull(error);
        if (ret_error)
                *ret_error = error;
        return r;
}

/* After an edit of the payload, a CRC that fits again, so that the parser's other checks are reached. */
static void fix_crc(uint8_t *data, size_t size)
{
        uint32_t crc = section_crc32(0, data, 24);
        crc = htole32(section_crc32(crc, data + SECTION_FILE_HEADER_SIZE, size - SECTION_FILE_HEADER_SIZE));
        memcpy(data + 24, &crc, sizeof(crc));
}

START_TEST(test_round_trip)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        uint32_t id[N], qid;
        size_t size;

        p = build(997, id);
        ck_assert_uint_eq(profile_total(p), 15); /* 5 on-CPU samples a round */
        serialize(p, &data, &size);
        q = parse_ok(data, size);
        assert_same(p, q);
        ck_assert_str_eq(profile_function_mangled(q, id[REC]), "_Z7recursei");

        /* The loaded profile counts on like the original: same ids, the same threads, no second
         * "[unknown]" function. */
        for (size_t i = 0; i < N; i++) {
                ck_assert_int_eq(profile_intern_function(q, names[i][0], names[i][1], &qid), 0);
                ck_assert_uint_eq(qid, id[i]);
        }
        add_round(p, id);
        add_round(q, id);
        assert_same(p, q);
        ck_assert_uint_eq(profile_n_functions(q), N + 1);
}
END_TEST

/* A profile past its limits: the [other] row and the samples in no stack come back, and the loaded profile folds
 * into the same [other] row (it is found again, not made twice). */
START_TEST(test_round_trip_past_limits)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        uint32_t id[N], other, again;
        size_t size;

        p = build(997, id);
        profile_set_limits(p, N, 2);
        add_round(p, id);
        ck_assert_int_eq(profile_intern_function(p, "libnew.so", "new_function", &other), 0);
        ck_assert_int_eq(profile_add_sample(p, &(ProfileSample){ .tid = 1, .frames = &other, .n_frames = 1 }), 0);
        ck_assert_uint_gt(profile_other_function_samples(p), 0);
        ck_assert_uint_gt(profile_other_stack_samples(p), 0);

        serialize(p, &data, &size);
        q = parse_ok(data, size);
        assert_same(p, q);
        profile_set_limits(q, N, 2);
        ck_assert_int_eq(profile_intern_function(q, "libnew.so", "another", &again), 0);
        ck_assert_uint_eq(again, other);
}
END_TEST

START_TEST(test_empty_profile)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        size_t size;

        ck_assert_int_eq(profile_new(99, &p), 0);
        serialize(p, &data, &size);
        q = parse_ok(data, size);
        assert_same(p, q);
}
END_TEST

START_TEST(test_file_round_trip)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        char dir[] = "/tmp/vprof-unit-state-XXXXXX";
        _cleanup_close_ int dir_fd = -1;
        const char *error = NULL;
        uint32_t id[N];

        ck_assert_ptr_nonnull(mkdtemp(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(dir_fd, 0);
        p = build(99, id);
        ck_assert_int_eq(profile_serialize_save(p, dir_fd, "p.state"), 0);
        /* Saved again over itself: the rename replaces it, and no temporary file is left. */
        ck_assert_int_eq(profile_serialize_save(p, dir_fd, "p.state"), 0);
        ck_assert_int_eq(faccessat(dir_fd, ".p.state.tmp", F_OK, 0), -1);
        ck_assert_int_eq(profile_serialize_load(dir_fd, "p.state", &q, &error), 0);
        assert_same(p, q);
        ck_assert_int_eq(profile_serialize_load(dir_fd, "absent", &q, &error), -ENOENT);
        ck_assert_int_eq(profile_serialize_save(p, dir_fd, "a/b"), -EINVAL);
        ck_assert_int_eq(unlinkat(dir_fd, "p.state", 0), 0);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_truncated_at_every_length)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        uint32_t id[N];
        size_t size;

        p = build(99, id);
        serialize(p, &data, &size);
        for (size_t len = 0; len < size; len++) {
                /* A copy of exactly len bytes, so that the sanitizer sees any read past the end. */
                _cleanup_free_ uint8_t *copy = malloc(MAX(len, (size_t)1));
                const char *error;
                int r;

                memcpy(copy, data, len);
                r = parse_error(copy, len, &error);
                ck_assert_int_eq(r, -EBADMSG);
                ck_assert_msg(strstr(error, "truncated"), "length %zu: %s", len, error);
        }
}
END_TEST

START_TEST(test_every_flipped_byte)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        unsigned by_crc = 0;
        uint32_t id[N];
        size_t size;

        p = build(99, id);
        serialize(p, &data, &size);
        for (size_t i = 0; i < size; i++) {
                const char *error;

                data[i] ^= 0x5a;
                parse_error(data, size, &error);
                by_crc += strcmp(error, "checksum mismatch") == 0;
                data[i] ^= 0x5a;
        }
        /* Everything but the header's fixed fields is caught by the checksum. */
        ck_assert_uint_ge(by_crc, size - 28);
        _unused_ _cleanup_(profile_freep) Profile *q = parse_ok(data, size);
}
END_TEST

/* A byte of the payload changed and the CRC fixed: the content checks must hold, whatever the byte. Some
 * changes make a valid profile (a count that is still possible, another letter in a name); that profile must
 * then be sound enough to save again. */
START_TEST(test_payload_mutations)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
        unsigned accepted = 0, refused = 0;
        uint32_t id[N];
        size_t size;

        p = build(99, id);
        serialize(p, &data, &size);
        for (size_t i = SECTION_FILE_HEADER_SIZE; i < size; i++)
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        _cleanup_(profile_freep) Profile *q = NULL;
                        _cleanup_free_ uint8_t *copy = malloc(size);
                        const char *error = NULL;

                        memcpy(copy, data, size);
                        if (copy[i] == values[v])
                                continue;
                        copy[i] = values[v];
                        fix_crc(copy, size);
                        if (profile_serialize_parse(copy, size, &q, &error) == 0) {
                                _cleanup_free_ uint8_t *again = NULL;
                                size_t n;
                                serialize(q, &again, &n);
                                _unused_ _cleanup_(profile_freep) Profile *r = parse_ok(again, n);
                                accepted++;
                        } else {
                                ck_assert_ptr_nonnull(error);
                                refused++;
                        }
                }
        ck_assert_uint_gt(refused, 0);
        ck_assert_uint_gt(accepted, 0);
}
END_TEST

START_TEST(test_newer_version_and_bad_header)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        const char *error;
        uint32_t id[N], v;
        uint64_t big;
        size_t size;

        p = build(99, id);
        serialize(p, &data, &size);

        v = htole32(SECTION_FILE_VERSION + 1);
        memcpy(data + 8, &v, sizeof(v));
        fix_crc(data, size);
        ck_assert_int_eq(parse_error(data, size, &error), -EPROTONOSUPPORT);
        ck_assert_ptr_nonnull(strstr(error, "newer"));

        v = htole32(SECTION_FILE_VERSION);
        memcpy(data + 8, &v, sizeof(v));
        fix_crc(data, size);
        _unused_ _cleanup_(profile_freep) Profile *q = parse_ok(data, size);

        /* A payload size beyond the limit is refused before anything else is read. */
        big = htole64((uint64_t)2 << 30);
        memcpy(data + 16, &big, sizeof(big));
        fix_crc(data, size);
        ck_assert_int_eq(parse_error(data, size, &error), -EFBIG);

        /* Another kind of state file. */
        memcpy(data, "VPROFDST", SECTION_MAGIC_SIZE);
        ck_assert_int_eq(parse_error(data, size, &error), -EMEDIUMTYPE);
}
END_TEST

START_TEST(test_garbage)
{
        uint8_t buf[4096];
        unsigned seed = 12345;

        for (int round = 0; round < 2000; round++) {
                size_t size = (size_t)rand_r(&seed) % sizeof(buf);
                for (size_t i = 0; i < size; i++)
                        buf[i] = (uint8_t)rand_r(&seed);
                /* Half of them get a real header, so that the sections are parsed. */
                if (round % 2 && size >= SECTION_FILE_HEADER_SIZE) {
                        uint32_t version = htole32(SECTION_FILE_VERSION), zero = 0;
                        uint64_t payload = htole64(size - SECTION_FILE_HEADER_SIZE);
                        memcpy(buf, PROFILE_SERIALIZE_MAGIC, SECTION_MAGIC_SIZE);
                        memcpy(buf + 8, &version, 4);
                        memcpy(buf + 12, &zero, 4);
                        memcpy(buf + 16, &payload, 8);
                        memcpy(buf + 28, &zero, 4);
                        fix_crc(buf, size);
                }
                parse_error(buf, size, NULL);
        }
}
END_TEST

/* A file written by hand, section by section. */
typedef enum Twist {
        TWIST_NONE,
        TWIST_EXTRA_SECTION,
        TWIST_EXTRA_REQUIRED_SECTION,
        TWIST_MISSING_THREADS,
        TWIST_DUPLICATE_HEADER,
        TWIST_MODULE_OUT_OF_RANGE,
        TWIST_EXCLUSIVE_ABOVE_INCLUSIVE,
        TWIST_INCLUSIVE_ABOVE_TOTAL,
        TWIST_DUPLICATE_FUNCTION,
        TWIST_DUPLICATE_THREAD,
        TWIST_HUGE_COUNT,
        TWIST_TRAILING_BYTES,
        TWIST_UNKNOWN_ID_WRONG,
        _TWIST_MAX,
} Twist;

static void write_counts(SectionWriter *w, uint64_t inclusive, uint64_t exclusive)
{
        section_write_u64(w, inclusive);
        section_write_u64(w, exclusive);
        for (int i = 0; i < 8; i++)
                section_write_u64(w, 0);
}

/* The names write_by_hand() writes: a file of an older vprofd held them as it read them, any bytes. */
static const char *hand_module = "app", *hand_function = "main", *hand_thread = NULL;

static void write_by_hand(Twist twist, uint8_t **ret, size_t *ret_size)
{
        SectionWriter w;
        size_t s;

        section_writer_init(&w, PROFILE_SERIALIZE_MAGIC);
        for (int copies = twist == TWIST_DUPLICATE_HEADER ? 2 : 1; copies > 0; copies--) {
                s = section_begin(&w, SECTION_TAG('P', 'H', 'D', 'R'), SECTION_REQUIRED);
                section_write_u32(&w, 99);
                section_write_u32(&w, twist == TWIST_UNKNOWN_ID_WRONG ? 0 : UINT32_MAX);
                section_write_u64(&w, 10);
                for (int i = 0; i < 4; i++)
                        section_write_u64(&w, 0);
                section_end(&w, s);
        }
        if (twist == TWIST_EXTRA_SECTION || twist == TWIST_EXTRA_REQUIRED_SECTION) {
                s = section_begin(&w, SECTION_TAG('N', 'E', 'X', 'T'),
                                  twist == TWIST_EXTRA_REQUIRED_SECTION ? SECTION_REQUIRED : 0);
                section_write_string(&w, "from a later vprof");
                section_end(&w, s);
        }
        s = section_begin(&w, SECTION_TAG('M', 'O', 'D', 'S'), SECTION_REQUIRED);
        section_write_u32(&w, twist == TWIST_HUGE_COUNT ? UINT32_MAX : 1);
        section_write_string(&w, hand_module);
        write_counts(&w, 10, 10);
        section_end(&w, s);

        s = section_begin(&w, SECTION_TAG('F', 'U', 'N', 'C'), SECTION_REQUIRED);
        section_write_u32(&w, twist == TWIST_DUPLICATE_FUNCTION ? 2 : 1);
        for (int i = twist == TWIST_DUPLICATE_FUNCTION ? 2 : 1; i > 0; i--) {
                section_write_u32(&w, twist == TWIST_MODULE_OUT_OF_RANGE ? 1 : 0);
                section_write_string(&w, hand_function);
                write_counts(&w, twist == TWIST_INCLUSIVE_ABOVE_TOTAL ? 11 : 10,
                             twist == TWIST_EXCLUSIVE_ABOVE_INCLUSIVE ? 11 : 10);
        }
        if (twist == TWIST_TRAILING_BYTES)
                section_write_u32(&w, 0);
        section_end(&w, s);

        if (twist != TWIST_MISSING_THREADS) {
                s = section_begin(&w, SECTION_TAG('T', 'H', 'R', 'D'), SECTION_REQUIRED);
                section_write_u32(&w, twist == TWIST_DUPLICATE_THREAD ? 2 : 1);
                for (int i = twist == TWIST_DUPLICATE_THREAD ? 2 : 1; i > 0; i--) {
                        section_write_u32(&w, 7);
                        section_write_string(&w, hand_thread);
                        section_write_u64(&w, 10);
                        for (int k = 0; k < 4; k++)
                                section_write_u64(&w, 0);
                }
                section_end(&w, s);
        }
        ck_assert_int_eq(section_writer_finish(&w, (void **)ret, ret_size, NULL), 0);
}

START_TEST(test_by_hand)
{
        for (Twist twist = 0; twist < _TWIST_MAX; twist++) {
                _cleanup_free_ uint8_t *data = NULL;
                const char *error = NULL;
                size_t size;

                write_by_hand(twist, &data, &size);
                if (IN_SET(twist, TWIST_NONE, TWIST_EXTRA_SECTION)) {
                        /* An unknown section that is not required is skipped. */
                        _cleanup_(profile_freep) Profile *p = parse_ok(data, size);
                        ck_assert_uint_eq(profile_total(p), 10);
                        ck_assert_uint_eq(profile_n_functions(p), 1);
                        continue;
                }
                ck_assert_int_eq(parse_error(data, size, &error), -EBADMSG);
                ck_assert_msg(error[0] != '\0', "twist %d", twist);
        }
}
END_TEST

/* Names that are not valid UTF-8 of one line, saved by a vprofd that kept them so: restored escaped, so that no
 * answer after the restart is refused by the bus. */
START_TEST(test_names_escaped)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ ProfileRow *rows = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        const char *module, *function;
        size_t size, n;

        hand_module = "x\xff\xfey";
        hand_function = "f\xfe\n";
        hand_thread = "t\r\n\xc3";
        write_by_hand(TWIST_NONE, &data, &size);
        hand_module = "app";
        hand_function = "main";
        hand_thread = NULL;

        p = parse_ok(data, size);
        ck_assert_uint_eq(profile_total(p), 10);
        ck_assert_int_eq(profile_function_name(p, 0, &module, &function), 0);
        ck_assert_str_eq(module, "x\\xff\\xfey");
        ck_assert_str_eq(function, "f\\xfe\\n");
        ck_assert_int_eq(profile_modules(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(rows[0].name, "x\\xff\\xfey");
        ck_assert_uint_eq(rows[0].inclusive, 10);
        free(rows);
        rows = NULL;
        ck_assert_int_eq(profile_threads(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(rows[0].name, "t\\r\\n\\xc3");
}
END_TEST

START_TEST(test_bad_strings)
{
        _cleanup_free_ uint8_t *data = NULL;
        uint8_t *name;
        size_t size;

        write_by_hand(TWIST_NONE, &data, &size);
        /* "main\0" is the function's name; make it "ma\0n\0", then "main!" (no NUL). */
        name = memmem(data, size, "main", 5);
        ck_assert_ptr_nonnull(name);
        name[2] = '\0';
        fix_crc(data, size);
        const char *error;
        parse_error(data, size, &error);
        ck_assert_str_eq(error, "malformed string");
        name[2] = 'i';
        name[4] = '!';
        fix_crc(data, size);
        parse_error(data, size, &error);
        ck_assert_str_eq(error, "malformed string");
}
END_TEST

START_TEST(test_convert_frequency)
{
        _cleanup_(profile_freep) Profile *p = NULL, *q = NULL;
        _cleanup_free_ ProfileRow *before = NULL, *after = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        size_t nb, na, size;
        uint32_t id[N];

        p = build(100, id);
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &before, &nb), 0);
        profile_convert_frequency(p, 1000);
        ck_assert_uint_eq(profile_frequency(p), 1000);
        ck_assert_uint_eq(profile_total(p), 150);
        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &after, &na), 0);
        ck_assert_uint_eq(na, nb);
        for (size_t i = 0; i < na; i++) {
                ck_assert_uint_eq(after[i].inclusive, 10 * before[i].inclusive);
                ck_assert_uint_eq(after[i].inclusive_values.blocked_ns,
                                  before[i].inclusive_values.blocked_ns);
        }
        /* Down, with rounding: still a profile that loads. */
        profile_convert_frequency(p, 7);
        serialize(p, &data, &size);
        q = parse_ok(data, size);
        assert_same(p, q);
}
END_TEST

static uint64_t floor_scale(uint64_t v, uint32_t to, uint32_t from)
{
        return (uint64_t)((unsigned __int128)v * to / from);
}

/* The property the loader needs: a profile of any shape, converted to any frequency and back and forth, is one it
 * loads (every "at most" between counts and every sum of parts holds), and each count is count * new / old
 * rounded down. */
START_TEST(test_convert_frequency_random_profiles)
{
        static const uint32_t frequencies[] = { 999, 99, 999, 7, 10000, 1, 9999, 100, 99 };

        for (uint64_t seed = 1; seed <= 40; seed++) {
                _cleanup_(profile_freep) Profile *p = NULL;
                uint32_t frames[RANDOM_MAX_FRAMES];
                ProfileSample sample;
                RandomStream rs;

                random_stream_init(&rs, seed, seed % 2);
                ck_assert_int_eq(profile_new(99, &p), 0);
                if (seed % 3 == 0)
                        profile_set_limits(p, 20, 25);
                for (uint32_t n = random_below(&rs, 3000); n > 0; n--)
                        random_sample(&rs, p, frames, &sample, NULL);

                for (size_t i = 0; i < ELEMENTSOF(frequencies); i++) {
                        _cleanup_(profile_freep) Profile *q = NULL;
                        _cleanup_free_ ProfileRow *before = NULL, *after = NULL;
                        _cleanup_free_ uint8_t *data = NULL;
                        uint32_t from = profile_frequency(p), to = frequencies[i];
                        uint64_t total = profile_total(p);
                        size_t nb, na, size;

                        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_ELAPSED_INCLUSIVE, 0, &before, &nb), 0);
                        profile_convert_frequency(p, to);
                        ck_assert_uint_eq(profile_frequency(p), to);
                        ck_assert_uint_eq(profile_total(p), floor_scale(total, to, from));
                        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_ELAPSED_INCLUSIVE, 0, &after, &na), 0);
                        /* The values table lists every function with time, and off-CPU time stays. */
                        for (size_t k = 0; k < na; k++)
                                for (size_t j = 0; j < nb; j++)
                                        if (strcmp(after[k].name, before[j].name) == 0 &&
                                            strcmp(after[k].module, before[j].module) == 0 &&
                                            after[k].inlined == before[j].inlined) {
                                                ck_assert_uint_eq(after[k].inclusive,
                                                                  floor_scale(before[j].inclusive, to, from));
                                                ck_assert_uint_eq(after[k].exclusive,
                                                                  floor_scale(before[j].exclusive, to, from));
                                                ck_assert_uint_eq(after[k].inclusive_values.blocked_ns,
                                                                  before[j].inclusive_values.blocked_ns);
                                        }
                        serialize(p, &data, &size);
                        q = parse_ok(data, size);
                        assert_same(p, q);
                }
        }
}
END_TEST

static Suite *profile_serialize_suite(void)
{
        Suite *s = suite_create("profile-serialize");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_round_trip_past_limits);
        tcase_add_test(tc, test_empty_profile);
        tcase_add_test(tc, test_file_round_trip);
        tcase_add_test(tc, test_truncated_at_every_length);
        tcase_add_test(tc, test_every_flipped_byte);
        tcase_add_test(tc, test_payload_mutations);
        tcase_add_test(tc, test_newer_version_and_bad_header);
        tcase_add_test(tc, test_garbage);
        tcase_add_test(tc, test_by_hand);
        tcase_add_test(tc, test_bad_strings);
        tcase_add_test(tc, test_names_escaped);
        tcase_add_test(tc, test_convert_frequency);
        tcase_add_test(tc, test_convert_frequency_random_profiles);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(profile_serialize_suite());
}
