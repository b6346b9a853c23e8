/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "all-targets.h"
#include "duration.h"
#include "time-util.h"
#include "top-header.h"

void top_header_target(char *buf, size_t size, const char *target, const TopView *v)
{
        char note[64];

        if (target) {
                snprintf(buf, size, "PID %s", target);
                return;
        }
        format_targets_note(note, sizeof(note), v->n_targets, v->n_denied);
        snprintf(buf, size, "all targets (%s)", note);
}

void top_header_event(char *buf, size_t size, const TopView *v)
{
        snprintf(buf, size, "%s, %" PRIu32 " Hz", v->event ?: "n/a", v->frequency);
}

/* HH:MM:SS of a CLOCK_REALTIME time, local. */
static void format_clock(char *buf, size_t size, uint64_t usec)
{
        time_t sec = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        if (usec == 0 || !localtime_r(&sec, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
                snprintf(buf, size, "n/a");
}

void top_header_window(char *buf, size_t size, const TopState *s, const TopView *v)
{
        char asked[32], start[16], end[16];

        duration_format(asked, sizeof(asked), s->window_usec);
        if (v->window_start_usec == 0 || v->window_end_usec < v->window_start_usec) {
                snprintf(buf, size, "%s%s", asked, s->window_usec == 0 ? " since attach" : "");
                return;
        }
        format_clock(start, sizeof(start), v->window_start_usec);
        format_clock(end, sizeof(end), v->window_end_usec);
        snprintf(buf, size, "%s%s (%.1f s, %s to %s)", asked, s->window_usec == 0 ? " since attach" : "",
                 (double)(v->window_end_usec - v->window_start_usec) / USEC_PER_SEC, start, end);
}

void top_header_lost(char *buf, size_t size, const TopState *s, const TopView *v)
{
        if (s->window_usec > 0 && v->window_lost_known)
                snprintf(buf, size, "%" PRIu64 " since vprofd started, %" PRIu64 " in the last %.1f s",
                         v->samples_lost, v->window_lost, (double)v->window_lost_span_usec / USEC_PER_SEC);
        else
                snprintf(buf, size, "%" PRIu64 " since vprofd started", v->samples_lost);
}
