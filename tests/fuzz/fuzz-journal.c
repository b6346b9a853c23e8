/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The crash journal's readers: section-journal.c (header, record framing, CRCs) and profile-delta.c (a
 * target's delta replayed onto its tables), as daemon/journal.c replays a journal at start: every record,
 * every section, a delta section's PID and start time, then its delta applied onto the target's profile.
 * Each input is read as it is, then again with its header and record CRCs made right, so that mutations
 * reach the sections behind the checksums. A profile that took deltas must save and load again. Seeds:
 * journals written from real deltas of a profile with functions, threads, kernel frames, off-CPU time and
 * stacks past the stack limit. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "macros.h"
#include "profile-delta.h"
#include "profile-serialize.h"
#include "section-journal.h"

/* As in daemon/journal.c, which keeps it to itself. */
#define TAG_DELTA SECTION_TAG('J', 'D', 'L', 'T')

#define FREQUENCY 99
#define N_BASE_FUNCTIONS 4

/* The profile every journal continues: a few functions, so that deltas may name old ids as well as new ones. */
static int base_profile(Profile **ret)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        static const char *const names[N_BASE_FUNCTIONS][2] = {
                { "prog", "main" }, { "libwork.so", "work" }, { "libc.so.6", "read" }, { "[kernel]", "ksys_read" },
        };
        uint32_t id;
        int r;

        r = profile_new(FREQUENCY, &p);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(names); i++)
                r = profile_intern_function(p, names[i][0], names[i][1], &id);
        if (r < 0)
                return r;
        /* A small stack limit, so that seeds and mutations reach the other stack's entries. */
        profile_set_limits(p, 0, 3);
        *ret = TAKE_PTR(p);
        return 0;
}

static void check_saves(const Profile *p)
{
        _cleanup_free_ void *data = NULL;
        Profile *reloaded = NULL;
        const char *error = NULL;
        size_t size;

        if (profile_serialize_data(p, &data, &size) < 0)
                return; /* out of memory */
        if (profile_serialize_parse(data, size, &reloaded, &error) < 0) {
                fprintf(stderr, "Tables that took a journal's deltas do not load again once saved: %s\n",
                        error ?: "?");
                abort();
        }
        profile_free(reloaded);
}

static void replay(const uint8_t *data, size_t size)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        const char *error = NULL;
        SectionJournalHeader header;
        SectionJournalReader j;
        SectionJournalRecord rec;
        bool stopped = false;

        if (base_profile(&p) < 0 || section_journal_open(data, size, &error, &header, &j) < 0)
                return;
        while (section_journal_next(&j, &rec) > 0) {
                Section s;

                while (section_next(&rec.sections, &s) > 0) {
                        const char *delta_error = NULL;

                        if (s.tag != TAG_DELTA) {
                                if (section_skip(&s) < 0)
                                        break;
                                continue;
                        }
                        (void)section_read_u32(&s.contents); /* PID */
                        (void)section_read_u64(&s.contents); /* start time */
                        if (stopped || section_failed(&s.contents))
                                continue;
                        s.contents.error = &delta_error;
                        /* As the daemon does: a delta that does not fit ends this target's replay. */
                        if (profile_delta_apply(&s.contents, p) < 0)
                                stopped = true;
                }
        }
        check_saves(p);
}

/* The CRCs made to match the bytes: the header's (of its first 28 bytes) and each record's (of its payload), as
 * far as the records' sizes fit. */
