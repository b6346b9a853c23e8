/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "all-targets.h"
#include "duration.h"
#include "output-util.h"
#include "parse-util.h"
#include "time-util.h"
#include "top-batch.h"
#include "top-header.h"

static int window_to_json(const TopState *s, const TopView *v, json_object **ret)
{
        _cleanup_json_ json_object *o = json_object_new_object();
        char asked[32];
        int r;

        if (!o)
                return -ENOMEM;
        duration_format(asked, sizeof(asked), s->window_usec);
        r = json_add_string(o, "asked", asked);
        if (r >= 0)
                r = json_add_u64(o, "asked_usec", s->window_usec);
        if (r >= 0)
                r = json_add_u64(o, "start_usec", v->window_start_usec);
        if (r >= 0)
                r = json_add_u64(o, "end_usec", v->window_end_usec);
        if (r >= 0)
                r = json_add_double(o, "seconds",
                                    v->window_end_usec >= v->window_start_usec
                                            ? (double)(v->window_end_usec - v->window_start_usec) /
                                                      USEC_PER_SEC
                                            : 0.0);
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

static int print_json_refresh(const TopState *s, const char *target, const TopView *v, OutputFlags flags)
{
        _cleanup_json_ json_object *o = NULL;
        json_object *window = NULL;
        uint32_t pid = 0;
        int r;

        if (target && parse_pid(target, &pid) < 0)
                pid = 0;
        r = report_table_to_json(v->table, pid, &o);
        if (r < 0)
                return r;
        r = json_add_string(o, "target", target);
        if (r >= 0)
                r = json_add_string(o, "table", top_table_name(s->table));
        if (r >= 0)
                r = json_add_string(o, "sort", profile_sort_to_string(s->sort));
        if (r >= 0)
                r = json_add_string(o, "event", v->event);
        if (r >= 0)
                r = json_add_u64(o, "frequency", v->frequency);
        if (r >= 0)
                r = lost_to_json(v, o);
        if (r >= 0)
                r = window_to_json(s, v, &window);
        if (r >= 0)
                r = json_add(o, "window", window);
        if (r < 0)
                return r;
        return print_json(o, flags | OUTPUT_JSON_ONE_LINE);
}

int top_batch_print(const TopState *s, const char *target, const TopView *v, OutputFlags flags, bool first)
{
        char target_text[96], note[64], event[96], window[128], lost[128];

        if (flags & OUTPUT_JSON)
                return print_json_refresh(s, target, v, flags);

        if (!first)
                putchar('\n');
        if (!(flags & OUTPUT_NO_HEADINGS)) {
                top_header_target(target_text, sizeof(target_text), target, v);
                top_header_event(event, sizeof(event), v);
                top_header_window(window, sizeof(window), s, v);
                top_header_lost(lost, sizeof(lost), s, v);
                printf("Event: %s\nTarget: %s\nWindow: %s\nLost: %s\n", event, target_text, window, lost);
        }
        /* Then the total line, as report prints it: the samples of the window. */
        if (target)
                snprintf(note, sizeof(note), "PID %s", target);
        else
                format_targets_note(note, sizeof(note), v->n_targets, v->n_denied);
        return output_report_table(v->table, 0, note, flags);
}
