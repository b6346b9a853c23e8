/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>

#include "profile-window.h"
#include "query-view.h"
#include "time-util.h"

/* Since the attach (or the last reset) until the exit or now. */
static void whole_span(const Target *t, uint64_t now_usec, uint64_t *start, uint64_t *end)
{
        *start = t->attach_usec;
        *end = t->exited && t->exit_usec ? t->exit_usec : now_usec;
}

uint32_t query_window_seconds(uint64_t window_usec)
{
        uint64_t seconds = window_usec / USEC_PER_SEC + (window_usec % USEC_PER_SEC > 0);

        return (uint32_t)MIN(seconds, (uint64_t)UINT32_MAX);
}

/* The span of several: from the earliest start to the latest end of those that cover something. */
static void span_add(uint64_t *start, uint64_t *end, uint64_t s, uint64_t e)
{
        *start = MIN(*start, s);
        *end = MAX(*end, e);
}

/* The members' windows counted into one profile: each translated by name (profile_window_count()). */
static int build_window(Target *const *targets, size_t n, uint32_t seconds, uint64_t now_usec, QueryView *v)
{
        uint64_t start = UINT64_MAX, end = 0;
        int r;

        for (size_t i = 0; i < n; i++) {
                ProfileWindowSpan span;

                if (!targets[i]->window)
                        return -EOPNOTSUPP;
                r = profile_window_count(targets[i]->window, targets[i]->profile, seconds, v->owned, &span);
                if (r == -EINVAL)
                        return -EXDEV; /* another frequency than the first member's */
                if (r < 0)
                        return r;
                if (span.buckets > 0)
                        span_add(&start, &end, span.start_usec, span.end_usec);
                v->inexact = v->inexact || span.inexact;
        }
        /* No second closed yet in the window: it covers nothing, and says so. */
        if (start > end)
                start = end = now_usec;
        v->start_usec = start;
        v->end_usec = end;
        return 0;
}

/* The members' tables since their attach, merged (profile_merge()). */
static int build_merge(Target *const *targets, size_t n, uint64_t now_usec, QueryView *v)
{
        uint64_t start = UINT64_MAX, end = 0;
        int r;

        for (size_t i = 0; i < n; i++) {
                uint64_t s, e;

                r = profile_merge(v->owned, targets[i]->profile);
                if (r == -EINVAL)
                        return -EXDEV;
                if (r < 0)
                        return r;
                whole_span(targets[i], now_usec, &s, &e);
                span_add(&start, &end, s, e);
        }
        v->start_usec = start;
        v->end_usec = end;
        return 0;
}

int query_view_build(Target *const *targets, size_t n, uint32_t frequency, uint64_t window_usec,
                     uint64_t now_usec, QueryView *ret)
{
        _cleanup_(query_view_done) QueryView v = {};
        int r;

        assert(targets || n == 0);
        assert(ret);

        if (n == 1 && window_usec == 0) {
                *ret = (QueryView){ .profile = targets[0]->profile };
                whole_span(targets[0], now_usec, &ret->start_usec, &ret->end_usec);
                return 0;
        }
        /* Built anew: at the members' frequency (a merge needs them all at one), or the daemon's for none. */
        r = profile_new(n > 0 ? profile_frequency(targets[0]->profile) : frequency, &v.owned);
        if (r < 0)
                return r;
        v.profile = v.owned;
        if (n == 0)
                v.start_usec = v.end_usec = now_usec;
        else if (window_usec > 0)
                r = build_window(targets, n, query_window_seconds(window_usec), now_usec, &v);
        else
                r = build_merge(targets, n, now_usec, &v);
        if (r < 0)
                return r;
        *ret = v;
        v = (QueryView){};
        return 0;
}

int query_view_totals(const Target *t, uint64_t window_usec, uint64_t now_usec, ProfileValues *ret,
                      uint64_t *ret_start_usec, uint64_t *ret_end_usec)
{
        ProfileWindowSpan span;
        int r;

        if (window_usec == 0) {
                *ret = *profile_total_values(t->profile);
                whole_span(t, now_usec, ret_start_usec, ret_end_usec);
                return 0;
        }
        if (!t->window)
                return -EOPNOTSUPP;
        r = profile_window_totals(t->window, query_window_seconds(window_usec), ret, &span);
        if (r < 0)
                return r;
        if (span.buckets == 0)
                *ret_start_usec = *ret_end_usec = 0;
        else {
                *ret_start_usec = span.start_usec;
                *ret_end_usec = span.end_usec;
        }
        return 0;
}

void query_view_done(QueryView *v)
{
        if (!v)
                return;
        profile_free(v->owned);
        *v = (QueryView){};
}