static void fix_checksums(uint8_t *data, size_t size)
{
        uint32_t crc;

        if (size < SECTION_JOURNAL_HEADER_SIZE)
                return;
        crc = htole32(section_crc32(0, data, SECTION_JOURNAL_HEADER_SIZE - sizeof(crc)));
        memcpy(data + SECTION_JOURNAL_HEADER_SIZE - sizeof(crc), &crc, sizeof(crc));
        for (size_t offset = SECTION_JOURNAL_HEADER_SIZE;
             size - offset >= SECTION_JOURNAL_RECORD_HEADER_SIZE;) {
                uint32_t payload;

                memcpy(&payload, data + offset, sizeof(payload));
                payload = le32toh(payload);
                if (payload > size - offset - SECTION_JOURNAL_RECORD_HEADER_SIZE)
                        break;
                crc = htole32(section_crc32(0, data + offset + SECTION_JOURNAL_RECORD_HEADER_SIZE, payload));
                memcpy(data + offset + sizeof(payload), &crc, sizeof(crc));
                offset += SECTION_JOURNAL_RECORD_HEADER_SIZE + payload;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ uint8_t *fixed = NULL;

        replay(data, size);
        if (size == 0)
                return 0;
        fixed = malloc(size);
        if (!fixed)
                return 0;
        memcpy(fixed, data, size);
        fix_checksums(fixed, size);
        replay(fixed, size);
        return 0;
}

/* One interval of samples on p, through the daemon's two steps: counted, then added to the delta. */
static int count_second(Profile *p, ProfileDelta *d, unsigned second)
{
        uint32_t main_id = 0, work = 1, read_id = 2, sys = 3, fresh, fresh_line = 0;
        char name[32];
        int r;

        snprintf(name, sizeof(name), "new_%u", second);
        r = profile_intern_function(p, "libnew.so", name, &fresh);
        /* A line of it (a Python frame's): DLIN. */
        if (r >= 0)
                r = profile_intern_line(p, "libnew.so", name, 1 + second % 3, &fresh_line);
        for (unsigned i = 0; r >= 0 && i < 10; i++) {
                uint32_t user[] = { work, main_id }, kernel[] = { sys, read_id, main_id },
                         deep[] = { fresh_line, work, fresh, main_id };
                const ProfileSample samples[] = {
                        { .tid = 100 + i % 3, .thread_name = "worker", .frames = user, .n_frames = 2 },
                        { .tid = 100, .frames = kernel, .n_frames = 3, .kind = PROFILE_SAMPLE_KERNEL,
                          .n_kernel_frames = 1 },
                        { .tid = 101, .frames = kernel + 1, .n_frames = 2, .kind = PROFILE_SAMPLE_BLOCKED,
                          .duration_ns = 1000000 + i },
                        { .tid = 102, .thread_name = "deep", .frames = deep, .n_frames = 4 - i % 2 },
                        { .tid = 103, .kind = PROFILE_SAMPLE_PREEMPTED, .duration_ns = 5000 },
                };

                for (size_t k = 0; k < ELEMENTSOF(samples) && r >= 0; k++) {
                        uint32_t stack_id;

                        r = profile_add_sample_stack(p, &samples[k], &stack_id);
                        if (r >= 0)
                                r = profile_delta_add(d, &samples[k], stack_id);
                }
        }
        return r;
}

static int check_replays_to(const uint8_t *journal, size_t size, const Profile *live)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_free_ void *a = NULL, *b = NULL;
        const char *error = NULL;
        SectionJournalHeader header;
        SectionJournalReader j;
        SectionJournalRecord rec;
        size_t a_size, b_size;
        int r;

        r = base_profile(&p);
        if (r >= 0)
                r = section_journal_open(journal, size, &error, &header, &j);
        while (r >= 0 && (r = section_journal_next(&j, &rec)) > 0) {
                Section s;

                while (r >= 0 && (r = section_next(&rec.sections, &s)) > 0) {
                        (void)section_read_u32(&s.contents);
                        (void)section_read_u64(&s.contents);
                        r = profile_delta_apply(&s.contents, p);
                }
        }
        if (r >= 0)
                r = profile_serialize_data(p, &a, &a_size);
        if (r >= 0)
                r = profile_serialize_data(live, &b, &b_size);
        if (r < 0) {
                fprintf(stderr, "The seed journal does not replay: %s\n", error ?: strerror(-r));
                return r;
        }
        if (a_size != b_size || memcmp(a, b, a_size) != 0) {
                fprintf(stderr, "The seed journal replays to other tables than the live ones.\n");
                return -EBADMSG;
        }
        return 0;
}

static int write_seeds(const char *dir)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        _cleanup_(profile_delta_freep) ProfileDelta *d = NULL;
        uint8_t header[SECTION_JOURNAL_HEADER_SIZE];
        _cleanup_free_ uint8_t *journal = NULL;
        size_t size = sizeof(header);
        SectionWriter w;
        int r;

        r = base_profile(&p);
        if (r >= 0)
                r = profile_delta_new(&d);
        if (r < 0)
                return r;
        section_journal_header(&(SectionJournalHeader) { .generation = 7, .snapshot_crc = 0x12345678 },
                               header);
        journal = malloc(size);
        if (!journal)
                return -ENOMEM;
        memcpy(journal, header, size);

        section_writer_init_bare(&w);
        for (unsigned second = 1; second <= 3; second++) {
                uint8_t *grown;
                size_t s;

                profile_delta_begin(d, p);
                r = count_second(p, d, second);
                if (r < 0)
                        break;
                profile_delta_end(d, p);
                w.size = 0;
                section_journal_record_begin(&w, second, 1700000000000000 + second * 1000000);
                s = section_begin(&w, TAG_DELTA, SECTION_REQUIRED);
                section_write_u32(&w, 4242);
                section_write_u64(&w, 123456);
                profile_delta_write(d, p, &w);
                section_end(&w, s);
                r = section_journal_record_finish(&w);
                if (r < 0)
                        break;
                grown = realloc(journal, size + w.size);
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                journal = grown;
                memcpy(journal + size, w.data, w.size);
                size += w.size;
        }
        section_writer_done(&w);
        if (r < 0)
                return r;
        /* The seed is what the daemon writes only if its replay rebuilds the live tables exactly. */
        r = check_replays_to(journal, size, p);
        if (r < 0)
                return r;
        return fuzz_write_file(dir, "targets.journal", journal, size);
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
