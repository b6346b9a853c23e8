/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "bus-client-tables.h"
#include "macros.h"

/* GetStacks decoded: the distinct stacks of a target's on-CPU samples in a window, for folded lines and flame
 * graphs. The table owns its strings; the contract of bus-client.h. */

typedef struct StackFunction {
        char *module;
        char *function;
        bool inlined; /* an inlined frame: inlined into the frame after it (towards the leaf in frames[]) */
        bool python;  /* a Python function (stack_module_is_python()) */
} StackFunction;

/* Whether a function of this module is a Python function, by the names the daemon gives them
 * (docs/PYTHON.md): its module a source file ending in .py or .pyw, a pseudo-file in angle brackets
 * ("<frozen importlib._bootstrap>", "<string>" of python -c), or "[python]" ([python: unknown] frames). Native
 * modules are ELF files and bracketed names ("[kernel]", "[vdso]"); a script without a .py name is missed. */
bool stack_module_is_python(const char *module);

typedef struct StackEntry {
        uint32_t *frames; /* indices into StackTable.functions, outermost first */
        size_t n_frames;
        uint32_t n_kernel; /* how many frames at the end are kernel frames */
        uint64_t samples;
} StackEntry;

typedef struct StackTable {
        StackFunction *functions;
        size_t n_functions;
        StackEntry *stacks; /* most samples first, as the daemon sends them */
        size_t n_stacks;
        uint64_t total_samples; /* every sample of the window, listed or not */
        uint64_t other_samples; /* samples past the daemon's per-target stack limit, in no stack */
        uint64_t listed_samples; /* the sum of the stacks' samples */
        uint64_t window_start_usec; /* CLOCK_REALTIME: the span the daemon counted */
        uint64_t window_end_usec;
        uint64_t window_usec; /* the window asked for: the last so long; 0: since the attach */
} StackTable;

StackTable *stack_table_free(StackTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(StackTable *, stack_table_free);

/* Whether frame i of stack s is a kernel frame. */
static inline int stack_entry_is_kernel(const StackEntry *s, size_t i)
{
        return i >= s->n_frames - s->n_kernel;
}

/* GetStacks(q->target, limit, q->window_usec); limit 0: every stack the reply can hold. */
int bus_get_stacks(sd_bus *bus, const TableQuery *q, uint32_t limit, sd_bus_error *error, StackTable **ret);

/* Decodes a GetStacks reply, positioned at its start (for tests and the call above). */
int stack_table_from_reply(sd_bus_message *reply, StackTable **ret);
/* The part of such a reply after its totals and window, "a(ss)a(auut)au", into t (its totals set, no stacks yet):
 * -EBADMSG when the stacks add up to more than the totals. */
int stack_table_read_stacks(sd_bus_message *reply, StackTable *t);
