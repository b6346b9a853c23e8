/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <string.h>

#include "bus-client-memory.h"
#include "macros.h"

static const struct {
        const char *key;
        size_t offset;
} memory_keys[] = {
        {"rss", offsetof(StatusMemory, rss)},
        {"peak_rss", offsetof(StatusMemory, peak_rss)},
        {"tables", offsetof(StatusMemory, tables)},
        {"windows", offsetof(StatusMemory, windows)},
        {"unwind", offsetof(StatusMemory, unwind)},
        {"symbols", offsetof(StatusMemory, symbols)},
        {"bpf_maps", offsetof(StatusMemory, bpf_maps)},
        {"bpf_mappings", offsetof(StatusMemory, bpf_mappings)},
        {"code", offsetof(StatusMemory, code)},
        {"malloc_free", offsetof(StatusMemory, malloc_free)},
        {"other", offsetof(StatusMemory, other)},
        {"unwind_arena", offsetof(StatusMemory, unwind_arena)},
};

int bus_read_status_memory(sd_bus_message *m, StatusMemory *ret)
{
        StatusMemory mem = { .present = true };
        int r;

        r = sd_bus_message_enter_container(m, 'v', "a{st}");
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(m, 'a', "{st}");
        if (r < 0)
                return r;
        for (;;) {
                const char *key;
                uint64_t value;

                r = sd_bus_message_read(m, "{st}", &key, &value);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                for (size_t i = 0; i < ELEMENTSOF(memory_keys); i++)
                        if (strcmp(key, memory_keys[i].key) == 0)
                                *(uint64_t *)((uint8_t *)&mem + memory_keys[i].offset) = value;
        }
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret = mem;
        return 0;
}
