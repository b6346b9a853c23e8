/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile-window.h"
#include "query-cache.h"
#include "time-util.h"

/* Few: a view of a big target is megabytes, and the windows move on every second. */
#define VIEWS_MAX 4
/* A view older than this is dropped even when still exact (an exited target's window never moves): the memory
 * goes back, and the next query counts again, once. */
#define VIEW_MAX_AGE_USEC (2 * USEC_PER_SEC)

typedef struct Entry {
        uint64_t *generations; /* one a target, in the query's order; NULL for a free slot */
        size_t n;
        uint64_t after_usec, until_usec;
        uint64_t made_usec; /* CLOCK_MONOTONIC */
        Profile *profile;
        uint64_t start_usec, end_usec;
        bool inexact;
} Entry;

struct QueryCache {
        Entry entries[VIEWS_MAX];
        uint64_t hits;
};

static void entry_done(Entry *e)
{
        free(e->generations);
        profile_free(e->profile);
        *e = (Entry){};
}

int query_cache_new(QueryCache **ret)
{
        QueryCache *c = calloc(1, sizeof(*c));

        assert(ret);
        if (!c)
                return -ENOMEM;
        *ret = c;
        return 0;
}

QueryCache *query_cache_free(QueryCache *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < VIEWS_MAX; i++)
                entry_done(c->entries + i);
        free(c);
        return NULL;
}

static void drop_old(QueryCache *c, uint64_t now)
{
        for (size_t i = 0; i < VIEWS_MAX; i++)
                if (c->entries[i].generations && now - c->entries[i].made_usec > VIEW_MAX_AGE_USEC)
                        entry_done(c->entries + i);
}

static bool matches(const Entry *e, Target *const *targets, size_t n, uint64_t after_usec, uint64_t until_usec)
{
        if (!e->generations || e->n != n || e->after_usec != after_usec || e->until_usec != until_usec)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!targets[i]->window || profile_window_generation(targets[i]->window) != e->generations[i])
                        return false;
        return true;
}

bool query_cache_get(QueryCache *c, Target *const *targets, size_t n, uint64_t after_usec, uint64_t until_usec,
                     QueryCacheView *ret)
{
        assert(c);
        assert(ret);

        drop_old(c, now_usec(CLOCK_MONOTONIC));
        for (size_t i = 0; i < VIEWS_MAX; i++) {
                const Entry *e = c->entries + i;

                if (!matches(e, targets, n, after_usec, until_usec))
                        continue;
                *ret = (QueryCacheView){
                        .profile = e->profile,
                        .start_usec = e->start_usec,
                        .end_usec = e->end_usec,
                        .inexact = e->inexact,
                };
                c->hits++;
                return true;
        }
        return false;
}

int query_cache_put(QueryCache *c, Target *const *targets, size_t n, uint64_t after_usec, uint64_t until_usec,
                    Profile **profile, uint64_t start_usec, uint64_t end_usec, bool inexact)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        uint64_t *generations;
        Entry *slot = NULL;

        assert(c);
        assert(profile && *profile);

        generations = calloc(n > 0 ? n : 1, sizeof(uint64_t));
        if (!generations)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (!targets[i]->window) {
                        free(generations);
                        return -EINVAL;
                }
                generations[i] = profile_window_generation(targets[i]->window);
        }
        drop_old(c, now);
        /* A free slot, else the oldest view's. */
        for (size_t i = 0; i < VIEWS_MAX; i++) {
                Entry *e = c->entries + i;

                if (!e->generations) {
                        slot = e;
                        break;
                }
                if (!slot || e->made_usec < slot->made_usec)
                        slot = e;
        }
        entry_done(slot);
        *slot = (Entry){
                .generations = generations,
                .n = n,
                .after_usec = after_usec,
                .until_usec = until_usec,
                .made_usec = now,
                .profile = *profile,
                .start_usec = start_usec,
                .end_usec = end_usec,
                .inexact = inexact,
        };
        *profile = NULL;
        return 0;
}

size_t query_cache_size(const QueryCache *c)
{
        size_t n = 0;

        for (size_t i = 0; c && i < VIEWS_MAX; i++)
                n += c->entries[i].generations != NULL;
        return n;
}

uint64_t query_cache_hits(const QueryCache *c)
{
        return c ? c->hits : 0;
}
