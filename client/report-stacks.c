/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-client-stacks.h"
#include "bus-client.h"
#include "log.h"
#include "output-util.h"
#include "report-stacks.h"

static void print_folded(const StackTable *t, const StackEntry *s)
{
        for (size_t i = 0; i < s->n_frames; i++)
                printf("%s%s%s", i > 0 ? ";" : "", t->functions[s->frames[i]].function,
                       stack_entry_is_kernel(s, i)          ? "_[k]"
                       : t->functions[s->frames[i]].inlined ? "_[i]"
                       : t->functions[s->frames[i]].python  ? "_[py]"
                                                            : "");
        printf(" %" PRIu64 "\n", s->samples);
}

static int stack_to_json(const StackTable *t, const StackEntry *s, json_object **ret)
{
        _cleanup_json_ json_object *o = json_object_new_object(), *frames = json_object_new_array();
        int r;

        if (!o || !frames)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_frames; i++) {
                const StackFunction *fn = &t->functions[s->frames[i]];
                _cleanup_json_ json_object *f = json_object_new_object();
                if (!f)
                        return -ENOMEM;
                r = json_add_string(f, "function", fn->function);
                if (r >= 0)
                        r = json_add_string(f, "module", fn->module);
                if (r >= 0)
                        r = json_add_bool(f, "kernel", stack_entry_is_kernel(s, i));
                /* Outermost first here: an inlined frame was inlined into the one before it. */
                if (r >= 0)
                        r = json_add_bool(f, "inlined", fn->inlined);
                if (r >= 0)
                        r = json_add_bool(f, "python", fn->python);
                if (r >= 0)
                        r = json_append(frames, TAKE_PTR(f));
                if (r < 0)
                        return r;
        }
        r = json_add(o, "frames", TAKE_PTR(frames));
        if (r >= 0)
                r = json_add_u64(o, "samples", s->samples);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static int print_json_report(const StackTable *t, uint32_t pid, OutputFlags flags)
{
        _cleanup_json_ json_object *o = json_object_new_object(), *stacks = json_object_new_array();
        int r;

        if (!o || !stacks)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_stacks; i++) {
                json_object *j;

                r = stack_to_json(t, &t->stacks[i], &j);
                if (r < 0)
                        return r;
                r = json_append(stacks, j);
                if (r < 0)
                        return r;
        }
        r = json_add_u64(o, "pid", pid);
        if (r >= 0)
                r = json_add_u64(o, "total_samples", t->total_samples);
        if (r >= 0)
                r = json_add_u64(o, "other_samples", t->other_samples);
        if (r >= 0)
                r = json_add(o, "stacks", TAKE_PTR(stacks));
        if (r >= 0)
                r = print_json(o, flags);
        return r;
}

int run_report_stacks(sd_bus *bus, const char *target, uint32_t pid, uint64_t window_usec, uint32_t limit,
                      OutputFlags flags)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(stack_table_freep) StackTable *t = NULL;
        TableQuery q = { .target = target, .window_usec = window_usec };
        int r;

        r = bus_get_stacks(bus, &q, limit, &error, &t);
        if (r == -ENOMEM)
                return log_error_errno(-ENOMEM, "Out of memory.");
        if (r < 0)
                return log_bus_error(r, &error, "GetStacks");

        if (flags & OUTPUT_JSON) {
                r = print_json_report(t, pid, flags);
                if (r < 0)
                        return log_error_errno(r, "Failed to print the report: %m");
        } else
                for (size_t i = 0; i < t->n_stacks; i++)
                        print_folded(t, &t->stacks[i]);
        /* Not among the folded lines, which tools read as they are: on stderr. */
        if (t->other_samples > 0)
                log_notice("%" PRIu64 " of %" PRIu64 " samples (%.1f%%) have a stack past the daemon's per-target "
                           "stack limit and are in no line.",
                           t->other_samples, t->total_samples,
                           t->total_samples ? 100.0 * (double)t->other_samples / (double)t->total_samples : 0.0);
        if (limit == 0 && t->listed_samples + t->other_samples < t->total_samples)
                log_notice("%" PRIu64 " samples are in stacks too rare to fit in the daemon's reply.",
                           t->total_samples - t->other_samples - t->listed_samples);
        return 0;
}
