/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "profile-serialize.h"
#include "target-serialize.h"
#include "utf8.h"

#define TAG_INFO SECTION_TAG('T', 'I', 'N', 'F')
#define TAG_PROFILE SECTION_TAG('P', 'R', 'O', 'F')
#define TAG_SLOT SECTION_TAG('T', 'S', 'L', 'T')

/* PID_MAX_LIMIT: no kernel hands out a larger PID. */
#define PID_MAX ((uint32_t)4 * 1024 * 1024)
#define KNOWN_FLAGS ((uint64_t)VPROF_TARGET_OFF_CPU)

void saved_target_done(SavedTarget *t)
{
        t->profile = profile_free(t->profile);
}

AuthzCaller saved_target_caller(const SavedTarget *t)
{
        /* attach_uid 0 for another user: polkit allowed it (state-store.h). */
        return (AuthzCaller){ .uid = t->owner_uid, .polkit_allowed = t->attach_uid == 0 && t->owner_uid != 0 };
}

void target_serialize_write(const Target *t, SectionWriter *w)
{
        size_t target, s;

        target = section_begin(w, TARGET_SECTION_TAG, SECTION_REQUIRED);

        s = section_begin(w, TAG_INFO, SECTION_REQUIRED);
        section_write_u32(w, (uint32_t)t->pid);
        section_write_u64(w, t->info.start_time);
        /* Following children is a group's, and groups are not saved: a member comes back as a process alone. */
        section_write_u64(w, t->flags & KNOWN_FLAGS);
        section_write_u32(w, t->attach_uid);
        section_write_u64(w, t->attach_usec);
        for (int i = 0; i < 3; i++)
                section_write_u32(w, t->info.uid[i]);
        for (int i = 0; i < 3; i++)
                section_write_u32(w, t->info.gid[i]);
        section_write_u32(w, t->info.dumpable);
        section_write_u32(w, t->exited);
        section_write_string(w, t->info.comm);
        section_end(w, s);

        /* Optional: an older vprofd counts the target as attach_uid's, exited when restored. */
        s = section_begin(w, TAG_SLOT, 0);
        section_write_u32(w, t->owner_uid);
        section_write_u64(w, t->exited ? t->exit_usec : 0);
        section_end(w, s);

        s = section_begin(w, TAG_PROFILE, SECTION_REQUIRED);
        profile_serialize_write(t->profile, w);
        section_end(w, s);

        section_end(w, target);
}

static int read_info(SectionReader *r, SavedTarget *t)
{
        uint32_t pid, dumpable, exited;
        const char *comm;
        int k;

        pid = section_read_u32(r);
        t->info.start_time = section_read_u64(r);
        t->flags = section_read_u64(r);
        t->attach_uid = section_read_u32(r);
        t->attach_usec = section_read_u64(r);
        for (int i = 0; i < 3; i++)
                t->info.uid[i] = section_read_u32(r);
        for (int i = 0; i < 3; i++)
                t->info.gid[i] = section_read_u32(r);
        dumpable = section_read_u32(r);
        exited = section_read_u32(r);
        k = section_read_string(r, sizeof(t->info.comm) - 1, false, &comm);
        if (k < 0)
                return k;
        k = section_check_end(r);
        if (k < 0)
                return k;
        if (pid == 0 || pid > PID_MAX)
                return section_fail(r, "PID out of range");
        /* A flag this vprofd does not know could change what the tables mean. */
        if (t->flags & ~KNOWN_FLAGS)
                return section_fail(r, "unknown target flags");
        if (dumpable > 1 || exited > 1)
                return section_fail(r, "malformed target record");
        t->info.tgid = (pid_t)pid;
        t->info.dumpable = dumpable;
        t->exited = exited;
        /* Saved escaped, but an older vprofd saved the command name as the kernel had it: any bytes, which would
         * make every answer naming this target invalid after the restart too. Escaped within the same bound: an
         * older name has at most 15 bytes. */
        utf8_escape_buf(comm, strlen(comm), t->info.comm, sizeof(t->info.comm));
        return 0;
}

static int read_slot(SectionReader *r, SavedTarget *t)
{
        int k;

        t->owner_uid = section_read_u32(r);
        t->exit_usec = section_read_u64(r);
        k = section_check_end(r);
        if (k < 0)
                return k;
        return 0;
}

int target_serialize_read_info(SectionReader r, ProcInfo *ret)
{
        const char *error = NULL;
        Section s;
        int k;

        r.error = &error; /* this reading's own: the caller's slot keeps the first reason */
        while ((k = section_next(&r, &s)) > 0)
                if (s.tag == TAG_INFO) {
                        SavedTarget t = {};

                        s.contents.error = &error;
                        k = read_info(&s.contents, &t);
                        if (k < 0)
                                return k;
                        *ret = t.info;
                        return 0;
                }
        return -EBADMSG;
}

int target_serialize_read(SectionReader *r, SavedTarget *ret)
{
        SavedTarget t = {};
        bool have_info = false, have_slot = false;
        Section s;
        int k;

        while ((k = section_next(r, &s)) > 0) {
                if (s.tag == TAG_INFO && !have_info) {
                        k = read_info(&s.contents, &t);
                        have_info = true;
                } else if (s.tag == TAG_SLOT && !have_slot) {
                        k = read_slot(&s.contents, &t);
                        have_slot = true;
                } else if (s.tag == TAG_PROFILE && !t.profile)
                        k = profile_serialize_read(&s.contents, &t.profile);
                else if (IN_SET(s.tag, TAG_INFO, TAG_SLOT, TAG_PROFILE))
                        k = section_fail(r, "a target section twice");
                else
                        k = section_skip(&s);
                if (k < 0)
                        break;
        }
        if (k >= 0 && (!have_info || !t.profile))
                k = section_fail(r, "a target section is missing");
        if (k >= 0 && !have_slot)
                t.owner_uid = t.attach_uid;
        /* Only polkit makes a target attached as root another user's. */
        if (k >= 0 && t.attach_uid != 0 && t.owner_uid != t.attach_uid)
                k = section_fail(r, "a target owned by another user than the one that attached it");
        if (k >= 0 && !t.exited)
                t.exit_usec = 0;
        if (k < 0) {
                saved_target_done(&t);
                return k;
        }
        *ret = t;
        return 0;
}
