/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "duration.h"
#include "output-util.h"
#include "target-spec.h"
#include "time-util.h"
#include "top-batch.h"
#include "top-header.h"

static int window_to_json(const TopView *v, json_object **ret)
{
        _cleanup_json_ json_object *o = json_object_new_object();
        char asked[32];
        int r;

        if (!o)
                return -ENOMEM;
        duration_format(asked, sizeof(asked), v->shown.window_usec);
        r = json_add_string(o, "asked", asked);
        if (r >= 0)
                r = json_add_u64(o, "asked_usec", v->shown.window_usec);
        if (r >= 0)
                r = json_add_u64(o, "start_usec", v->window_start_usec);
        if (r >= 0)
                r = json_add_u64(o, "end_usec", v->window_end_usec);
        if (r >= 0)
                r = json_add_double(o, "seconds", top_view_window_seconds(v));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* The losses: every target's since vprofd started, and over a span covering the window when known (null
 * otherwise). */
static int lost_to_json(const TopView *v, json_object *o)
{
        _cleanup_json_ json_object *w = NULL;
        int r;

        r = json_add_u64(o, "samples_lost", v->samples_lost);
        if (r < 0)
                return r;
        if (!v->window_lost_known)
                return json_object_object_add(o, "window_lost", NULL) < 0 ? -ENOMEM : 0;
        w = json_object_new_object();
        if (!w)
                return -ENOMEM;
        r = json_add_u64(w, "samples", v->window_lost);
        if (r >= 0)
                r = json_add_double(w, "seconds", (double)v->window_lost_span_usec / USEC_PER_SEC);
        if (r < 0)
                return r;
        return json_add(o, "window_lost", TAKE_PTR(w));
}

static int print_json_refresh(const char *target, const TopView *v, OutputFlags flags)
{
        _cleanup_json_ json_object *o = NULL;
        json_object *window = NULL;
        TargetSpec spec;
        int r;

        /* "pid" for a process, as report -J has it; "target" as given, null for every target. */
        r = report_table_to_json(
                v->table,
                target && target_spec_parse(target, &spec) >= 0 && spec.kind == TARGET_SPEC_PID ? spec.pid
                                                                                                : 0,
                &o);
        if (r < 0)
                return r;
        r = json_add_string(o, "target", target);
        if (r >= 0)
                r = json_add_string(o, "table", top_table_name(v->table->kind));
        if (r >= 0)
                r = json_add_string(o, "sort", profile_sort_to_string(v->shown.sort));
        if (r >= 0)
                r = json_add_string(o, "event", v->event);
        if (r >= 0)
                r = json_add_u64(o, "frequency", v->frequency);
        if (r >= 0)
                r = lost_to_json(v, o);
        if (r >= 0)
                r = window_to_json(v, &window);
        if (r >= 0)
                r = json_add(o, "window", window);
        if (r < 0)
                return r;
        return print_json(o, flags | OUTPUT_JSON_ONE_LINE);
}

int top_batch_print(const char *target, const TopView *v, OutputFlags flags, bool first)
{
        char target_text[96], note[96], event[96], window[128], lost[128];

        if (flags & OUTPUT_JSON)
                return print_json_refresh(target, v, flags);

        if (!first)
                putchar('\n');
        if (!(flags & OUTPUT_NO_HEADINGS)) {
                top_header_target(target_text, sizeof(target_text), target);
                top_header_event(event, sizeof(event), v);
                top_header_window(window, sizeof(window), v);
                top_header_lost(lost, sizeof(lost), v);
                printf("Event: %s\nTarget: %s\nWindow: %s\nLost: %s\n", event, target_text, window, lost);
        }
        /* Then the total line, as report prints it: the samples of the window, noted with the target. */
        top_header_target(note, sizeof(note), target);
        return output_report_table(v->table, 0, note, flags);
}
