/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "duration.h"
#include "target-spec.h"
#include "time-util.h"
#include "top-header.h"

/* What the target names: "PID 1234", "NAME.service", "cgroup /a/b". */
static void format_target(char *buf, size_t size, const char *target)
{
        TargetSpec spec;

        if (target_spec_parse(target, &spec) < 0)
                snprintf(buf, size, "%s", target);
        else if (spec.kind == TARGET_SPEC_PID)
                snprintf(buf, size, "PID %" PRIu32, spec.pid);
        else if (spec.kind == TARGET_SPEC_CGROUP)
                snprintf(buf, size, "cgroup %s", spec.name);
        else
                snprintf(buf, size, "%s", spec.name);
}

void top_header_target(char *buf, size_t size, const char *target)
{
        if (target)
                format_target(buf, size, target);
        else
                snprintf(buf, size, "all targets");
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

double top_view_window_seconds(const TopView *v)
{
        if (v->window_start_usec == 0 || v->window_end_usec < v->window_start_usec)
                return 0.0;
        return (double)(v->window_end_usec - v->window_start_usec) / USEC_PER_SEC;
}

void top_header_window(char *buf, size_t size, const TopView *v)
{
        const char *since = v->shown.window_usec == 0 ? " since attach" : "";
        char asked[32], start[16], end[16];

        duration_format(asked, sizeof(asked), v->shown.window_usec);
        /* A merge of no target covers nothing. */
        if (v->window_start_usec == 0 || v->window_end_usec < v->window_start_usec) {
                snprintf(buf, size, "%s%s (nothing)", asked, since);
                return;
        }
        format_clock(start, sizeof(start), v->window_start_usec);
        format_clock(end, sizeof(end), v->window_end_usec);
        snprintf(buf, size, "%s%s (%.1f s, %s to %s)", asked, since, top_view_window_seconds(v), start, end);
}

void top_header_lost(char *buf, size_t size, const TopView *v)
{
        if (v->shown.window_usec > 0 && v->window_lost_known)
                snprintf(buf, size, "%" PRIu64 " since vprofd started, %" PRIu64 " in the last %.1f s",
                         v->samples_lost, v->window_lost, (double)v->window_lost_span_usec / USEC_PER_SEC);
        else
                snprintf(buf, size, "%" PRIu64 " since vprofd started", v->samples_lost);
}
