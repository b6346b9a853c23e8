/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Queries in turn, one call of each caller at a time (query-queue.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "log.h"
#include "query-queue.h"

typedef struct Call {
        sd_bus_message *msg;
        QueryCallFn fn;
        void *userdata;
        struct Call *next;
} Call;

/* A sender with calls queued: its calls in order, and its place in the ring of callers. */
typedef struct Caller {
        char *sender; /* the unique name, the key of QueryQueue.callers */
        Call *first, *last;
        struct Caller *next; /* in the ring, whose head is the next to run */
} Caller;

struct QueryQueue {
        sd_event_source *source; /* on while a call is queued */
        Hashmap *callers;        /* sender -> Caller */
        Caller *head, *tail;     /* the ring, as a list: head runs next, then goes to the tail */
        size_t n;
};

static void call_free(Call *c)
{
        sd_bus_message_unref(c->msg);
        free(c);
}

static void caller_free(Caller *c)
{
        while (c->first) {
                Call *next = c->first->next;
                call_free(c->first);
                c->first = next;
        }
        free(c->sender);
        free(c);
}

/* The next call: the head caller's first, the caller then moved to the tail, or out of the ring when it has no
 * call left. */
static Call *take_next(QueryQueue *q)
{
        Caller *c = q->head;
        Call *call;

        if (!c)
                return NULL;
        call = c->first;
        c->first = call->next;
        q->head = c->next;
        if (!q->head)
                q->tail = NULL;
        c->next = NULL;
        if (c->first) {
                if (q->tail)
                        q->tail->next = c;
                else
                        q->head = c;
                q->tail = c;
        } else {
                hashmap_remove(q->callers, c->sender);
                caller_free(c);
        }
        q->n--;
        return call;
}

/* What sd-bus does with a method handler's return: an error set, or a negative errno, goes back as the error. */
static void run_call(Call *call)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_message_rewind(call->msg, true);
        if (r >= 0)
                r = call->fn(call->msg, call->userdata, &error);
        if (sd_bus_error_is_set(&error))
                r = sd_bus_reply_method_error(call->msg, &error);
        else if (r < 0)
                r = sd_bus_reply_method_errno(call->msg, r, NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to answer %s from %s: %m", sd_bus_message_get_member(call->msg) ?: "?",
                                sd_bus_message_get_sender(call->msg) ?: "?");
        call_free(call);
}

static int on_turn(sd_event_source *s, void *userdata)
{
        QueryQueue *q = userdata;
        Call *call = take_next(q);

        if (call)
                run_call(call);
        if (q->n == 0)
                (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return 0;
}

int query_queue_new(sd_event *event, int64_t priority, QueryQueue **ret)
{
        QueryQueue *q;
        int r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->callers = hashmap_new(&string_hash_ops);
        if (!q->callers) {
                free(q);
                return -ENOMEM;
        }
        r = sd_event_add_defer(event, &q->source, on_turn, q);
        if (r >= 0)
                r = sd_event_source_set_priority(q->source, priority);
        if (r >= 0)
                r = sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
        if (r < 0) {
                query_queue_free(q);
                return r;
        }
        *ret = q;
        return 0;
}

QueryQueue *query_queue_free(QueryQueue *q)
{
        if (!q)
                return NULL;
        while (q->head) {
                Caller *next = q->head->next;
                caller_free(q->head);
                q->head = next;
        }
        hashmap_free(q->callers);
        sd_event_source_disable_unref(q->source);
        free(q);
        return NULL;
}

int query_queue_add(QueryQueue *q, sd_bus_message *msg, QueryCallFn fn, void *userdata)
{
        const char *sender = sd_bus_message_get_sender(msg) ?: "";
        Caller *c = hashmap_get(q->callers, sender);
        Call *call;
        int r;

        call = calloc(1, sizeof(*call));
        if (!call)
                return -ENOMEM;
        *call = (Call){ .msg = sd_bus_message_ref(msg), .fn = fn, .userdata = userdata };
        if (!c) {
                c = calloc(1, sizeof(*c));
                if (c)
                        c->sender = strdup(sender);
                r = c && c->sender ? hashmap_put(q->callers, c->sender, c) : -ENOMEM;
                if (r < 0) {
                        if (c)
                                caller_free(c);
                        call_free(call);
                        return r;
                }
                if (q->tail)
                        q->tail->next = c;
                else
                        q->head = c;
                q->tail = c;
        }
        if (c->first)
                c->last->next = call;
        else
                c->first = call;
        c->last = call;
        q->n++;
        (void)sd_event_source_set_enabled(q->source, SD_EVENT_ON);
        return 1;
}

void query_queue_flush(QueryQueue *q)
{
        Call *call;

        if (!q)
                return;
        while ((call = take_next(q)))
                run_call(call);
        (void)sd_event_source_set_enabled(q->source, SD_EVENT_OFF);
}

size_t query_queue_size(const QueryQueue *q)
{
        return q ? q->n : 0;
}
