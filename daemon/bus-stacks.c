/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The stacks of a view on the bus (bus-stacks.h). */
#include <stdlib.h>

#include "bus-reply.h"
#include "bus-stacks.h"
#include "macros.h"

/* The most a reply carries, in bytes of frames: a message near the bus's size limit (32 MiB on the system bus)
 * would make dbus-daemon drop the daemon's connection. Stacks past it are left out, largest count first kept. */
#define STACKS_MAX_BYTES (UINT32_C(8) << 20)

static int append_stack_functions(sd_bus_message *reply, const Profile *p)
{
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ss)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(p); id++) {
                const char *module, *function;

                r = profile_function_name(p, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(ss)", module, function);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int append_stack(sd_bus_message *reply, const ProfileStackRow *row)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', "auut");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "u");
        if (r < 0)
                return r;
        /* Outermost first on the bus; the table keeps them innermost first. */
        for (size_t i = row->n_frames; i-- > 0;) {
                r = sd_bus_message_append_basic(reply, 'u', &row->frames[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "ut", (uint32_t)row->n_kernel_frames, row->samples);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int bus_append_stacks(sd_bus_message *reply, const Profile *p, uint32_t limit)
{
        _cleanup_free_ ProfileStackRow *rows = NULL;
        size_t n, bytes = 0;
        int r;

        r = profile_stacks(p, limit, &rows, &n);
        if (r < 0)
                return r;
        r = append_stack_functions(reply, p);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(auut)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                /* 4 bytes a frame, 24 of array length, counts and padding a stack. */
                bytes += rows[i].n_frames * 4 + 24;
                if (bytes > STACKS_MAX_BYTES)
                        break;
                r = append_stack(reply, &rows[i]);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return bus_append_inlined(reply, p);
}
