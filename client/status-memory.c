/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "macros.h"
#include "status-memory.h"

static double mib(uint64_t bytes)
{
        return (double)bytes / (1 << 20);
}

void status_memory_format(const StatusMemory *mem, char *buf, size_t size)
{
        if (!mem->present) {
                snprintf(buf, size, "n/a");
                return;
        }
        snprintf(buf, size,
                 "RSS %.1f MiB (tables %.1f, windows %.1f, unwind %.1f, symbols %.1f, BPF maps %.1f, code %.1f, "
                 "malloc free %.1f, other %.1f), peak %.1f MiB; unwind arena %.0f MiB of kernel memory",
                 mib(mem->rss), mib(mem->tables), mib(mem->windows), mib(mem->unwind), mib(mem->symbols),
                 mib(mem->bpf_maps), mib(mem->code), mib(mem->malloc_free), mib(mem->other), mib(mem->peak_rss),
                 mib(mem->unwind_arena));
}

static void json_putp(json_object **o)
{
        json_object_put(*o);
}

int status_memory_json(json_object *o, const StatusMemory *mem)
{
        _cleanup_(json_putp) json_object *m = NULL;
        const struct {
                const char *key;
                uint64_t value;
        } parts[] = {
                {"rss", mem->rss},
                {"peak_rss", mem->peak_rss},
                {"tables", mem->tables},
                {"windows", mem->windows},
                {"unwind", mem->unwind},
                {"symbols", mem->symbols},
                {"bpf_maps", mem->bpf_maps},
                {"bpf_mappings", mem->bpf_mappings},
                {"code", mem->code},
                {"malloc_free", mem->malloc_free},
                {"other", mem->other},
                {"unwind_arena", mem->unwind_arena},
        };

        if (!mem->present)
                return 0;
        m = json_object_new_object();
        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                json_object *v = json_object_new_uint64(parts[i].value);

                if (!v || json_object_object_add(m, parts[i].key, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
        }
        if (json_object_object_add(o, "memory", m) < 0)
                return -ENOMEM;
        m = NULL; /* o owns it now */
        return 0;
}
