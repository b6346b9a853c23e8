/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The seconds of the windows and the journal (manager.h): each target's delta ends, goes to the journal and into
 * its window, on a timer while some target runs, and for one target at its exit. */
#include <inttypes.h>

#include "log.h"
#include "manager.h"
#include "time-util.h"

uint64_t manager_close_interval(const Manager *m)
{
        return m->window_seconds > 0 ? USEC_PER_SEC : m->journal_usec;
}

bool manager_closing(const Manager *m)
{
        return m->close_timer && sd_event_source_get_enabled(m->close_timer, NULL) > 0;
}

void manager_close_target_second(Manager *m, Target *t, uint64_t now)
{
        int r;

        if (!t->delta)
                return;
        profile_delta_end(t->delta, t->profile);
        if (profile_delta_lost(t->delta) > 0)
                log_warning("The second just closed of %d (%s) misses %" PRIu64 " samples in its journal record and "
                            "its window, for want of memory (its tables have them).",
                            (int)t->pid, t->info.comm, profile_delta_lost(t->delta));
        if (!profile_delta_empty(t->delta) && m->observer.delta_closed)
                m->observer.delta_closed(m->observer.userdata, t);
        r = target_close_second(t, now);
        if (r < 0)
                log_debug_errno(r, "The window of %d misses a second: %m", (int)t->pid);
}

void manager_close_second(Manager *m)
{
        uint64_t now;
        Target *t;

        manager_sync(m);
        now = now_usec(CLOCK_REALTIME);
        HASHMAP_FOREACH(t, m->targets)
                manager_close_target_second(m, t, now);
        if (m->observer.second_closed)
                m->observer.second_closed(m->observer.userdata);
}

uint64_t manager_window_memory(Manager *m)
{
        uint64_t bytes = 0;
        Target *t;

        HASHMAP_FOREACH(t, m->targets)
                if (t->window)
                        bytes += profile_window_bytes(t->window);
        return bytes;
}

/* Runs while some target runs, and once more after the last one exits, for its last samples. */
static int on_close_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        Manager *m = userdata;

        manager_close_second(m);
        if (hashmap_size(m->running) == 0)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        /* From the time it was due, not from now: no drift, a bucket every second. */
        return sd_event_source_set_time(s, usec + manager_close_interval(m));
}

void manager_update_close_timer(Manager *m)
{
        uint64_t interval = manager_close_interval(m), now;
        int r;

        if (interval == 0 || manager_closing(m) || hashmap_size(m->running) == 0 ||
            sd_event_now(m->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (!m->close_timer) {
                /* Within a millisecond of the second: the buckets are a second long, and a window of N
                 * seconds spans N seconds, to the time the loop takes to get to the timer. */
                r = sd_event_add_time(m->event, &m->close_timer, CLOCK_MONOTONIC, now + interval, USEC_PER_MSEC,
                                      on_close_timer, m);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->close_timer, SD_EVENT_ON);
        } else {
                r = sd_event_source_set_time(m->close_timer, now + interval);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->close_timer, SD_EVENT_ON);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to start the timer that closes the seconds of the windows and the "
                                  "journal: %m");
}
