/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "address-space.h"
#include "bus-symbols.h"
#include "bus-target.h"
#include "macros.h"
#include "manager.h"
#include "profile.h"

/* Frames without a symbol are named "MODULE+0xOFFSET" (drain.c): count them per module. */
static bool unnamed(const ProfileRow *f, const char *module)
{
        size_t n = strlen(module);
        return strncmp(f->name, module, n) == 0 && strncmp(f->name + n, "+0x", 3) == 0;
}

/* Modules that are not files: the kernel's, the vDSO, JIT code. */
static const char *special_source(const char *module)
{
        if (strcmp(module, "[vdso]") == 0)
                return "vdso";
        if (strcmp(module, "[anon]") == 0 || strncmp(module, "[anon:", 6) == 0)
                return "perf-map";
        if (module[0] != '[')
                return NULL;
        /* Not kernel code, and no file either: nothing to name them with. */
        if (strcmp(module, "[unknown]") == 0 || strcmp(module, "[other]") == 0 || strcmp(module, "[heap]") == 0 ||
            strcmp(module, "[stack]") == 0)
                return "none";
        return "kallsyms";
}

/* A download for a module still named as before: "pending" or "failed" (source says how it is named
 * meanwhile). A module named through a downloaded file has source "debuginfod" instead. */
static int append_download(sd_bus_message *reply, const Debuginfod *d, const FileInfo *info)
{
        FetchState state;

        if (!d || !info->build_id || info->source == SYMBOL_SOURCE_DEBUGINFOD)
                return 0;
        state = debuginfod_state(d, info->build_id);
        if (!IN_SET(state, FETCH_PENDING, FETCH_FAILED))
                return 0;
        return sd_bus_message_append(reply, "{sv}", "debuginfod", "s", fetch_state_to_string(state));
}

static int append_module(sd_bus_message *reply, const Debuginfod *debuginfod, Target *t, const ProfileRow *m,
                         const ProfileRow *functions, size_t n_functions)
{
        uint64_t unnamed_samples = 0;
        uint32_t unnamed_functions = 0;
        const char *special = special_source(m->name);
        FileInfo info = {};
        int r;

        for (size_t i = 0; i < n_functions; i++)
                if (strcmp(functions[i].module, m->name) == 0 && unnamed(&functions[i], m->name)) {
                        unnamed_functions++;
                        /* Exclusive counts add up; inclusive ones of several frames of one stack would not. */
                        unnamed_samples += functions[i].exclusive;
                }
        r = sd_bus_message_open_container(reply, 'r', "sa{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", m->name);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "{sv}{sv}{sv}", "samples", "t", m->exclusive, "unnamed_functions", "u",
                                  unnamed_functions, "unnamed_samples", "t", unnamed_samples);
        if (r < 0)
                return r;
        if (special)
                r = sd_bus_message_append(reply, "{sv}", "source", "s", special);
        else if (t->address_space && address_space_module_info(t->address_space, m->name, &info) >= 0) {
                r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}", "source", "s",
                                          symbol_source_to_string(info.source), "path", "s", info.path ?: "",
                                          "symbols", "t", (uint64_t)info.n_symbols, "load_usec", "t",
                                          info.load_usec);
                if (r >= 0 && info.debug_file)
                        r = sd_bus_message_append(reply, "{sv}", "debug_file", "s", info.debug_file);
                if (r >= 0 && info.build_id)
                        r = sd_bus_message_append(reply, "{sv}", "build_id", "s", info.build_id);
                if (r >= 0)
                        r = append_download(reply, debuginfod, &info);
        }
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int bus_method_get_module_symbols(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *manager = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProfileRow *modules = NULL, *functions = NULL;
        size_t n_modules, n_functions;
        Target *t;
        int r;

        r = bus_read_target(userdata, msg, NULL, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        manager_sync(userdata);
        r = profile_modules(t->profile, PROFILE_SORT_INCLUSIVE, &modules, &n_modules);
        if (r < 0)
                return r;
        r = profile_functions(t->profile, PROFILE_SORT_INCLUSIVE, 0, &functions, &n_functions);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sa{sv})");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_modules; i++) {
                r = append_module(reply, manager->debuginfod, t, &modules[i], functions, n_functions);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
