/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "bus-client-symbols.h"
#include "bus-client.h"
#include "bus-dict.h"
#include "bus-names.h"

/* One dictionary entry; the strings stay the reply's. Unknown keys are skipped. */
static int read_entry(sd_bus_message *m, const char *key, void *userdata)
{
        ReportSymbols *s = userdata;

        if (strcmp(key, "source") == 0)
                return sd_bus_message_read(m, "v", "s", &s->source);
        if (strcmp(key, "debug_file") == 0)
                return sd_bus_message_read(m, "v", "s", &s->debug_file);
        if (strcmp(key, "build_id") == 0)
                return sd_bus_message_read(m, "v", "s", &s->build_id);
        if (strcmp(key, "debuginfod") == 0)
                return sd_bus_message_read(m, "v", "s", &s->debuginfod);
        if (strcmp(key, "symbols") == 0)
                return sd_bus_message_read(m, "v", "t", &s->symbols);
        if (strcmp(key, "unnamed_functions") == 0)
                return sd_bus_message_read(m, "v", "u", &s->unnamed_functions);
        if (strcmp(key, "unnamed_samples") == 0)
                return sd_bus_message_read(m, "v", "t", &s->unnamed_samples);
        if (strcmp(key, "samples") == 0)
                return sd_bus_message_read(m, "v", "t", &s->samples);
        if (strcmp(key, "load_usec") == 0)
                return sd_bus_message_read(m, "v", "t", &s->load_usec);
        return sd_bus_message_skip(m, "v");
}

static int read_module(sd_bus_message *m, ReportTable *t)
{
        ReportSymbols s = {};
        const char *module;
        int r;

        r = sd_bus_message_read(m, "s", &module);
        if (r < 0)
                return r;
        r = bus_read_dict(m, read_entry, &s);
        if (r < 0)
                return r;
        /* report_table_set_symbols() copies: the strings here are the reply's. */
        return report_table_set_symbols(t, module, &s);
}

int bus_add_module_symbols(sd_bus *bus, uint32_t pid, ReportTable *t, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, "GetModuleSymbols", error,
                               &reply, "u", pid);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(sa{sv})");
        if (r < 0)
                return bus_bad_reply(error, "GetModuleSymbols", r);
        while ((r = sd_bus_message_enter_container(reply, 'r', "sa{sv}")) > 0) {
                r = read_module(reply, t);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bus_bad_reply(error, "GetModuleSymbols", r);
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, "GetModuleSymbols", r);
        }
        return r < 0 ? bus_bad_reply(error, "GetModuleSymbols", r) : 0;
}
