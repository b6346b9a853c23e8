/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "profile.h"
#include "target.h"

/* The windowed views counted lately, for the next query over the same windows. A windowed query counts its
 * targets' buckets into a new profile, a few hundred milliseconds for a big target; many callers polling the
 * same window (dashboards, the exporter, `top` in several terminals) would each count it again, one after the
 * other on the daemon's one event loop. A view depends on nothing but the buckets counted and where the window
 * begins: it is kept under the generations of the targets' windows (profile_window_generation(), changed by every
 * second pushed and every reset) and the window's start, so a kept view is exactly what counting again would
 * give. A few views, each for a few seconds at most: the windows move on every second anyway. */

typedef struct QueryCache QueryCache;

/* A view kept: its profile (owned by the cache: valid until the next query_cache_put() or query_cache_free()),
 * its span (start > end when it counted no second) and whether a second of it missed samples. */
typedef struct QueryCacheView {
        const Profile *profile;
        uint64_t start_usec, end_usec;
        bool inexact;
} QueryCacheView;

int query_cache_new(QueryCache **ret);
QueryCache *query_cache_free(QueryCache *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(QueryCache *, query_cache_free);

/* The view of the windows of targets (each with a window) of the seconds that end after after_usec and no later
 * than until_usec, if kept: true with *ret set. */
bool query_cache_get(QueryCache *c, Target *const *targets, size_t n, uint64_t after_usec, uint64_t until_usec,
                     QueryCacheView *ret);

/* Keeps *profile (taken: *profile is NULL on success) as that view. -ENOMEM leaves it with the caller. */
int query_cache_put(QueryCache *c, Target *const *targets, size_t n, uint64_t after_usec, uint64_t until_usec,
                    Profile **profile, uint64_t start_usec, uint64_t end_usec, bool inexact);

/* Views kept, and the queries answered from one (for the status). */
size_t query_cache_size(const QueryCache *c);
uint64_t query_cache_hits(const QueryCache *c);
