/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compiled unwind tables into the arena the BPF walk reads: room found by evicting the least recently walked,
 * ranges and ids reused after a quarantine, tables waiting for room placed when it comes. */
#include <errno.h>
#include <inttypes.h>

#include "log.h"
#include "time-util.h"
#include "unwind-arena.h"
#include "unwind-tables-internal.h"
#include "unwinder.h"

/* A table loaded this recently is evicted only when no other one can be. */
#define EVICT_GRACE_USEC (5 * USEC_PER_SEC)

/* A file's table no longer in the arena: its range and id after the quarantine. */
static void unload(UnwindTables *u, Slot *s, uint64_t now)
{
        (void)sampler_retire_unwind_table(u->sampler, s->id);
        (void)unwind_arena_release(u->arena, s->first, s->n, now);
        unwind_arena_release_id(u->arena, s->id, now);
        s->id = s->first = s->n = 0;
        u->push_all = true;
}

/* The table to give way: one no mapping references, else the least recently walked; tables just loaded last. */
static Slot *eviction_victim(UnwindTables *u, uint64_t now)
{
        Slot *s, *best = NULL;
        uint64_t best_used = 0;
        int best_class = 0;

        HASHMAP_FOREACH(s, u->by_key) {
                uint64_t used;
                int class;

                if (s->state != SLOT_LOADED)
                        continue;
                used = sampler_unwind_table_last_used(u->sampler, s->id);
                class = (now - s->state_usec < EVICT_GRACE_USEC ? 2 : 0) + (s->refs > 0 ? 1 : 0);
                if (!best || class < best_class || (class == best_class && used < best_used)) {
                        best = s;
                        best_used = used;
                        best_class = class;
                }
        }
        return best;
}

static void evict(UnwindTables *u, Slot *s, uint64_t now)
{
        /* The first at info: the operator may want a larger UnwindTableMiB=; the rest are counted. */
        log_full_errno(u->stats.evicted == 0 ? LOG_INFO : LOG_DEBUG, 0,
                       "Evicting the unwind table of %s (%" PRIu32 " KiB) for room%s.", s->name,
                       (uint32_t)((uint64_t)s->n * sizeof(struct vprof_unwind_entry) >> 10),
                       u->stats.evicted == 0 ? "; later evictions are counted in UnwindTablesEvicted" : "");
        unload(u, s, now);
        unwind_slot_set_state(s, SLOT_EVICTED);
        u->stats.evicted++;
}

static int on_retry(sd_event_source *source, uint64_t usec, void *userdata);

static void arm_retry(UnwindTables *u)
{
        uint64_t when = unwind_arena_next_release(u->arena);
        int r;

        if (when == 0)
                when = now_usec(CLOCK_MONOTONIC) + QUARANTINE_USEC;
        if (u->retry_timer) {
                r = sd_event_source_set_time(u->retry_timer, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(u->retry_timer, SD_EVENT_ONESHOT);
        } else
                r = sd_event_add_time(u->event, &u->retry_timer, CLOCK_MONOTONIC, when, 10 * USEC_PER_MSEC,
                                      on_retry, u);
        if (r < 0)
                log_debug_errno(r, "Failed to arm the unwind table timer: %m");
}

/* A compiled table into the arena: 1 when it is loaded, 0 when it waits for room, <0 when it never will. */
static int place(UnwindTables *u, Slot *s)
{
        UnwindTable *t = s->table;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        uint32_t n = t->n_index + t->n_rows, first = 0, id = 0;
        bool evicted = false, room = false;
        int r;

        if (n > unwind_arena_size(u->arena) / 2)
                return -EFBIG;
        for (;;) {
                if (unwind_arena_largest_free(u->arena, now) >= n && unwind_arena_alloc_id(u->arena, now, &id) >= 0) {
                        room = true;
                        break;
                }
                /* The ranges of evicted tables come back after their quarantine: wait for them rather than
                 * evict more, unless even they would not do. */
                if (unwind_arena_next_release(u->arena) != 0 &&
                    unwind_arena_size(u->arena) - unwind_arena_used(u->arena) >= n)
                        break;
                Slot *victim = eviction_victim(u, now);
                if (!victim)
                        break;
                evict(u, victim, now);
                evicted = true;
        }
        /* At once: no mapping may keep the id of an evicted table until it is reused. */
        if (evicted)
                unwind_tables_sync(u);
        if (!room)
                return 0;
        r = unwind_arena_alloc(u->arena, n, now, &first);
        if (r >= 0) {
                r = sampler_publish_unwind_table(u->sampler, id, first, t->index, t->n_index, t->rows, t->n_rows);
                if (r < 0)
                        (void)unwind_arena_release(u->arena, first, n, now);
        }
        if (r < 0) {
                unwind_arena_release_id(u->arena, id, now);
                return r;
        }
        s->id = id;
        s->first = first;
        s->n = n;
        s->base = t->base;
        log_debug("Unwind table of %s loaded: %" PRIu32 " rows, %" PRIu32 " KiB, compiled in %.1f ms.", s->name,
                  t->n_rows, (uint32_t)((uint64_t)n * sizeof(struct vprof_unwind_entry) >> 10),
                  (double)s->build_usec / 1000.0);
        s->table = unwind_table_free(s->table);
        unwind_slot_set_state(s, SLOT_LOADED);
        u->push_all = true;
        return 1;
}

/* The compiled tables waiting, in order, as far as they go in. */
void unwind_tables_place_waiting(UnwindTables *u)
{
        for (size_t i = 0; i < u->n_queue;) {
                Slot *s = u->queue[i];
                int r;

                if (s->state != SLOT_WAITING) {
                        i++;
                        continue;
                }
                r = place(u, s);
                if (r == 0) {
                        arm_retry(u);
                        break;
                }
                unwind_tables_queue_remove(u, s);
                if (r < 0) {
                        s->table = unwind_table_free(s->table);
                        if (r == -EFBIG) {
                                log_info("The unwind table of %s would take more than half of UnwindTableMiB=: "
                                         "its stacks go by frame pointers.", s->name);
                                u->stats.too_big++;
                                unwind_slot_set_state(s, SLOT_TOO_BIG);
                        } else {
                                log_debug_errno(r, "Cannot load the unwind table of %s: %m", s->name);
                                u->stats.failed++;
                                unwind_slot_set_state(s, SLOT_FAILED);
                        }
                        u->push_all = true;
                }
        }
        if (u->push_all)
                unwind_tables_sync(u);
}

static int on_retry(sd_event_source *source _unused_, uint64_t usec _unused_, void *userdata)
{
        unwind_tables_place_waiting(userdata);
        return 0;
}
