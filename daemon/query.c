/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A query from its spec to its answer (query.h): targets, authorization, drain, window or merge, view, totals,
 * span. The window rules and the span of time are here and nowhere else. What the numbers mean is in
 * docs/COUNTING.md. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "authz.h"
#include "bus-names.h"
#include "log.h"
#include "profile-window.h"
#include "query.h"
#include "quote.h"
#include "target-spec.h"
#include "time-util.h"

uint32_t query_window_seconds(uint64_t window_usec)
{
        uint64_t seconds = window_usec / USEC_PER_SEC + (window_usec % USEC_PER_SEC > 0);

        return (uint32_t)MIN(seconds, (uint64_t)UINT32_MAX);
}

/* A window the daemon keeps: none asked (0), or whole seconds up to WindowSeconds=. */
static int check_window(const Manager *m, uint64_t window_usec, uint64_t until_usec, sd_bus_error *error)
{
        uint32_t seconds = query_window_seconds(window_usec);

        if (window_usec == 0 && until_usec > 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "A window that ends before now needs a length (window_usec > 0)");
        if (window_usec == 0)
                return 0;
        if (m->window_seconds == 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "Time windows are off in this vprofd (WindowSeconds=0)");
        if (seconds > m->window_seconds)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "A window of %" PRIu32 " s is longer than the %" PRIu32 " s this vprofd "
                                         "keeps (WindowSeconds=%" PRIu32 ")", seconds, m->window_seconds,
                                         m->window_seconds);
        return 0;
}

/* What building a view or the totals refuses, as the bus says it. */
static int view_error(int r, sd_bus_error *error)
{
        if (r == -EOPNOTSUPP)
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "A target of the query keeps no time window");
        if (r == -EXDEV)
                return sd_bus_error_setf(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                         "The tables of the query's processes were counted at different "
                                         "frequencies and cannot be merged");
        return r;
}

int query_visible_targets(Manager *m, sd_bus_message *msg, Target ***ret, size_t *ret_n, sd_bus_error *error)
{
        _cleanup_free_ Target **targets = NULL;
        AuthzCaller caller;
        size_t n = 0;
        Target *t;
        int r;

        r = authz_caller(&m->authz, msg, AUTHZ_READ, &caller, error);
        if (r < 0)
                return r;
        manager_sync(m);
        targets = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(Target *));
        if (!targets)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets)
                if (authz_may_see(t, &caller))
                        targets[n++] = t;
        *ret = TAKE_PTR(targets);
        *ret_n = n;
        return 0;
}

/* The targets of a spec, if the caller may see them: a process (with the children it is followed with, when it
 * was attached so) or a unit's or a cgroup's members. Returns as query_run(). */
static int spec_targets(Manager *m, sd_bus_message *msg, const char *spec_text, Target ***ret_targets,
                        size_t *ret_n, sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];
        TargetGroup *g;
        TargetSpec spec;
        int r;

        if (target_spec_parse(spec_text, &spec) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid target '%s': expected a PID, a unit name (NAME.service), a "
                                         "cgroup path (/...) or \"\" for every target",
                                         quote_prefix(spec_text, quoted));
        /* A process attached with its children that was detached alone, or went as an exited target: its group
         * stays, named by its PID, for those who may see it (others hear of the PID as of any other). */
        g = spec.kind == TARGET_SPEC_PID && !manager_get_target(m, (pid_t)spec.pid) ? manager_get_group(m, spec_text)
                                                                                       : NULL;
        if (g && authz_group(&m->authz, msg, g, AUTHZ_READ, NULL, NULL) < 0)
                g = NULL;
        if (spec.kind == TARGET_SPEC_PID && !g) {
                Target *t;

                r = authz_target(&m->authz, msg, spec.pid, manager_get_target(m, (pid_t)spec.pid), AUTHZ_READ,
                                 NULL, &t, error);
                if (r <= 0)
                        return r;
                /* A process followed with its children: the group of them, named by its PID. */
                g = t->group && t->group->kind == TARGET_GROUP_CHILDREN && t->group->root_pid == t->pid ? t->group
                                                                                                      : NULL;
                if (!g) {
                        Target **one = calloc(1, sizeof(Target *));
                        if (!one)
                                return -ENOMEM;
                        one[0] = t;
                        *ret_targets = one;
                        *ret_n = 1;
                        return 1;
                }
        } else if (!g) {
                g = manager_get_group(m, spec_text);
                if (!g)
                        return sd_bus_error_setf(error, VPROF_ERROR_NOT_ATTACHED, "%s is not attached",
                                                 quote_prefix(spec_text, quoted));
                r = authz_group(&m->authz, msg, g, AUTHZ_READ, NULL, error);
                if (r <= 0)
                        return r;
        }
        r = manager_group_members(m, g, ret_targets, ret_n);
        return r < 0 ? r : 1;
}

