/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bus-client.h"
#include "bus-names.h"
#include "log.h"
#include "output-util.h"
#include "report-stacks.h"

typedef struct Frame {
        const char *module; /* owned by the reply */
        const char *function;
} Frame;

typedef struct Functions {
        Frame *frames; /* by index */
        size_t n;
} Functions;

typedef struct Stack {
        const Frame **frames; /* outermost first */
        size_t n_frames;
        uint32_t n_kernel; /* the last ones */
        uint64_t samples;
} Stack;

static void functions_done(Functions *f)
{
        free(f->frames);
}

static void stack_done(Stack *s)
{
        free(s->frames);
}

static int grow(void *array, size_t *allocated, size_t n, size_t size)
{
        void *a;

        if (n < *allocated)
                return 0;
        a = realloc(*(void **)array, (*allocated = MAX(*allocated * 2, (size_t)32)) * size);
        if (!a)
                return -ENOMEM;
        *(void **)array = a;
        return 0;
}

static int read_functions(sd_bus_message *reply, Functions *f)
{
        size_t allocated = 0;
        Frame frame;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ss)", &frame.module, &frame.function)) > 0) {
                r = grow(&f->frames, &allocated, f->n, sizeof(Frame));
                if (r < 0)
                        return r;
                f->frames[f->n++] = frame;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(reply);
}

/* The next stack of the reply; 0 at the end of the array. */
static int read_stack(sd_bus_message *reply, const Functions *f, Stack *s, size_t *allocated)
{
        uint32_t index;
        int r;

        r = sd_bus_message_enter_container(reply, 'r', "auut");
        if (r <= 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "u");
        if (r < 0)
                return r;
        s->n_frames = 0;
        while ((r = sd_bus_message_read_basic(reply, 'u', &index)) > 0) {
                if (index >= f->n)
                        return -EBADMSG;
                r = grow(&s->frames, allocated, s->n_frames, sizeof(Frame *));
                if (r < 0)
                        return r;
                s->frames[s->n_frames++] = &f->frames[index];
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "ut", &s->n_kernel, &s->samples);
        if (r < 0)
                return r;
        if (s->n_kernel > s->n_frames)
                return -EBADMSG;
        r = sd_bus_message_exit_container(reply);
        return r < 0 ? r : 1;
}

static void print_folded(const Stack *s)
{
        for (size_t i = 0; i < s->n_frames; i++)
                printf("%s%s%s", i > 0 ? ";" : "", s->frames[i]->function,
                       i >= s->n_frames - s->n_kernel ? "_[k]" : "");
        printf(" %" PRIu64 "\n", s->samples);
}

static int stack_to_json(const Stack *s, json_object **ret)
{
        _cleanup_json_ json_object *o = json_object_new_object(), *frames = json_object_new_array();
        int r;

        if (!o || !frames)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_frames; i++) {
                _cleanup_json_ json_object *f = json_object_new_object();
                if (!f)
                        return -ENOMEM;
                r = json_add_string(f, "function", s->frames[i]->function);
                if (r >= 0)
                        r = json_add_string(f, "module", s->frames[i]->module);
                if (r >= 0)
                        r = json_add_bool(f, "kernel", i >= s->n_frames - s->n_kernel);
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

/* Prints the folded lines, or fills stacks; *ret_listed: the samples of the stacks in the reply. */
static int read_reply(sd_bus_message *reply, OutputFlags flags, uint64_t *ret_total, uint64_t *ret_other,
                      uint64_t *ret_listed, json_object *stacks)
{
        _cleanup_(functions_done) Functions functions = {};
        _cleanup_(stack_done) Stack s = {};
        uint64_t window_start, window_end; /* the report of stacks says only the window's samples */
        size_t allocated = 0;
        int r;

        *ret_listed = 0;
        r = sd_bus_message_read(reply, "tt(tt)", ret_total, ret_other, &window_start, &window_end);
        if (r < 0)
                return r;
        r = read_functions(reply, &functions);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(auut)");
        if (r < 0)
                return r;
        while ((r = read_stack(reply, &functions, &s, &allocated)) > 0) {
                *ret_listed += s.samples;
                json_object *j;

                if (!(flags & OUTPUT_JSON)) {
                        print_folded(&s);
                        continue;
                }
                r = stack_to_json(&s, &j);
                if (r < 0)
                        return r;
                r = json_append(stacks, j);
                if (r < 0)
                        return r;
        }
        return r;
}

int run_report_stacks(sd_bus *bus, const char *target, uint32_t pid, uint64_t window_usec, uint32_t limit,
                      OutputFlags flags)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_json_ json_object *o = json_object_new_object(), *stacks = json_object_new_array();
        uint64_t total, other, listed;
        int r;

        if (!o || !stacks)
                return log_error_errno(-ENOMEM, "Out of memory.");
        r = sd_bus_call_method(bus, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "GetStacks", &error,
                               &reply, "sut", target, limit, window_usec);
        if (r < 0)
                return log_bus_error(r, &error, "GetStacks");
        r = read_reply(reply, flags, &total, &other, &listed, stacks);
        if (r == -ENOMEM)
                return log_error_errno(-ENOMEM, "Out of memory.");
        if (r < 0)
                return log_bus_error(bus_bad_reply(&error, "GetStacks", r), &error, "GetStacks");

        if (flags & OUTPUT_JSON) {
                r = json_add_u64(o, "pid", pid);
                if (r >= 0)
                        r = json_add_u64(o, "total_samples", total);
                if (r >= 0)
                        r = json_add_u64(o, "other_samples", other);
                if (r >= 0)
                        r = json_add(o, "stacks", TAKE_PTR(stacks));
                if (r >= 0)
                        r = print_json(o, flags);
                if (r < 0)
                        return log_error_errno(r, "Failed to print the report: %m");
        }
        /* Not among the folded lines, which tools read as they are: on stderr. */
        if (other > 0)
                log_notice("%" PRIu64 " of %" PRIu64 " samples (%.1f%%) have a stack past the daemon's per-target "
                           "stack limit and are in no line.",
                           other, total, total ? 100.0 * (double)other / (double)total : 0.0);
        if (limit == 0 && listed + other < total)
                log_notice("%" PRIu64 " samples are in stacks too rare to fit in the daemon's reply.",
                           total - other - listed);
        return 0;
}
