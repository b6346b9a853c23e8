/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "address-space.h"
#include "bus-query.h"
#include "bus-reply.h"
#include "bus-rows.h"
#include "bus-stacks.h"
#include "macros.h"
#include "manager.h"
#include "profile.h"
#include "query.h"
#include "quote.h"
#include "utf8.h"

/* The queries on the bus: each reads its arguments into a QueryRequest, runs it (query.h: the targets, the
 * caller's right to them, the drain, the window or the merge, the span), and marshals the answer (bus-rows.h for
 * the tables). The reply shapes are documented in org.vprof.Profiler1.xml. */

/* A handler's return for query_run()'s 0: polkit was asked, and the call is answered when it runs again. */
#define ASKED_POLKIT 1

/* GetFunctions and GetFunctionValues read (s target, s sort, u limit, t window_usec); the sort key must be one
 * of the kind of table (values: the elapsed and application keys). Returns as query_run(), with the rows. */
static int run_function_table(Manager *m, sd_bus_message *msg, bool values, Query *ret_query, ProfileRow **ret_rows,
                              size_t *ret_n, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        QueryRequest req = { .needs = QUERY_VIEW };
        char quoted[QUOTE_SIZE];
        const char *sort_name;
        uint32_t limit;
        ProfileSort sort;
        int r;

        r = sd_bus_message_read(msg, "ssut", &req.spec, &sort_name, &limit, &req.window_usec);
        if (r < 0)
                return r;
        sort = profile_sort_from_string(sort_name);
        if (values && !profile_sort_is_values(sort))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown sort key '%s': expected elapsed-inclusive, elapsed-exclusive, "
                                         "application-inclusive or application-exclusive",
                                         quote_prefix(sort_name, quoted));
        if (!values && (sort < 0 || profile_sort_is_values(sort)))
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown sort key '%s': expected inclusive or exclusive",
                                         quote_prefix(sort_name, quoted));
        r = query_run(m, msg, &req, &q, error);
        if (r <= 0)
                return r;
        r = profile_functions(q.profile, sort, limit, ret_rows, ret_n);
        if (r < 0)
                return r;
        *ret_query = q;
        q = (Query){};
        return 1;
}

int method_get_functions(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = run_function_table(userdata, msg, false, &q, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
        return reply_sampling_rows(msg, TABLE_FUNCTIONS, &q, rows, n);
}

int method_get_function_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = run_function_table(m, msg, true, &q, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
        return reply_values_rows(msg, TABLE_FUNCTIONS, &q, m->config.frequency, rows, n);
}

/* GetModules, GetThreads and their values read (s target, t window_usec) and reply with a whole table. */
typedef int (*profile_table_fn)(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n);
static int reply_table(sd_bus_message *msg, Manager *m, TableKind kind, profile_table_fn table, bool values,
                       sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        _cleanup_free_ ProfileRow *rows = NULL;
        QueryRequest req = { .needs = QUERY_VIEW };
        size_t n;
        int r;

        r = sd_bus_message_read(msg, "st", &req.spec, &req.window_usec);
        if (r < 0)
                return r;
        r = query_run(m, msg, &req, &q, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
        r = table(q.profile, values ? PROFILE_SORT_ELAPSED_INCLUSIVE : PROFILE_SORT_INCLUSIVE, &rows, &n);
        if (r < 0)
                return r;
        return values ? reply_values_rows(msg, kind, &q, m->config.frequency, rows, n)
                      : reply_sampling_rows(msg, kind, &q, rows, n);
}

int method_get_modules(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_table(msg, userdata, TABLE_MODULES, profile_modules, false, error);
}

int method_get_threads(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_table(msg, userdata, TABLE_THREADS, profile_threads, false, error);
}

int method_get_module_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_table(msg, userdata, TABLE_MODULES, profile_modules, true, error);
}

int method_get_thread_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_table(msg, userdata, TABLE_THREADS, profile_threads, true, error);
}