int query_process(Manager *m, sd_bus_message *msg, const char *spec_text, Target **ret, sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];
        TargetSpec spec;

        if (target_spec_parse(spec_text, &spec) < 0 || spec.kind != TARGET_SPEC_PID)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "Invalid target '%s': expected a PID",
                                         quote_prefix(spec_text, quoted));
        manager_sync(m); /* first, as in query_run() */
        return authz_target(&m->authz, msg, spec.pid, manager_get_target(m, (pid_t)spec.pid), AUTHZ_READ, NULL,
                            ret, error);
}

/* Since the attach (or the last reset) until the exit or now. */
static void whole_span(const Target *t, uint64_t now_usec, uint64_t *start, uint64_t *end)
{
        *start = t->attach_usec;
        *end = t->exited && t->exit_usec ? t->exit_usec : now_usec;
}

/* The span of several: from the earliest start to the latest end of those that cover something (a window in
 * which no second closed covers nothing, 0 to 0). */
static void span_add(Query *q, uint64_t s, uint64_t e)
{
        if (s == 0 && e == 0)
                return;
        q->start_usec = MIN(q->start_usec, s);
        q->end_usec = MAX(q->end_usec, e);
}

/* The bounds of a window of window_usec over the targets that ends with the newest second any of them closed, or
 * with until_usec (> 0): it holds the seconds of each that end after *after and no later than *until (after
 * UINT64_MAX when none has closed a second). So the targets of one query, some of which may have exited long ago,
 * count the same span of time, and a diff's two windows are counted back from one instant. */
static void window_bounds(Target *const *targets, size_t n, uint64_t window_usec, uint64_t until_usec,
                          uint64_t *after, uint64_t *until)
{
        uint64_t end = 0;

        for (size_t i = 0; i < n; i++)
                if (targets[i]->window)
                        end = MAX(end, profile_window_end_usec(targets[i]->window));
        *until = UINT64_MAX;
        if (end == 0) {
                *after = UINT64_MAX; /* no second closed: nothing ends after it */
                return;
        }
        /* The seconds end a second apart, give or take the timer's delay (milliseconds): half a second from a
         * window's ends takes exactly its number of them. */
        if (until_usec > 0) {
                end = MIN(end, until_usec);
                *until = until_usec + USEC_PER_SEC / 2;
        }
        *after = end - MIN(end, (uint64_t)query_window_seconds(window_usec) * USEC_PER_SEC) + USEC_PER_SEC / 2;
}

/* The members' windows counted into q->owned, each translated by name: the seconds that end within the window,
 * which ends where the newest member's last second does. A member that exited earlier brings the seconds of its
 * life that are within it, not its own last ones. */
static int build_window(Query *q, Target *const *targets, size_t n)
{
        int r;

        for (size_t i = 0; i < n; i++) {
                ProfileWindowSpan span;

                if (!targets[i]->window)
                        return -EOPNOTSUPP;
                r = profile_window_count_between(targets[i]->window, targets[i]->profile, q->after_usec,
                                                 q->until_usec, q->owned, &span);
                if (r == -EINVAL)
                        return -EXDEV; /* another frequency than the first member's */
                if (r < 0)
                        return r;
                if (span.buckets > 0)
                        span_add(q, span.start_usec, span.end_usec);
                q->inexact = q->inexact || span.inexact;
        }
        return 0;
}

/* The members' tables since their attach, merged into q->owned (profile_merge()). */
static int build_merge(Query *q, Target *const *targets, size_t n, uint64_t now_usec)
{
        int r;

        for (size_t i = 0; i < n; i++) {
                uint64_t s, e;

                r = profile_merge(q->owned, targets[i]->profile);
                if (r == -EINVAL)
                        return -EXDEV;
                if (r < 0)
                        return r;
                whole_span(targets[i], now_usec, &s, &e);
                span_add(q, s, e);
        }
        return 0;
}

/* The view of targets (n >= 0) over the window: one target since its attach is its own tables, borrowed;
 * anything else is built, at the members' frequency (a merge needs them all at one), or frequency for none. */
