/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The saved-state readers: section-file.c (header, CRC, sections), profile-serialize.c (a profile file) and
 * the daemon's targets file as the store reads it (daemon/state-restore.c: BOOT, then each TARG through
 * target_serialize_read()). Each input is read as it is, then again with its payload size and CRC made
 * right, so that mutations reach the sections behind the CRC check. A profile that loads must save and load
 * again the same (the writer and the reader agree on everything the reader lets through). Seeds: files
 * written by the serializers from a profile with functions, modules, threads and off-CPU time. */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-input.h"
#include "macros.h"
#include "profile-serialize.h"
#include "section-file.h"
#include "target-serialize.h"

/* As in daemon/state-internal.h, which keeps them to the store. */
#define TARGETS_MAGIC "VPROFDST"
#define TAG_BOOT SECTION_TAG('B', 'O', 'O', 'T')

static void use_profile(const Profile *p)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        _cleanup_free_ void *again = NULL;
        Profile *reloaded = NULL;
        const char *error = NULL;
        size_t n, size;

        if (profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &rows, &n) >= 0) {
                free(rows);
                rows = NULL;
        }
        if (profile_modules(p, PROFILE_SORT_EXCLUSIVE, &rows, &n) >= 0) {
                free(rows);
                rows = NULL;
        }
        (void)profile_threads(p, PROFILE_SORT_ELAPSED_INCLUSIVE, &rows, &n);

        if (profile_serialize_data(p, &again, &size) < 0)
                return; /* out of memory */
        if (profile_serialize_parse(again, size, &reloaded, &error) < 0) {
                fprintf(stderr, "A loaded profile does not load again once saved: %s\n", error ?: "?");
                abort();
        }
        profile_free(reloaded);
}

/* The daemon's reading of its targets file: the whole list, each target record on its own. */
static void read_targets(const uint8_t *data, size_t size)
{
        const char *error = NULL;
        SectionReader list;
        Section s;

        if (section_file_open(data, size, TARGETS_MAGIC, &error, &list) < 0)
                return;
        while (section_next(&list, &s) > 0) {
                const char *record_error = NULL;
                SavedTarget t = {};
                const char *boot;

                if (s.tag == TAG_BOOT) {
                        (void)section_read_string(&s.contents, 36, false, &boot);
                        continue;
                }
                if (s.tag != TARGET_SECTION_TAG) {
                        (void)section_skip(&s);
                        continue;
                }
                s.contents.error = &record_error;
                if (target_serialize_read(&s.contents, &t) >= 0) {
                        use_profile(t.profile);
                        saved_target_done(&t);
                }
        }
}

static void read_profile(const uint8_t *data, size_t size)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        const char *error = NULL;

        if (profile_serialize_parse(data, size, &p, &error) >= 0)
                use_profile(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ uint8_t *fixed = NULL;
        uint64_t payload;
        uint32_t crc;

        read_profile(data, size);
        read_targets(data, size);

        /* The header's payload size and CRC, made to match: header 8 magic | u32 version | u32 flags | u64
         * size | u32 CRC | u32 0 (section-file.h). */
        if (size < SECTION_FILE_HEADER_SIZE)
                return 0;
        fixed = malloc(size);
        if (!fixed)
                return 0;
        memcpy(fixed, data, size);
        payload = htole64(size - SECTION_FILE_HEADER_SIZE);
        memcpy(fixed + 16, &payload, sizeof(payload));
        crc = section_crc32(0, fixed, 24);
        crc = htole32(section_crc32(crc, fixed + SECTION_FILE_HEADER_SIZE, size - SECTION_FILE_HEADER_SIZE));
        memcpy(fixed + 24, &crc, sizeof(crc));
        read_profile(fixed, size);
        read_targets(fixed, size);
        return 0;
}

static int make_profile(Profile **ret)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        uint32_t main_id, work, work_line, read_id, sys;
        int r;

        r = profile_new(99, &p);
        if (r >= 0)
                r = profile_intern_function(p, "prog", "main", &main_id);
        if (r >= 0)
                r = profile_intern_function(p, "libwork.so", "ns::Work<int>::run(int)", &work);
        if (r >= 0)
                r = profile_intern_function(p, "libc.so.6", "read", &read_id);
        if (r >= 0)
                r = profile_intern_function(p, "[kernel]", "ksys_read", &sys);
        /* A line of a function (a Python frame's): the FUNC entry with its line bit. */
        if (r >= 0)
                r = profile_intern_line(p, "libwork.so", "ns::Work<int>::run(int)", 42, &work_line);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < 20 && r >= 0; i++) {
                uint32_t user[] = { i % 2 ? work : work_line, main_id }, kernel[] = { sys, read_id, main_id };
                const ProfileSample samples[] = {
                        { .tid = 100 + i % 3, .thread_name = "worker", .frames = user, .n_frames = 2 },
                        { .tid = 100, .frames = kernel, .n_frames = 3, .kind = PROFILE_SAMPLE_KERNEL,
                          .n_kernel_frames = 1 },
                        { .tid = 101, .frames = kernel + 1, .n_frames = 2, .kind = PROFILE_SAMPLE_BLOCKED,
                          .duration_ns = 1000000 + i },
                };

                for (size_t k = 0; k < ELEMENTSOF(samples) && r >= 0; k++)
                        r = profile_add_sample(p, &samples[k]);
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

static int write_seeds(const char *dir)
{
        _cleanup_(profile_freep) Profile *p = NULL, *empty = NULL;
        _cleanup_free_ void *data = NULL, *targets = NULL;
        size_t size, targets_size, s;
        SectionWriter w;
        uint32_t crc;
        Target t = { .pid = 4242, .attach_uid = 1000, .attach_usec = 1700000000000000, .exited = true };
        int r;

        r = make_profile(&p);
        if (r >= 0)
                r = profile_new(999, &empty);
        if (r >= 0)
                r = profile_serialize_data(p, &data, &size);
        if (r >= 0)
                r = fuzz_write_file(dir, "profile.state", data, size);
        if (r < 0)
                return r;

        section_writer_init(&w, TARGETS_MAGIC);
        s = section_begin(&w, TAG_BOOT, SECTION_REQUIRED);
        section_write_string(&w, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
        section_end(&w, s);
        t.info = (ProcInfo) { .tgid = 4242, .start_time = 123456, .uid = { 1000, 1000, 1000 },
                              .gid = { 1000, 1000, 1000 }, .dumpable = 1 };
        strcpy(t.info.comm, "worker");
        t.profile = p;
        target_serialize_write(&t, &w);
        t.pid = t.info.tgid = 4343;
        t.exited = false;
        t.flags = VPROF_TARGET_OFF_CPU;
        t.profile = empty;
        target_serialize_write(&t, &w);
        r = section_writer_finish(&w, &targets, &targets_size, &crc);
        if (r < 0)
                return r;
        return fuzz_write_file(dir, "targets.state", targets, targets_size);
}

int LLVMFuzzerInitialize(int *argc _unused_, char ***argv _unused_)
{
        return fuzz_seeds_main(write_seeds);
}
