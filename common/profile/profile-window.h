/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "profile-delta.h"
#include "profile.h"

/* A target's recent history, for time windows over its tables: a ring of per-second buckets, each the
 * ProfileDelta of one second (the record the crash journal writes for it), frozen in a compact encoding. A
 * bucket keeps the delta's entries only (stack id, thread, kernel frames, values; the other stack's entries with
 * their canonical frames): its ids are those of the target's profile, the base, which defines them for good, so
 * counting a window reads the names from the base. The base must be the profile the deltas were of: a reset of
 * the tables (new ids) clears the ring.
 *
 * Counting a window is exact: each bucket's entries are counted with profile_add_counts(), the counting rules of
 * docs/COUNTING.md multiplied out, so the window over every bucket is the base's tables (those of the seconds
 * the ring holds), and the window of the last k buckets is what a profile fed only those seconds' samples
 * counts. No decay, no sampling of buckets. */

typedef struct ProfileWindow ProfileWindow;

/* At most max_seconds buckets (> 0), and their bytes (headers and encoded entries) at most max_bytes (0: no
 * bound), the oldest dropped first; a second that alone passes max_bytes is kept and every older one dropped. */
int profile_window_new(uint32_t max_seconds, size_t max_bytes, ProfileWindow **ret);
ProfileWindow *profile_window_free(ProfileWindow *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(ProfileWindow *, profile_window_free);

/* A number that changes with every push and clear of w and that no other window ever had: two counts over
 * windows of the same generations count the same buckets. */
uint64_t profile_window_generation(const ProfileWindow *w);

/* The ended delta d of the second [start_usec, end_usec) as the newest bucket. A delta that missed samples
 * (profile_delta_lost() > 0) makes an inexact bucket, which the spans of the windows holding it report. -ENOMEM
 * when the entries could not be kept: the second is still there, empty and inexact. -EINVAL for a delta at
 * another frequency than the buckets held (its profile was replaced: clear the ring first). */
int profile_window_push(ProfileWindow *w, const ProfileDelta *d, uint64_t start_usec, uint64_t end_usec);

/* Drop every bucket: the base's tables were reset, its ids mean other things from now on. */
void profile_window_clear(ProfileWindow *w);

/* Bytes held: the ring of bucket headers and the buckets' encoded entries. */
size_t profile_window_bytes(const ProfileWindow *w);
uint32_t profile_window_n_buckets(const ProfileWindow *w);

/* What a window covered: from the start of its oldest bucket to the end of its newest (times as pushed), how
 * many buckets, and whether one of them missed samples. All 0 for a window without buckets. */
typedef struct ProfileWindowSpan {
        uint64_t start_usec, end_usec;
        uint32_t buckets;
        bool inexact;
} ProfileWindowSpan;

/* Count the newest n_seconds buckets (all of them when the ring holds fewer; UINT32_MAX: all) into dst, the
 * base's function and stack ids translated into dst's by name (so that one dst takes the windows of several
 * targets: a service's tables) and the threads named as in the base. dst's limits do not apply. -EINVAL when
 * base, dst and the buckets are not at one frequency; on an error dst holds part of the window. ret_span may be
 * NULL. */
int profile_window_count(const ProfileWindow *w, const Profile *base, uint32_t n_seconds, Profile *dst,
                         ProfileWindowSpan *ret_span);

/* The entries of the buckets that end after after_usec (0: from the oldest) and no later than until_usec
 * (UINT64_MAX: to the newest) added into sum (profile_delta_add_entry()), which must have begun on base
 * (profile_delta_begin()): the window's counts per stack and thread, in the base's ids, uncounted (the other
 * stack's entries with their canonical frames). For a profile's threads per stack, which its tables do not keep.
 * -EINVAL when base and the buckets are not at one frequency. ret_span may be NULL. */
int profile_window_sum_between(const ProfileWindow *w, const Profile *base, uint64_t after_usec,
                               uint64_t until_usec, ProfileDelta *sum, ProfileWindowSpan *ret_span);

/* The totals of the newest n_seconds buckets (on-CPU samples and off-CPU time) into *ret, without counting
 * their tables: a process's row of a window. */
int profile_window_totals(const ProfileWindow *w, uint32_t n_seconds, ProfileValues *ret,
                          ProfileWindowSpan *ret_span);

/* The same windows by time, for targets that the same clock closes second by second (a group's members, some
 * of which exited long ago): the buckets that end after after_usec and no later than until_usec (UINT64_MAX: to
 * the newest), so that a window may also end before the newest second (a diff's base). The end of the newest
 * bucket, 0 for none, says where a window of several targets ends. */
uint64_t profile_window_end_usec(const ProfileWindow *w);
int profile_window_count_between(const ProfileWindow *w, const Profile *base, uint64_t after_usec,
                                 uint64_t until_usec, Profile *dst, ProfileWindowSpan *ret_span);
int profile_window_totals_between(const ProfileWindow *w, uint64_t after_usec, uint64_t until_usec,
                                  ProfileValues *ret, ProfileWindowSpan *ret_span);
