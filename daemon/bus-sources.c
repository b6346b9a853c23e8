/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "address-space.h"
#include "bus-reply.h"
#include "bus-sources.h"
#include "line-source.h"
#include "log.h"
#include "macros.h"
#include "manager.h"
#include "profile.h"
#include "query.h"
#include "target.h"

/* Where the functions of a target are written (the table schema's SOURCE column): a call of its own beside the
 * function tables, as GetSymbolNames is, so that their row signatures stay as every client reads them. The
 * sources are read when asked, from the DWARF line tables of the files the functions' code is in: only the
 * callers of this opt-in call pay for it, never the samples. */

/* The source of each function of t that has none yet and whose address is known: the line of the symbol's
 * start. A function of a file without line tables (stripped, or its debug file elsewhere) stays without, and so
 * does an inlined frame's row: its address is the start of the function it was inlined into, whose line that
 * is, not its own. */
static int read_sources(Target *t, LineReader *lines)
{
        char source[4096];
        int r;

        if (!t->address_space)
                return 0;
        for (size_t id = 0; id < profile_n_functions(t->profile); id++) {
                uint64_t addr = profile_function_address(t->profile, (uint32_t)id), vaddr;
                int fd;

                if (addr == 0 || profile_function_inlined(t->profile, (uint32_t)id) ||
                    profile_function_source(t->profile, (uint32_t)id))
                        continue;
                r = address_space_code_file(t->address_space, addr, &fd, &vaddr);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                r = line_reader_lookup(lines, fd, vaddr, source, sizeof(source));
                if (r == -ENOMEM)
                        return r;
                if (r == -EOPNOTSUPP)
                        return 0;
                if (r < 0)
                        continue;
                r = profile_set_source(t->profile, (uint32_t)id, source);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int append_sources(sd_bus_message *reply, const Profile *p)
{
        int r;

        for (size_t id = 0; id < profile_n_functions(p); id++) {
                const char *module, *function, *source = profile_function_source(p, (uint32_t)id);

                if (!source)
                        continue;
                r = profile_function_name(p, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(sss)", module, function, source);
                if (r < 0)
                        return r;
        }
        return 0;
}

int method_get_function_sources(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(query_done) Query q = {};
        _cleanup_(line_reader_freep) LineReader *lines = NULL;
        Manager *m = userdata;
        const char *spec;
        int r;

        r = sd_bus_message_read(msg, "s", &spec);
        if (r < 0)
                return r;
        /* The targets only (no view, no totals): the spec's, or for "" every target the caller may read. */
        r = query_run(m, msg, &(QueryRequest){ .spec = spec }, &q, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = line_reader_new(&lines);
        if (r < 0)
                return r;
        for (size_t i = 0; i < q.n_targets; i++) {
                r = read_sources(q.targets[i], lines);
                if (r < 0)
                        return log_error_errno(r, "Cannot read the sources of PID %d: %m", (int)q.targets[i]->pid);
        }
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sss)");
        if (r < 0)
                return r;
        /* A group's members may name one function alike: the client keeps the first. */
        for (size_t i = 0; i < q.n_targets; i++) {
                r = append_sources(reply, q.targets[i]->profile);
                if (r < 0)
                        return r;
        }
        return bus_reply_close_and_send(reply);
}
