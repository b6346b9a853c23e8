/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "profile-delta.h"
#include "profile-random.h"
#include "profile-serialize.h"
#include "section-journal.h"

#define TAG_DELTA SECTION_TAG('T', 'E', 'S', 'T')
#define RECORDS 12

/* A journal of per-second deltas of one profile, as the daemon writes it, and the profile's saved bytes after
 * each record: the journal cut anywhere must replay into exactly one of them. */
typedef struct Fixture {
        uint8_t *journal;
        size_t size;
        size_t record_end[RECORDS]; /* offset after each record */
        uint8_t *base;              /* the profile before the first record, saved */
        size_t base_size;
        uint8_t *after[RECORDS];
        size_t after_size[RECORDS];
} Fixture;

static void fixture_done(Fixture *f)
{
        free(f->journal);
        free(f->base);
        for (size_t i = 0; i < RECORDS; i++)
                free(f->after[i]);
}

static void append(Fixture *f, const void *data, size_t size)
{
        f->journal = realloc(f->journal, f->size + size);
        ck_assert_ptr_nonnull(f->journal);
        memcpy(f->journal + f->size, data, size);
        f->size += size;
}

static void build(Fixture *f, uint64_t seed)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        uint8_t header[SECTION_JOURNAL_HEADER_SIZE];
        uint32_t frames[RANDOM_MAX_FRAMES], stack_id;
        ProfileSample s;
        RandomStream rs;
        SectionWriter w;

        *f = (Fixture){};
        random_stream_init(&rs, seed, true);
        ck_assert_int_eq(profile_new(999, &p), 0);
        profile_set_limits(p, 40, 60);
        ck_assert_int_eq(profile_delta_new(&d), 0);
        for (int i = 0; i < 100; i++)
                random_sample(&rs, p, frames, &s, NULL);
        ck_assert_int_eq(profile_serialize_data(p, (void **)&f->base, &f->base_size), 0);
        section_journal_header(&(SectionJournalHeader){ .generation = 7, .snapshot_crc = 0xdeadbeef },
                               header);
        append(f, header, sizeof(header));

        section_writer_init_bare(&w);
        for (size_t r = 0; r < RECORDS; r++) {
                size_t section;

                profile_delta_begin(d, p);
                for (uint32_t n = random_below(&rs, 60); n > 0; n--) {
                        random_sample(&rs, p, frames, &s, &stack_id);
                        ck_assert_int_eq(profile_delta_add(d, &s, stack_id), 0);
                }
                profile_delta_end(d, p);
                w.size = 0;
                section_journal_record_begin(&w, r + 1, 1000000 * (r + 1));
                section = section_begin(&w, TAG_DELTA, 0);
                profile_delta_write(d, p, &w);
                section_end(&w, section);
                ck_assert_int_eq(section_journal_record_finish(&w), 0);
                append(f, w.data, w.size);
                f->record_end[r] = f->size;
                ck_assert_int_eq(profile_serialize_data(p, (void **)&f->after[r], &f->after_size[r]), 0);
        }
        section_writer_done(&w);
}

static Profile *parse(const uint8_t *data, size_t size)
{
        const char *error = NULL;
        Profile *p = NULL;

        ck_assert_msg(profile_serialize_parse(data, size, &p, &error) == 0, "%s", error);
        return p;
}

/* Replays what the journal holds; returns the records replayed and the result of the last next(). */
static size_t replay(const uint8_t *data, size_t size, Profile *p, int *ret_end, const char **ret_error)
{
        SectionJournalHeader h;
        SectionJournalReader j;
        SectionJournalRecord rec;
        const char *error = NULL;
        size_t n = 0;
        int k;

        k = section_journal_open(data, size, &error, &h, &j);
        if (k < 0) {
                *ret_end = k;
                *ret_error = error;
                return 0;
        }
        ck_assert_uint_eq(h.generation, 7);
        ck_assert_uint_eq(h.snapshot_crc, 0xdeadbeef);
        while ((k = section_journal_next(&j, &rec)) > 0) {
                Section s;

                ck_assert_uint_eq(rec.sequence, n + 1);
                ck_assert_uint_eq(rec.time_usec, 1000000 * (n + 1));
                ck_assert_int_eq(section_next(&rec.sections, &s), 1);
                ck_assert_uint_eq(s.tag, TAG_DELTA);
                ck_assert_msg(profile_delta_apply(&s.contents, p) == 0, "record %zu: %s", n + 1, j.record_error);
                n++;
        }
        *ret_end = k;
        *ret_error = error;
        return n;
}