/* GetProcesses and GetProcessValues read (s target, t window_usec): one row a target, from its totals. */
static int reply_processes(sd_bus_message *msg, Manager *m, bool values, sd_bus_error *error)
{
        _cleanup_(query_done) Query q = {};
        QueryRequest req = { .needs = QUERY_TOTALS };
        int r;

        r = sd_bus_message_read(msg, "st", &req.spec, &req.window_usec);
        if (r < 0)
                return r;
        r = query_run(m, msg, &req, &q, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
        return values ? reply_process_values(msg, &q, m->config.frequency) : reply_process_rows(msg, &q);
}

int method_get_processes(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_processes(msg, userdata, false, error);
}

int method_get_process_values(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_processes(msg, userdata, true, error);
}

static int append_target(sd_bus_message *reply, const Target *t)
{
        int r;

        r = sd_bus_message_open_container(reply, 'r', "ua{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "u", (uint32_t)t->pid);
        if (r < 0)
                return r;
        /* frequency: of the tables' sample counts, which an exited target restored by a daemon that now samples at
         * another frequency keeps (state-store.h). */
        r = sd_bus_message_append(reply, "a{sv}", 10,
                                  "command", "s", t->info.comm,
                                  "state", "s", target_status(t),
                                  "samples", "t", profile_total(t->profile),
                                  "attached_usec", "t", t->attach_usec,
                                  "flags", "t", t->flags,
                                  "ns_pid", "u", (uint32_t)(t->info.ns_tgid ?: t->pid),
                                  "uid", "u", (uint32_t)t->info.uid[0],
                                  "start_time", "t", t->info.start_time,
                                  "frequency", "u", profile_frequency(t->profile),
                                  "group", "s", t->group ? t->group->spec : "");
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

int method_list_targets(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ Target **targets = NULL;
        size_t n;
        int r;

        r = query_visible_targets(userdata, msg, &targets, &n, error);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ua{sv})");
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = append_target(reply, targets[i]);
                if (r < 0)
                        return r;
        }
        return bus_reply_close_and_send(reply);
}

int method_get_stacks(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(query_done) Query q = {};
        QueryRequest req = { .needs = QUERY_VIEW };
        uint32_t limit;
        int r;

        r = sd_bus_message_read(msg, "sut", &req.spec, &limit, &req.window_usec);
        if (r < 0)
                return r;
        r = query_run(userdata, msg, &req, &q, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "tt(tt)", profile_total(q.profile), profile_other_stack_samples(q.profile),
                                  q.start_usec, q.end_usec);
        if (r < 0)
                return r;
        r = bus_append_stacks(reply, q.profile, limit);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Frames without a symbol are named "MODULE+0xOFFSET" (target.c): count them per module. */
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

static int append_module_symbols(sd_bus_message *reply, const Debuginfod *debuginfod, Target *t,
                                 const ProfileRow *m, const ProfileRow *functions, size_t n_functions)
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
                if (r >= 0 && info.debug_file) {
                        _cleanup_free_ char *escaped = NULL;
                        const char *debug_file;

                        /* The one path kept raw where it is read, to be opened again: escaped here. */
                        r = utf8_escape_or_keep(info.debug_file, &escaped, &debug_file);
                        if (r >= 0)
                                r = sd_bus_message_append(reply, "{sv}", "debug_file", "s", debug_file);
                }
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

int method_get_module_symbols(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *manager = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ ProfileRow *modules = NULL, *functions = NULL;
        size_t n_modules, n_functions;
        const char *spec;
        Target *t;
        int r;

        r = sd_bus_message_read(msg, "s", &spec);
        if (r < 0)
                return r;
        r = query_process(userdata, msg, spec, &t, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
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
                r = append_module_symbols(reply, manager->debuginfod, t, &modules[i], functions, n_functions);
                if (r < 0)
                        return r;
        }
        return bus_reply_close_and_send(reply);
}

int method_get_symbol_names(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *spec;
        Target *t;
        int r;

        r = sd_bus_message_read(msg, "s", &spec);
        if (r < 0)
                return r;
        r = query_process(userdata, msg, spec, &t, error);
        if (r <= 0)
                return r < 0 ? r : ASKED_POLKIT;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(sss)");
        if (r < 0)
                return r;
        for (size_t id = 0; id < profile_n_functions(t->profile); id++) {
                const char *module, *function, *mangled = profile_function_mangled(t->profile, (uint32_t)id);

                if (!mangled)
                        continue;
                r = profile_function_name(t->profile, (uint32_t)id, &module, &function);
                if (r < 0)
                        return r;
                r = sd_bus_message_append(reply, "(sss)", module, function, mangled);
                if (r < 0)
                        return r;
        }
        return bus_reply_close_and_send(reply);
}
