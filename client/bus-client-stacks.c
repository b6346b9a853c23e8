/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array-util.h"
#include "bus-client-stacks.h"
#include "bus-client.h"
#include "bus-object.h"

StackTable *stack_table_free(StackTable *t)
{
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_functions; i++) {
                free(t->functions[i].module);
                free(t->functions[i].function);
        }
        free(t->functions);
        for (size_t i = 0; i < t->n_stacks; i++)
                free(t->stacks[i].frames);
        free(t->stacks);
        free(t);
        return NULL;
}

bool stack_module_is_python(const char *module)
{
        size_t n = strlen(module);

        if (strcmp(module, "[python]") == 0 || (n >= 2 && module[0] == '<' && module[n - 1] == '>'))
                return true;
        return (n >= 3 && strcmp(module + n - 3, ".py") == 0) || (n >= 4 && strcmp(module + n - 4, ".pyw") == 0);
}

static int read_functions(sd_bus_message *reply, StackTable *t)
{
        size_t allocated = 0;
        const char *module, *function;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ss)", &module, &function)) > 0) {
                StackFunction *f;

                r = array_grow_one(&t->functions, &allocated, t->n_functions, sizeof(StackFunction));
                if (r < 0)
                        return r;
                f = &t->functions[t->n_functions];
                *f = (StackFunction){ .module = strdup(module), .function = strdup(function),
                                      .python = stack_module_is_python(module) };
                /* Counted before the check, so that the free above releases what one of them holds. */
                t->n_functions++;
                if (!f->module || !f->function)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(reply);
}

/* The next stack of the reply into *s; 0 at the end of the array. */
static int read_stack(sd_bus_message *reply, const StackTable *t, StackEntry *s)
{
        size_t allocated = 0;
        uint32_t index;
        int r;

        r = sd_bus_message_enter_container(reply, 'r', "auut");
        if (r <= 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "u");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read_basic(reply, 'u', &index)) > 0) {
                if (index >= t->n_functions)
                        return -EBADMSG;
                r = array_grow_one(&s->frames, &allocated, s->n_frames, sizeof(uint32_t));
                if (r < 0)
                        return r;
                s->frames[s->n_frames++] = index;
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

static int read_stacks(sd_bus_message *reply, StackTable *t)
{
        size_t allocated = 0;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(auut)");
        if (r < 0)
                return r;
        for (;;) {
                r = array_grow_one(&t->stacks, &allocated, t->n_stacks, sizeof(StackEntry));
                if (r < 0)
                        return r;
                t->stacks[t->n_stacks] = (StackEntry){};
                r = read_stack(reply, t, &t->stacks[t->n_stacks]);
                if (r <= 0) {
                        free(t->stacks[t->n_stacks].frames);
                        break;
                }
                /* A daemon's sum cannot pass its total; a reply whose does is not believed. */
                if (t->stacks[t->n_stacks].samples > UINT64_MAX - t->listed_samples) {
                        free(t->stacks[t->n_stacks].frames);
                        return -EBADMSG;
                }
                t->listed_samples += t->stacks[t->n_stacks].samples;
                t->n_stacks++;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(reply);
}

/* GetStacks' last argument, the indices of the inlined functions: absent from a vprofd that had none. */
static void mark_inlined(uint32_t index, void *userdata)
{
        StackTable *t = userdata;

        t->functions[index].inlined = true;
}

int stack_table_read_stacks(sd_bus_message *reply, StackTable *t)
{
        int r;

        r = read_functions(reply, t);
        if (r < 0)
                return r;
        r = read_stacks(reply, t);
        if (r >= 0)
                r = bus_read_trailing_indices(reply, t->n_functions, mark_inlined, t);
        if (r < 0)
                return r;
        if (t->other_samples > t->total_samples || t->listed_samples > t->total_samples - t->other_samples)
                return -EBADMSG;
        return 0;
}

int stack_table_from_reply(sd_bus_message *reply, StackTable **ret)
{
        _cleanup_(stack_table_freep) StackTable *t = calloc(1, sizeof(StackTable));
        int r;

        if (!t)
                return -ENOMEM;
        r = sd_bus_message_read(reply, "tt(tt)", &t->total_samples, &t->other_samples, &t->window_start_usec,
                                &t->window_end_usec);
        if (r < 0)
                return r;
        r = stack_table_read_stacks(reply, t);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int bus_get_stacks(sd_bus *bus, const TableQuery *q, uint32_t limit, sd_bus_error *error, StackTable **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        StackTable *t;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "GetStacks", error,
                               &reply, "sut", q->target ?: "", limit, q->window_usec);
        if (r < 0)
                return r;
        r = stack_table_from_reply(reply, &t);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bus_bad_reply(error, "GetStacks", r);
        t->window_usec = q->window_usec;
        *ret = t;
        return 0;
}