static void assert_bytes(const Profile *p, const uint8_t *expected, size_t size)
{
        _cleanup_free_ uint8_t *data = NULL;
        size_t n;

        ck_assert_int_eq(profile_serialize_data(p, (void **)&data, &n), 0);
        ck_assert(n == size && memcmp(data, expected, n) == 0);
}

START_TEST(test_whole_journal)
{
        _cleanup_(fixture_done) Fixture f;
        _cleanup_(profile_freep) Profile *p = NULL;
        const char *error;
        int end;

        build(&f, 3);
        p = parse(f.base, f.base_size);
        ck_assert_uint_eq(replay(f.journal, f.size, p, &end, &error), RECORDS);
        ck_assert_int_eq(end, 0);
        ck_assert_ptr_null(error);
        assert_bytes(p, f.after[RECORDS - 1], f.after_size[RECORDS - 1]);
}
END_TEST

/* Cut at every byte: the whole records before the cut replay, exactly, and the rest is reported cut short. */
START_TEST(test_truncated_at_every_byte)
{
        _cleanup_(fixture_done) Fixture f;
        size_t whole = 0;

        build(&f, 5);
        for (size_t len = 0; len <= f.size; len++) {
                _cleanup_(profile_freep) Profile *p = parse(f.base, f.base_size);
                const char *error;
                size_t n;
                int end;

                while (whole < RECORDS && f.record_end[whole] <= len)
                        whole++;
                n = replay(f.journal, len, p, &end, &error);
                if (len < SECTION_JOURNAL_HEADER_SIZE) {
                        ck_assert_int_eq(end, -EBADMSG);
                        continue;
                }
                ck_assert_uint_eq(n, whole);
                if (whole == 0)
                        assert_bytes(p, f.base, f.base_size);
                else
                        assert_bytes(p, f.after[whole - 1], f.after_size[whole - 1]);
                if (len == SECTION_JOURNAL_HEADER_SIZE || (whole > 0 && len == f.record_end[whole - 1]))
                        ck_assert_int_eq(end, 0);
                else {
                        ck_assert_int_eq(end, -EBADMSG);
                        ck_assert_ptr_nonnull(strstr(error, "cut short"));
                }
        }
}
END_TEST

/* A flipped byte in a record stops the replay at that record (its CRC), never inside it. */
START_TEST(test_damaged_records)
{
        _cleanup_(fixture_done) Fixture f;
        RandomStream rs;

        build(&f, 9);
        random_stream_init(&rs, 1, false);
        for (int i = 0; i < 300; i++) {
                _cleanup_(profile_freep) Profile *p = parse(f.base, f.base_size);
                _cleanup_free_ uint8_t *m = malloc(f.size);
                size_t at = SECTION_JOURNAL_HEADER_SIZE +
                            random_below(&rs, (uint32_t)(f.size - SECTION_JOURNAL_HEADER_SIZE));
                size_t record = 0, n;
                const char *error;
                int end;

                memcpy(m, f.journal, f.size);
                m[at] ^= (uint8_t)(1u << random_below(&rs, 8));
                while (f.record_end[record] <= at)
                        record++;
                n = replay(m, f.size, p, &end, &error);
                ck_assert_uint_eq(n, record);
                ck_assert_int_eq(end, -EBADMSG);
                ck_assert_ptr_nonnull(error);
                if (record > 0)
                        assert_bytes(p, f.after[record - 1], f.after_size[record - 1]);
        }
}
END_TEST