static int build_view(Query *q, QueryCache *cache, Target *const *targets, size_t n, uint32_t frequency,
                      uint64_t window_usec, uint64_t now_usec)
{
        QueryCacheView kept;
        int r;

        if (n == 1 && window_usec == 0) {
                q->profile = targets[0]->profile;
                whole_span(targets[0], now_usec, &q->start_usec, &q->end_usec);
                return 0;
        }
        /* The same windows counted lately: that view, exactly what counting again would give. */
        if (window_usec > 0 && cache && query_cache_get(cache, targets, n, q->after_usec, q->until_usec, &kept)) {
                q->profile = kept.profile;
                if (kept.start_usec <= kept.end_usec)
                        span_add(q, kept.start_usec, kept.end_usec);
                q->inexact = kept.inexact;
                return 0;
        }
        r = profile_new(n > 0 ? profile_frequency(targets[0]->profile) : frequency, &q->owned);
        if (r < 0)
                return r;
        q->profile = q->owned;
        if (window_usec == 0)
                return build_merge(q, targets, n, now_usec);
        r = build_window(q, targets, n);
        if (r < 0 || !cache)
                return r;
        /* Kept for the next query, which may be this one's twin from another caller; this query borrows it (no
         * other query runs before this one is answered). Without the memory it stays this query's own. */
        (void)query_cache_put(cache, targets, n, q->after_usec, q->until_usec, &q->owned, q->start_usec,
                              q->end_usec, q->inexact);
        return 0;
}

/* One target's totals over the window (its row in the process tables), cheaply: from its buckets' totals,
 * without counting their tables. Its span added to the query's. */
static int add_totals(Query *q, const Target *t, uint64_t window_usec, uint64_t now_usec, QueryTotals *ret)
{
        ProfileWindowSpan span;
        uint64_t s, e;
        int r;

        ret->frequency = profile_frequency(t->profile);
        if (window_usec == 0) {
                ret->values = *profile_total_values(t->profile);
                whole_span(t, now_usec, &s, &e);
                span_add(q, s, e);
                return 0;
        }
        if (!t->window)
                return -EOPNOTSUPP;
        r = profile_window_totals_between(t->window, q->after_usec, q->until_usec, &ret->values, &span);
        if (r < 0)
                return r;
        if (span.buckets > 0)
                span_add(q, span.start_usec, span.end_usec);
        return 0;
}

/* The empty spec's view merges the targets at the daemon's frequency: moves them to the front, returns how many. */
static size_t at_frequency_first(Target **targets, size_t n, uint32_t frequency)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (profile_frequency(targets[i]->profile) == frequency) {
                        Target *t = targets[k];
                        targets[k++] = targets[i];
                        targets[i] = t;
                }
        return k;
}

static int compute(Query *q, const Manager *m, const QueryRequest *req, size_t n_view)
{
        uint64_t now = now_usec(CLOCK_REALTIME);
        int r;

        q->start_usec = UINT64_MAX;
        q->end_usec = 0;
        window_bounds(q->targets, q->n_targets, req->window_usec, req->until_usec, &q->after_usec, &q->until_usec);
        if (req->needs & QUERY_VIEW) {
                r = build_view(q, m->query_cache, q->targets, n_view, m->config.frequency, req->window_usec, now);
                if (r < 0)
                        return r;
        }
        if (req->needs & QUERY_TOTALS) {
                q->totals = calloc(MAX(q->n_targets, (size_t)1), sizeof(QueryTotals));
                if (!q->totals)
                        return -ENOMEM;
                for (size_t i = 0; i < q->n_targets; i++) {
                        r = add_totals(q, q->targets[i], req->window_usec, now, &q->totals[i]);
                        if (r < 0)
                                return r;
                }
        }
        /* Nothing counted: the answer covers nothing, and says so. */
        if (q->start_usec > q->end_usec)
                q->start_usec = q->end_usec = now;
        return 0;
}

int query_run(Manager *m, sd_bus_message *msg, const QueryRequest *req, Query *ret, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        size_t n_view;
        int r;

        assert(m);
        assert(req);
        assert(ret);

        r = check_window(m, req->window_usec, req->until_usec, error);
        if (r < 0)
                return r;
        if (req->spec[0] == '\0') {
                r = query_visible_targets(m, msg, &q.targets, &q.n_targets, error);
                if (r < 0)
                        return r;
                n_view = at_frequency_first(q.targets, q.n_targets, m->config.frequency);
        } else {
                /* Drained first: a drain may make targets (a group's new members) and drop exited ones. */
                manager_sync(m);
                r = spec_targets(m, msg, req->spec, &q.targets, &q.n_targets, error);
                if (r <= 0)
                        return r;
                n_view = q.n_targets;
        }
        r = compute(&q, m, req, n_view);
        if (r < 0)
                return view_error(r, error);
        if (q.inexact) {
                char quoted[QUOTE_SIZE];
                log_notice("A window of %s counts a second whose delta missed samples for want of memory: its "
                           "tables miss them.", quote_prefix(req->spec, quoted));
        }
        *ret = q;
        q = (Query){};
        return 1;
}

void query_done(Query *q)
{
        if (!q)
                return;
        free(q->targets);
        profile_free(q->owned);
        free(q->totals);
        *q = (Query){};
}
