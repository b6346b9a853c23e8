/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "authz.h"
#include "bus-details.h"
#include "bus-echo.h"
#include "bus-names.h"
#include "bus-stacks.h"
#include "bus-symbols.h"
#include "bus-symbol-names.h"
#include "bus-target.h"
#include "bus-values.h"
#include "bus.h"
#include "log.h"

/* A thin layer: check every argument, authorize, call the manager, marshal the answer. */

/* Attach's flags go to the BPF targets map as they are. */
_Static_assert(VPROF_ATTACH_OFF_CPU == VPROF_TARGET_OFF_CPU, "the bus's and the BPF program's off-CPU flag");

static int method_attach(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        AuthzCaller caller;
        uint64_t flags;
        uint32_t pid;
        Target *t;
        pid_t tgid = 0;
        int r;

        r = sd_bus_message_read(msg, "ut", &pid, &flags);
        if (r < 0)
                return r;
        if (flags & ~VPROF_ATTACH_FLAGS_ALL)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown attach flags 0x%" PRIx64 ": expected 0x1 (off-CPU) or 0",
                                         flags & ~VPROF_ATTACH_FLAGS_ALL);
        /* OffCpuDefault: every target tracks its off-CPU time. */
        if (m->config.off_cpu_default)
                flags |= VPROF_ATTACH_OFF_CPU;
        if ((pid_t)pid == getpid())
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "PID %u is vprofd itself, which does not profile itself", pid);
        r = bus_authorize_pid(m, msg, pid, &caller, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        if (t)
                return sd_bus_error_setf(error, VPROF_ERROR_ALREADY_ATTACHED, "PID %u (%s) is already attached%s",
                                         pid, t->info.comm, t->exited ? " and has exited; detach it first" : "");

        r = manager_attach(m, (pid_t)pid, caller, flags, &t, &tgid);
        if (r == -EPERM && !caller.polkit_allowed) {
                /* The process changed since bus_authorize_pid() read it (another one has the PID, or it
                 * exec()ed a set-ID program): the same question to polkit, then attach as root would. */
                r = bus_verify_profile_access(m, msg, pid, error);
                if (r <= 0)
                        return r < 0 ? r : 1;
                caller.polkit_allowed = true;
                r = manager_attach(m, (pid_t)pid, caller, flags, &t, &tgid);
        }
        switch (r) {
        case 0:
                break;
        case -ESRCH:
                return sd_bus_error_setf(error, VPROF_ERROR_NO_SUCH_PROCESS, "No process with PID %u", pid);
        case -ECHILD:
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "PID %u is a thread of process %d: attach the process", pid, (int)tgid);
        case -EINVAL:
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "PID %u is a kernel thread, which has no user stack to profile", pid);
        case -EACCES:
                /* Even vprofd's capabilities do not reach it: a process of another user namespace or a
                 * /proc mounted with hidepid=, as seen from a container. */
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Access denied: vprofd cannot read PID %u in /proc", pid);
        case -ESHUTDOWN:
                return sd_bus_error_setf(error, SD_BUS_ERROR_NO_SERVER,
                                         "vprofd is exiting after being idle; call again to start it anew");
        case -EDQUOT:
                return sd_bus_error_setf(error, VPROF_ERROR_LIMIT_EXCEEDED,
                                         "Cannot attach PID %u: UID %u has reached its limit of %u targets, all "
                                         "running (MaxTargetsPerUser=)", pid, (unsigned)caller.uid,
                                         m->max_targets_per_user);
        case -E2BIG:
                return sd_bus_error_setf(error, VPROF_ERROR_LIMIT_EXCEEDED,
                                         "Cannot attach PID %u: the limit of %u targets is reached, all of them "
                                         "running (MaxTargets=)", pid, m->config.max_targets);
        case -EMFILE:
                /* Not the caller's fault, and nothing it can fix: the unit's LimitNOFILE= is too low. */
                return sd_bus_error_setf(error, VPROF_ERROR_LIMIT_EXCEEDED,
                                         "Cannot attach PID %u: vprofd has reached its limit of %" PRIu64
                                         " open files, one for each target (LimitNOFILE=)", pid, m->fd_limit);
        case -ENFILE:
                return sd_bus_error_setf(error, VPROF_ERROR_LIMIT_EXCEEDED,
                                         "Cannot attach PID %u: the system's limit of open files is reached "
                                         "(fs.file-max)", pid);
        default:
                return sd_bus_error_set_errnof(error, r, "Cannot attach PID %u: %s", pid, strerror(-r));
        }
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_detach(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        AuthzCaller caller;
        Target *t;
        pid_t pid;
        int r;

        r = bus_read_target(m, msg, &caller, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        pid = t->pid; /* t is gone after a detach */
        r = manager_detach(m, pid, caller);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot detach PID %d: %s", (int)pid, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_reset(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        AuthzCaller caller;
        Target *t;
        int r;

        r = bus_read_target(m, msg, &caller, &t, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = manager_reset(m, t, caller);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot reset PID %d: %s", (int)t->pid, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

/* Rows as (name, module?, tid?, inclusive, exclusive, percents); signature picks the columns. */
static int append_rows(sd_bus_message *reply, const char *signature, const ProfileRow *rows, size_t n,
                       uint64_t total)
{
        int r;

        r = sd_bus_message_append(reply, "t", total);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', signature);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const ProfileRow *row = rows + i;
                double ip = profile_percent(row->inclusive, total), ep = profile_percent(row->exclusive, total);

                if (strcmp(signature, "(ssttdd)") == 0)
                        r = sd_bus_message_append(reply, signature, row->name, row->module, row->inclusive,
                                                  row->exclusive, ip, ep);
                else if (strcmp(signature, "(sttdd)") == 0)
                        r = sd_bus_message_append(reply, signature, row->name, row->inclusive, row->exclusive, ip,
                                                  ep);
                else
                        r = sd_bus_message_append(reply, signature, row->tid, row->name, row->inclusive,
                                                  row->exclusive, ip, ep);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int reply_rows(sd_bus_message *msg, const char *signature, const ProfileRow *rows, size_t n,
                      uint64_t total)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = append_rows(reply, signature, rows, n, total);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_functions(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        Target *t;
        size_t n;
        int r;

        r = bus_read_function_table(userdata, msg, false, &t, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_rows(msg, "(ssttdd)", rows, n, profile_total(t->profile));
}

/* GetModules and GetThreads: one target's table, whole. */
static int reply_target_table(sd_bus_message *msg, Manager *m, sd_bus_error *error, profile_table_fn table,
                              const char *signature)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        Target *t;
        size_t n;
        int r;

        r = bus_read_target_table(m, msg, table, PROFILE_SORT_INCLUSIVE, &t, &rows, &n, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        return reply_rows(msg, signature, rows, n, profile_total(t->profile));
}

static int method_get_modules(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_target_table(msg, userdata, error, profile_modules, "(sttdd)");
}

static int method_get_threads(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        return reply_target_table(msg, userdata, error, profile_threads, "(usttdd)");
}

static int method_get_processes(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        Manager *m = userdata;
        uint64_t total = 0;
        size_t n = 0;
        uid_t caller;
        Target *t;
        int r;

        r = bus_caller_uid(msg, &caller, error);
        if (r < 0)
                return r;
        manager_sync(m);
        rows = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(ProfileRow));
        if (!rows)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets) {
                uint64_t samples = profile_total(t->profile);
                if (!bus_caller_may_see(t, caller))
                        continue;
                rows[n++] = (ProfileRow){
                        .name = t->info.comm,
                        .tid = (uint32_t)t->pid,
                        .inclusive = samples,
                        .exclusive = samples,
                };
                total += samples;
        }
        /* Busiest first; the order of equal rows follows the PID. */
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && (rows[j].inclusive > rows[j - 1].inclusive ||
                                             (rows[j].inclusive == rows[j - 1].inclusive &&
                                              rows[j].tid < rows[j - 1].tid)); j--) {
                        ProfileRow tmp = rows[j];
                        rows[j] = rows[j - 1];
                        rows[j - 1] = tmp;
                }
        return reply_rows(msg, "(usttdd)", rows, n, total);
}

/* The counters as of the call being answered: GetAll asks for every property in turn, and counters read
 * apart would not add up while samples keep coming. A call is known by its sender and cookie. */
static int stats_for_call(Manager *m, sd_bus_message *reply, ManagerStats *ret)
{
        sd_bus_message *call = sd_bus_get_current_message(sd_bus_message_get_bus(reply));
        const char *sender = call ? sd_bus_message_get_sender(call) : NULL;
        uint64_t cookie = 0;
        int r;

        if (call)
                (void)sd_bus_message_get_cookie(call, &cookie);
        if (sender && cookie && m->stats_cookie == cookie && strcmp(m->stats_sender, sender) == 0) {
                *ret = m->stats_snapshot;
                return 0;
        }
        r = manager_get_stats(m, &m->stats_snapshot);
        if (r < 0)
                return r;
        m->stats_cookie = sender ? cookie : 0;
        snprintf(m->stats_sender, sizeof(m->stats_sender), "%s", sender ?: "");
        *ret = m->stats_snapshot;
        return 0;
}

static int property_get(sd_bus *bus _unused_, const char *path _unused_, const char *interface _unused_,
                        const char *property, sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        ManagerStats stats;
        int r;

        if (strcmp(property, "Version") == 0)
                return sd_bus_message_append(reply, "s", VPROF_VERSION);
        if (strcmp(property, "Event") == 0)
                return sd_bus_message_append(reply, "s", sampler_event_to_string(sampler_event(m->sampler)));
        if (strcmp(property, "EventReason") == 0)
                return sd_bus_message_append(reply, "s", sampler_event_reason(m->sampler));
        if (strcmp(property, "Frequency") == 0)
                return sd_bus_message_append(reply, "u", m->config.frequency);
        if (strcmp(property, "CPUs") == 0)
                return sd_bus_message_append(reply, "u", sampler_n_cpus(m->sampler));
        if (strcmp(property, "Targets") == 0)
                return sd_bus_message_append(reply, "u", (uint32_t)hashmap_size(m->targets));
        if (strcmp(property, "OffCpuDefault") == 0)
                return sd_bus_message_append(reply, "b", m->config.off_cpu_default);
        if (strcmp(property, "MaxTargets") == 0)
                return sd_bus_message_append(reply, "u", m->config.max_targets);
        if (strcmp(property, "MaxTargetsPerUser") == 0)
                return sd_bus_message_append(reply, "u", m->max_targets_per_user);
        if (strcmp(property, "ExitedTargetRetentionUSec") == 0)
                return sd_bus_message_append(reply, "t", m->exited_retention_usec);
        if (strcmp(property, "MaxFunctionsPerTarget") == 0)
                return sd_bus_message_append(reply, "u", m->max_functions);
        if (strcmp(property, "MaxStacksPerTarget") == 0)
                return sd_bus_message_append(reply, "u", m->max_stacks);
        if (strcmp(property, "SymbolCacheSize") == 0)
                return sd_bus_message_append(reply, "t", (uint64_t)symbolizer_budget(m->symbolizer));
        if (strcmp(property, "SymbolCacheUsed") == 0)
                return sd_bus_message_append(reply, "t", (uint64_t)symbolizer_memory(m->symbolizer));
        if (strcmp(property, "SymbolFilesSkipped") == 0)
                return sd_bus_message_append(reply, "t", symbolizer_skipped_files(m->symbolizer));
        if (strcmp(property, "SymbolFilesDamaged") == 0)
                return sd_bus_message_append(reply, "t", symbolizer_damaged_files(m->symbolizer));

        r = stats_for_call(m, reply, &stats);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot read the sampler's counters: %s", strerror(-r));
        if (strcmp(property, "SamplesSeen") == 0)
                return sd_bus_message_append(reply, "t", stats.seen);
        if (strcmp(property, "SamplesKept") == 0)
                return sd_bus_message_append(reply, "t", stats.kept);
        if (strcmp(property, "SamplesDiscarded") == 0)
                return sd_bus_message_append(reply, "t", stats.discarded);
        if (strcmp(property, "SamplesLost") == 0)
                return sd_bus_message_append(reply, "t", stats.lost);
        if (strcmp(property, "StackErrors") == 0)
                return sd_bus_message_append(reply, "t", stats.stack_errors);
        if (strcmp(property, "StacksTruncated") == 0)
                return sd_bus_message_append(reply, "t", stats.truncated);
        if (strcmp(property, "SamplesUnclaimed") == 0)
                return sd_bus_message_append(reply, "t", stats.unclaimed);
        if (strcmp(property, "OffCpuBlocked") == 0)
                return sd_bus_message_append(reply, "t", stats.off_cpu_blocked);
        if (strcmp(property, "OffCpuPreempted") == 0)
                return sd_bus_message_append(reply, "t", stats.off_cpu_preempted);
        if (strcmp(property, "OffCpuLost") == 0)
                return sd_bus_message_append(reply, "t", stats.off_cpu_lost);
        if (strcmp(property, "OffCpuUnclaimed") == 0)
                return sd_bus_message_append(reply, "t", stats.off_cpu_unclaimed);
        if (strcmp(property, "SamplesInOtherFunctions") == 0)
                return sd_bus_message_append(reply, "t", stats.other_function_samples);
        if (strcmp(property, "SamplesInOtherStacks") == 0)
                return sd_bus_message_append(reply, "t", stats.other_stack_samples);
        if (strcmp(property, "TargetsAtLimit") == 0)
                return sd_bus_message_append(reply, "u", stats.targets_at_limit);
        return -ENOENT;
}

static const sd_bus_vtable profiler_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Event", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("EventReason", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Frequency", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CPUs", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Targets", "u", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesSeen", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesKept", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesDiscarded", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesLost", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("StackErrors", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("StacksTruncated", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesUnclaimed", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("OffCpuDefault", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("OffCpuBlocked", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("OffCpuPreempted", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("OffCpuLost", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("OffCpuUnclaimed", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("MaxTargets", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxTargetsPerUser", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ExitedTargetRetentionUSec", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxFunctionsPerTarget", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxStacksPerTarget", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SymbolCacheSize", "t", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SymbolCacheUsed", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SymbolFilesSkipped", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SymbolFilesDamaged", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesInOtherFunctions", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("SamplesInOtherStacks", "t", property_get, 0, 0),
        SD_BUS_PROPERTY("TargetsAtLimit", "u", property_get, 0, 0),
        SD_BUS_METHOD_WITH_ARGS("Attach", SD_BUS_ARGS("u", pid, "t", flags), SD_BUS_NO_RESULT, method_attach,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Detach", SD_BUS_ARGS("u", pid), SD_BUS_NO_RESULT, method_detach,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reset", SD_BUS_ARGS("u", pid), SD_BUS_NO_RESULT, method_reset,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListTargets", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ua{sv})", targets),
                                bus_method_list_targets, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetFunctions", SD_BUS_ARGS("u", pid, "s", sort, "u", limit),
                                SD_BUS_RESULT("t", total_samples, "a(ssttdd)", functions), method_get_functions,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetModules", SD_BUS_ARGS("u", pid),
                                SD_BUS_RESULT("t", total_samples, "a(sttdd)", modules), method_get_modules,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetThreads", SD_BUS_ARGS("u", pid),
                                SD_BUS_RESULT("t", total_samples, "a(usttdd)", threads), method_get_threads,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcesses", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("t", total_samples, "a(usttdd)", processes),
                                method_get_processes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetStacks", SD_BUS_ARGS("u", pid, "u", limit),
                                SD_BUS_RESULT("t", total_samples, "t", other_samples, "a(ss)", functions, "a(auut)", stacks),
                                bus_method_get_stacks, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetModuleSymbols", SD_BUS_ARGS("u", pid), SD_BUS_RESULT("a(sa{sv})", modules),
                                bus_method_get_module_symbols, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSymbolNames", SD_BUS_ARGS("u", pid), SD_BUS_RESULT("a(sss)", names),
                                bus_method_get_symbol_names, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetFunctionValues", SD_BUS_ARGS("u", pid, "s", sort, "u", limit),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "a(ssdddddddddd)",
                                              functions),
                                method_get_function_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetModuleValues", SD_BUS_ARGS("u", pid),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "a(sdddddddddd)", modules),
                                method_get_module_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetThreadValues", SD_BUS_ARGS("u", pid),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "a(usdddddddddd)", threads),
                                method_get_thread_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcessValues", SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "a(usdddddddddd)",
                                              processes),
                                method_get_process_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* sd-bus turns the end of the connection into a local Disconnected signal. Without the bus nobody can reach the
 * daemon: it saves the tables and exits with failure, which Restart=on-failure answers with a new daemon once the
 * bus is back (sd-bus's own exit on disconnect would end the loop with a code that reads as success). */
static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error _unused_)
{
        Manager *m = userdata;

        if (!sd_bus_message_is_signal(msg, "org.freedesktop.DBus.Local", "Disconnected"))
                return 0;
        log_error("Lost the connection to the system bus (dbus-daemon stopped or restarted, or closed the "
                  "connection): saving the tables and exiting with failure.");
        return sd_event_exit(m->event, -ENOTCONN);
}

int bus_setup(Manager *m)
{
        int r;

        r = sd_bus_open_system(&m->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        r = sd_bus_add_object_vtable(m->bus, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, profiler_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to publish %s: %m", VPROF_BUS_PATH);
        r = bus_add_echo_filter(m->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to add the bus filter: %m");
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        r = sd_bus_add_filter(m->bus, NULL, on_disconnected, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the bus connection: %m");
        /* Last: owning the name lets clients in; vprofd.c then tells systemd it is ready (Type=notify). */
        r = sd_bus_request_name(m->bus, VPROF_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_error_errno(r, "Another vprofd owns %s already.", VPROF_BUS_NAME);
        if (r < 0)
                return log_error_errno(r, "Failed to acquire %s (is the D-Bus policy installed?): %m",
                                       VPROF_BUS_NAME);
        return 0;
}
