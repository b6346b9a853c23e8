/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "profile-state.h"
#include "state-record.h"

#define TAG_INFO STATE_TAG('T', 'I', 'N', 'F')
#define TAG_PROFILE STATE_TAG('P', 'R', 'O', 'F')
#define TAG_SLOT STATE_TAG('T', 'S', 'L', 'T')

/* PID_MAX_LIMIT: no kernel hands out a larger PID. */
#define PID_MAX ((uint32_t)4 * 1024 * 1024)
#define KNOWN_FLAGS ((uint64_t)VPROF_TARGET_OFF_CPU)

void saved_target_done(SavedTarget *t)
{
        t->profile = profile_free(t->profile);
}

AuthzCaller saved_target_caller(const SavedTarget *t)
{
        /* attach_uid 0 for another user: polkit allowed it (state.h). */
        return (AuthzCaller){ .uid = t->owner_uid, .polkit_allowed = t->attach_uid == 0 && t->owner_uid != 0 };
}

void state_record_write(const Target *t, StateWriter *w)
{
        size_t target, s;

        target = state_begin_section(w, STATE_TAG_TARGET, STATE_SECTION_REQUIRED);

        s = state_begin_section(w, TAG_INFO, STATE_SECTION_REQUIRED);
        state_write_u32(w, (uint32_t)t->pid);
        state_write_u64(w, t->info.start_time);
        state_write_u64(w, t->flags);
        state_write_u32(w, t->attach_uid);
        state_write_u64(w, t->attach_usec);
        for (int i = 0; i < 3; i++)
                state_write_u32(w, t->info.uid[i]);
        for (int i = 0; i < 3; i++)
                state_write_u32(w, t->info.gid[i]);
        state_write_u32(w, t->info.dumpable);
        state_write_u32(w, t->exited);
        state_write_string(w, t->info.comm);
        state_end_section(w, s);

        /* Optional: an older vprofd counts the target as attach_uid's, exited when restored. */
        s = state_begin_section(w, TAG_SLOT, 0);
        state_write_u32(w, t->owner_uid);
        state_write_u64(w, t->exited ? t->exit_usec : 0);
        state_end_section(w, s);

        s = state_begin_section(w, TAG_PROFILE, STATE_SECTION_REQUIRED);
        profile_state_write(t->profile, w);
        state_end_section(w, s);

        state_end_section(w, target);
}

static int read_info(StateReader *r, SavedTarget *t)
{
        uint32_t pid, dumpable, exited;
        const char *comm;
        int k;

        pid = state_read_u32(r);
        t->info.start_time = state_read_u64(r);
        t->flags = state_read_u64(r);
        t->attach_uid = state_read_u32(r);
        t->attach_usec = state_read_u64(r);
        for (int i = 0; i < 3; i++)
                t->info.uid[i] = state_read_u32(r);
        for (int i = 0; i < 3; i++)
                t->info.gid[i] = state_read_u32(r);
        dumpable = state_read_u32(r);
        exited = state_read_u32(r);
        k = state_read_string(r, sizeof(t->info.comm) - 1, false, &comm);
        if (k < 0)
                return k;
        k = state_check_end(r);
        if (k < 0)
                return k;
        if (pid == 0 || pid > PID_MAX)
                return state_fail(r, "PID out of range");
        /* A flag this vprofd does not know could change what the tables mean. */
        if (t->flags & ~KNOWN_FLAGS)
                return state_fail(r, "unknown target flags");
        if (dumpable > 1 || exited > 1)
                return state_fail(r, "malformed target record");
        t->info.tgid = (pid_t)pid;
        t->info.dumpable = dumpable;
        t->exited = exited;
        strcpy(t->info.comm, comm); /* bounded above */
        return 0;
}

static int read_slot(StateReader *r, SavedTarget *t)
{
        int k;

        t->owner_uid = state_read_u32(r);
        t->exit_usec = state_read_u64(r);
        k = state_check_end(r);
        if (k < 0)
                return k;
        return 0;
}

int state_record_read_info(StateReader r, ProcInfo *ret)
{
        const char *error = NULL;
        StateSection s;
        int k;

        r.error = &error; /* this reading's own: the caller's slot keeps the first reason */
        while ((k = state_next_section(&r, &s)) > 0)
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

int state_record_read(StateReader *r, SavedTarget *ret)
{
        SavedTarget t = {};
        bool have_info = false, have_slot = false;
        StateSection s;
        int k;

        while ((k = state_next_section(r, &s)) > 0) {
                if (s.tag == TAG_INFO && !have_info) {
                        k = read_info(&s.contents, &t);
                        have_info = true;
                } else if (s.tag == TAG_SLOT && !have_slot) {
                        k = read_slot(&s.contents, &t);
                        have_slot = true;
                } else if (s.tag == TAG_PROFILE && !t.profile)
                        k = profile_state_read(&s.contents, &t.profile);
                else if (IN_SET(s.tag, TAG_INFO, TAG_SLOT, TAG_PROFILE))
                        k = state_fail(r, "a target section twice");
                else
                        k = state_skip_section(&s);
                if (k < 0)
                        break;
        }
        if (k >= 0 && (!have_info || !t.profile))
                k = state_fail(r, "a target section is missing");
        if (k >= 0 && !have_slot)
                t.owner_uid = t.attach_uid;
        /* Only polkit makes a target attached as root another user's. */
        if (k >= 0 && t.attach_uid != 0 && t.owner_uid != t.attach_uid)
                k = state_fail(r, "a target owned by another user than the one that attached it");
        if (k >= 0 && !t.exited)
                t.exit_usec = 0;
        if (k < 0) {
                saved_target_done(&t);
                return k;
        }
        *ret = t;
        return 0;
}
