/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "authz.h"
#include "proc-info.h"
#include "profile.h"
#include "section-file.h"
#include "target.h"

/* One target's record in the state file (the TARG section of docs/STATE_FORMAT.md), written from a Target and
 * read back into a SavedTarget, checked. */

#define TARGET_SECTION_TAG SECTION_TAG('T', 'A', 'R', 'G')

typedef struct SavedTarget {
        ProcInfo info; /* tgid is the PID; start_time, credentials and comm as when saved */
        uint64_t flags;
        uid_t attach_uid;
        uid_t owner_uid; /* attach_uid in a file without it */
        uint64_t attach_usec;
        bool exited;
        uint64_t exit_usec; /* 0: unknown (a file without it, or running when saved) */
        Profile *profile;
} SavedTarget;

void saved_target_done(SavedTarget *t);

/* Who attached it, as manager_attach() takes it. */
AuthzCaller saved_target_caller(const SavedTarget *t);

/* Appends a TARG section. */
void target_serialize_write(const Target *t, SectionWriter *w);
/* The contents of a TARG section; -EBADMSG with the reason in the reader's error slot. */
int target_serialize_read(SectionReader *r, SavedTarget *ret);
/* Only its process information (PID, comm...), for naming a record that target_serialize_read() refused;
 * -EBADMSG when that part is damaged too. */
int target_serialize_read_info(SectionReader r, ProcInfo *ret);
