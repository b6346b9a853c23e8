/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>

#include "query-view.h"

/* Since the attach (or the last reset) until the exit or now. */
static void whole_span(const Target *t, uint64_t now_usec, uint64_t *start, uint64_t *end)
{
        *start = t->attach_usec;
        *end = t->exited && t->exit_usec ? t->exit_usec : now_usec;
}

int query_view_build(Target *const *targets, size_t n, uint32_t frequency, uint64_t window_usec,
                     uint64_t now_usec, QueryView *ret)
{
        assert(ret);

        if (window_usec > 0)
                return -EOPNOTSUPP;
        if (n == 0) {
                Profile *p;
                int r = profile_new(frequency, &p);
                if (r < 0)
                        return r;
                *ret = (QueryView){ .profile = p, .owned = p, .start_usec = now_usec, .end_usec = now_usec };
                return 0;
        }
        if (n > 1)
                return -EOPNOTSUPP;
        *ret = (QueryView){ .profile = targets[0]->profile };
        whole_span(targets[0], now_usec, &ret->start_usec, &ret->end_usec);
        return 0;
}

void query_view_done(QueryView *v)
{
        if (!v)
                return;
        profile_free(v->owned);
        *v = (QueryView){};
}
