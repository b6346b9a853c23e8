/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

/* The queries waiting their turn, so that no caller starves the others. vprofd answers on one event loop, and a
 * query over a big target (a window's buckets counted, a merge) holds it for up to a few hundred milliseconds:
 * run as the bus hands them over, 500 of them queued ahead of a `vprofctl status` would make it wait for all of
 * them. Instead the method handler queues the call (query_queue_add()) and the queue runs the calls from an event
 * source of a lower priority than the bus's: every message the bus has is read first (the quick methods answered
 * at once, the queries queued), then one query runs, then the bus again. The queue takes the callers in turn,
 * one call of each (round robin by sender), so a caller with 500 calls queued delays another caller's one by one
 * query, not by its 500. So nothing waits longer than the query that is running, plus one query per caller
 * ahead of it for a query. A query is the very handler the bus would have run, run later: it drains, reads the
 * targets and authorizes at its turn, as a call that arrived then would. */

typedef int (*QueryCallFn)(sd_bus_message *msg, void *userdata, sd_bus_error *error);

typedef struct QueryQueue QueryQueue;

/* A queue run from event at priority (below the bus's). */
int query_queue_new(sd_event *event, int64_t priority, QueryQueue **ret);
/* Drops the calls still queued, unanswered (the daemon is going). */
QueryQueue *query_queue_free(QueryQueue *q);

/* Queues msg, to be answered by fn(msg, userdata, error) at its turn, as sd-bus answers a method handler: an
 * error set or a negative return is replied as an error. 1 (the call is handled: the handler returns it), or
 * -ENOMEM. */
int query_queue_add(QueryQueue *q, sd_bus_message *msg, QueryCallFn fn, void *userdata);

/* Runs every queued call now, in turn (the daemon is about to exit and owes them their answers). */
void query_queue_flush(QueryQueue *q);

size_t query_queue_size(const QueryQueue *q);
