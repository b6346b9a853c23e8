/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "manager.h"
#include "profile.h"
#include "target.h"

/* A query, as one value: the bus layer (bus-query.c, bus-profile.c) unmarshals a call into a QueryRequest,
 * query_run() computes the Query (which targets, whether the caller may read them, their tables brought up to
 * date, the window or the merge, the per-target totals and the one span of time they all cover), and the bus
 * layer marshals the rows it takes from it. Nothing here knows a reply's shape. */

/* What a query needs besides its targets: the tables of them all as one (a view), each target's totals (the
 * process tables), or both. */
typedef enum QueryNeeds {
        QUERY_VIEW = 1 << 0,
        QUERY_TOTALS = 1 << 1,
} QueryNeeds;

typedef struct QueryRequest {
        const char *spec;     /* a PID, NAME.service or a cgroup path (target-spec.h); "": every target the
                               * caller may read */
        uint64_t window_usec; /* the last so long, rounded up to whole seconds; 0: since the attach */
        uint64_t until_usec;  /* CLOCK_REALTIME: a window of the seconds that end no later than this (a diff's
                               * base, compared at the same instant); 0: up to the newest. Only with a window. */
        QueryNeeds needs;
} QueryRequest;

/* One target's totals over the query's window, at its own tables' frequency. */
typedef struct QueryTotals {
        ProfileValues values;
        uint32_t frequency;
} QueryTotals;

typedef struct Query {
        Target **targets; /* one process, a group's members, or every target the caller may read */
        size_t n_targets;
        /* QUERY_VIEW: the tables the query reads, a target's own (borrowed) or built for it (owned): its
         * members' merged by name, or their windows' buckets counted. */
        const Profile *profile;
        Profile *owned;
        bool inexact;             /* a window with a second whose delta missed samples (out of memory) */
        QueryTotals *totals;      /* QUERY_TOTALS: one per target, in the order of targets */
        uint64_t after_usec;      /* a window's seconds are those ending after this */
        uint64_t until_usec;      /* and no later than this (window_bounds()) */
        uint64_t start_usec;      /* CLOCK_REALTIME: the one span the answer covers, from the earliest start to */
        uint64_t end_usec;        /* the latest end of what it counts; now to now when it counts nothing */
} Query;

/* Runs req for the caller of msg. The spec's targets, or for "" every target the caller may read (as ListTargets
 * lists them; of those, the view merges the ones counted at the daemon's frequency, which leaves out only exited
 * targets restored from a daemon that sampled at another), after draining the ring buffer (manager_sync()), so
 * that no table is older than the call. 1 with *ret set; 0 when polkit was asked about a foreign process (the
 * method handler returns 1, the call unanswered until it runs again); negative with error set for what the
 * caller asked wrong: an invalid spec or window, a target not attached or not the caller's, a window of tables
 * that keep none, a merge of tables of different frequencies. */
int query_run(Manager *m, sd_bus_message *msg, const QueryRequest *req, Query *ret, sd_bus_error *error);
void query_done(Query *q);

/* The single process a call names (the per-process calls: names of symbols, their modules), drained first.
 * Returns as query_run(). */
int query_process(Manager *m, sd_bus_message *msg, const char *spec, Target **ret, sd_bus_error *error);

/* The targets the caller may read, drained first: ListTargets' and the empty spec's. 0 with *ret set (the caller
 * frees the array); negative with AccessDenied in error. */
int query_visible_targets(Manager *m, sd_bus_message *msg, Target ***ret, size_t *ret_n, sd_bus_error *error);

/* A window's length in whole seconds, rounded up. */
uint32_t query_window_seconds(uint64_t window_usec);
