/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "section-file.h"

/* What one profile gained during one interval (a second): the unit of the daemon's crash journal and the
 * per-second bucket of the time windows over the tables (profile-window.h). A delta holds
 *  - entries, one per (stack, thread, kernel frames): the exact counts that the interval's samples of that stack
 *    and thread added (ProfileValues: on-CPU samples by mode, off-CPU nanoseconds by kind). Samples counted in
 *    the profile's "other" stack (past its stack limit) have no stack id: their entry keeps what counting reads
 *    of their frames, so that replaying them counts them in the other stack exactly as live counting did. That
 *    is the leaf, the distinct functions of the kernel part, the user leaf and the distinct functions of the user
 *    part, in this order (kernel, then user; each part its leaf first, then the others by id): recursion and
 *    order do not count, so samples of many stacks share an entry, and a delta of a workload whose every stack
 *    is new stays small past the limit;
 *  - what the profile defined meanwhile, read from it when the delta is written: new functions (module and
 *    name), mangled names set, new stacks (frames and kernel frames), and the names of the threads the entries
 *    count, as they were at the end of the interval.
 * So a written delta is self-contained relative to the profile as it was when the delta began, and replaying
 * the deltas of a period, in order, onto the profile as it was before it gives exactly the profile after it:
 * profile_add_counts() applies profile_add_sample()'s rules multiplied out.
 *
 * Its written form is a list of sections (section-file.h), every one required: docs/STATE_FORMAT.md, "A profile
 * delta". */

typedef struct ProfileDelta ProfileDelta;

int profile_delta_new(ProfileDelta **ret);
ProfileDelta *profile_delta_free(ProfileDelta *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProfileDelta *, profile_delta_free);

/* Start afresh, empty, relative to p as it is now. Also after p was replaced (a reset). */
void profile_delta_begin(ProfileDelta *d, const Profile *p);

/* One sample that profile_add_sample_stack() has just counted in p, with the stack id it returned. -ENOMEM leaves
 * the sample out of the delta (it stays counted in the profile) and marks the delta incomplete. */
int profile_delta_add(ProfileDelta *d, const ProfileSample *s, uint32_t stack_id);

/* The end of the interval: what p has defined since the beginning belongs to this delta. */
void profile_delta_end(ProfileDelta *d, const Profile *p);

/* Nothing counted and nothing defined between the beginning and the end. */
bool profile_delta_empty(const ProfileDelta *d);
size_t profile_delta_n_entries(const ProfileDelta *d);
/* Samples that did not fit in the delta (out of memory). */
uint64_t profile_delta_lost(const ProfileDelta *d);
/* The frequency of the profile the delta began on. */
uint32_t profile_delta_frequency(const ProfileDelta *d);

/* One entry, as profile_add_counts() takes it: the counts of one (stack, thread, kernel frames). An entry of the
 * other stack has stack_id PROFILE_STACK_OTHER and its canonical frames (above), owned by the delta. */
typedef struct ProfileDeltaEntry {
        uint32_t stack_id;
        uint32_t tid;
        uint32_t n_kernel_frames;
        uint32_t n_frames; /* other-stack entries, else 0 */
        const uint32_t *frames;
        ProfileValues values;
} ProfileDeltaEntry;

/* Entry i < profile_delta_n_entries(d), in no particular order; valid until the delta changes. */
void profile_delta_entry(const ProfileDelta *d, size_t i, ProfileDeltaEntry *ret);

/* Add the values of an entry read from another delta to this one's entry of the same stack, thread and kernel
 * frames (and frames, already canonical, for the other stack): a sum of deltas of one profile, entry by entry.
 * -ENOMEM leaves the delta as it was. */
int profile_delta_add_entry(ProfileDelta *d, const ProfileDeltaEntry *e);

/* Append the ended delta's sections, its definitions read from p, the profile it began and ended on. */
void profile_delta_write(const ProfileDelta *d, const Profile *p, SectionWriter *w);

/* Replay a written delta (the list of its sections) onto p. It must continue p: the same frequency, and its
 * first new function and stack ids p's next ones; ids, frames, names and threads are checked before anything is
 * counted. -EBADMSG with the reason in the reader's error slot; p may then hold some of the delta's definitions
 * (functions and stacks without counts) but none of its counts. -ENOMEM. */
int profile_delta_apply(SectionReader *list, Profile *p);
