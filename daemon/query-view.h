/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "target.h"

/* What one query reads: the tables of one target or the merge of a group's members, whole (since the attach)
 * or over a time window, and the time they cover. Built for the query and dropped after its reply. */
typedef struct QueryView {
        const Profile *profile; /* what the query reads: a target's own, or owned */
        Profile *owned;         /* built for this query (a window, a merge); NULL when borrowed */
        uint64_t start_usec;    /* CLOCK_REALTIME: the span the tables count */
        uint64_t end_usec;
        bool inexact;           /* a window with a second whose delta missed samples (out of memory) */
} QueryView;

/* The view of targets (n >= 1; the members of a group may be 0) over the last window_usec (0: since the
 * attach), at now_usec (CLOCK_REALTIME). One target since its attach is its own tables, borrowed; anything else
 * is built: the members' tables merged by name (profile_merge()), or their windows' buckets counted
 * (profile_window_count(), window_usec rounded up to whole seconds). The span is the attach (the earliest) to
 * the exit or now, or for a window the start of its oldest bucket to the end of its newest (now to now when no
 * second has closed in it yet). A group with no member yet gets empty tables at frequency. -EOPNOTSUPP for a
 * window of a target without windows (WindowSeconds=0), -EXDEV for members counted at different frequencies. */
int query_view_build(Target *const *targets, size_t n, uint32_t frequency, uint64_t window_usec,
                     uint64_t now_usec, QueryView *ret);
void query_view_done(QueryView *v);

/* A window's length in whole seconds, rounded up. */
uint32_t query_window_seconds(uint64_t window_usec);

/* One target's totals over the window (its row in the process tables), cheaply: from its windows' buckets'
 * totals, without counting their tables. The span as query_view_build()'s, but 0 to 0 when no second has closed
 * in the window. -EOPNOTSUPP as query_view_build(). */
int query_view_totals(const Target *t, uint64_t window_usec, uint64_t now_usec, ProfileValues *ret,
                      uint64_t *ret_start_usec, uint64_t *ret_end_usec);
