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
} QueryView;

/* The view of targets (n >= 1; the members of a group may be 0) over the last window_usec (0: since the
 * attach), at now_usec (CLOCK_REALTIME). A group with no member yet gets empty tables at frequency.
 * -EOPNOTSUPP for what is not built yet. */
int query_view_build(Target *const *targets, size_t n, uint32_t frequency, uint64_t window_usec,
                     uint64_t now_usec, QueryView *ret);
void query_view_done(QueryView *v);