START_TEST(test_header_and_sequence)
{
        _cleanup_(fixture_done) Fixture f;
        const char *error;
        SectionJournalHeader h;
        SectionJournalReader j;
        SectionJournalRecord rec;
        uint8_t header[SECTION_JOURNAL_HEADER_SIZE];
        uint64_t seq;

        build(&f, 1);
        ck_assert_int_eq(section_journal_open("VPROFPRFxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 36, &error, &h, &j),
                         -EMEDIUMTYPE);
        memcpy(header, f.journal, sizeof(header));
        header[8] = 2;
        ck_assert_int_eq(section_journal_open(header, sizeof(header), &error, &h, &j), -EPROTONOSUPPORT);
        header[8] = 1;
        header[20] ^= 1;
        ck_assert_int_eq(section_journal_open(header, sizeof(header), &error, &h, &j), -EBADMSG);
        ck_assert_str_eq(error, "damaged header");

        /* The second record given the sequence number 5, its CRC fixed: out of sequence. */
        memcpy(&seq, f.journal + f.record_end[0] + 8, sizeof(seq));
        ck_assert_uint_eq(le64toh(seq), 2);
        seq = htole64(5);
        memcpy(f.journal + f.record_end[0] + 8, &seq, sizeof(seq));
        {
                uint32_t size, crc;
                memcpy(&size, f.journal + f.record_end[0], 4);
                crc = htole32(section_crc32(0, f.journal + f.record_end[0] + 8, le32toh(size)));
                memcpy(f.journal + f.record_end[0] + 4, &crc, 4);
        }
        ck_assert_int_eq(section_journal_open(f.journal, f.size, &error, &h, &j), 0);
        ck_assert_int_eq(section_journal_next(&j, &rec), 1);
        ck_assert_int_eq(section_journal_next(&j, &rec), -EBADMSG);
        ck_assert_str_eq(error, "a record out of sequence");
        ck_assert_uint_eq(j.offset, f.record_end[0]);
        /* And it stays there. */
        ck_assert_int_eq(section_journal_next(&j, &rec), -EBADMSG);
}
END_TEST

/* A record whose sections do not parse is the caller's to refuse; the journal reads on. */
START_TEST(test_bad_record_contents)
{
        SectionJournalHeader h = { .generation = 1 }, got;
        uint8_t header[SECTION_JOURNAL_HEADER_SIZE];
        _cleanup_free_ uint8_t *journal = NULL;
        SectionJournalReader j;
        SectionJournalRecord rec;
        const char *error;
        Section s;
        SectionWriter w;
        size_t size = 0;

        section_journal_header(&h, header);
        journal = malloc(4096);
        memcpy(journal, header, sizeof(header));
        size = sizeof(header);
        for (uint64_t seq = 1; seq <= 2; seq++) {
                section_writer_init_bare(&w);
                section_journal_record_begin(&w, seq, 0);
                section_write_u32(&w, 0xffffffff); /* a section header cut short */
                ck_assert_int_eq(section_journal_record_finish(&w), 0);
                memcpy(journal + size, w.data, w.size);
                size += w.size;
                section_writer_done(&w);
        }
        ck_assert_int_eq(section_journal_open(journal, size, &error, &got, &j), 0);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(section_journal_next(&j, &rec), 1);
                ck_assert_int_eq(section_next(&rec.sections, &s), -EBADMSG);
                ck_assert_ptr_nonnull(j.record_error);
        }
        ck_assert_int_eq(section_journal_next(&j, &rec), 0);
        ck_assert_ptr_null(error);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("section-journal");
        TCase *tc = tcase_create("journal");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_whole_journal);
        tcase_add_test(tc, test_truncated_at_every_byte);
        tcase_add_test(tc, test_damaged_records);
        tcase_add_test(tc, test_header_and_sequence);
        tcase_add_test(tc, test_bad_record_contents);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
