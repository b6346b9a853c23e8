/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "authz.h"
#include "bus-groups.h"
#include "bus-names.h"
#include "bus-query.h"
#include "bus-rows.h"
#include "bus-sources.h"
#include "bus.h"
#include "log.h"
#include "manager-attach.h"
#include "manager-groups.h"
#include "memory.h"
#include "quote.h"
#include "target-spec.h"

/* The object: its vtable and properties, and the methods that change targets (Attach, Detach, Reset); the
 * queries are in bus-query.c, who may call what in authz.c. A thin layer: check every argument, authorize,
 * call the manager, marshal the answer. */

/* Attach's flags go to the BPF targets map as they are. */
_Static_assert(VPROF_ATTACH_OFF_CPU == VPROF_TARGET_OFF_CPU, "the bus's and the BPF program's off-CPU flag");
_Static_assert(VPROF_ATTACH_CHILDREN == VPROF_TARGET_CHILDREN, "the bus's and the BPF program's children flag");

/* A getter of one value worked out from the Manager, in the manner of systemd's BUS_DEFINE_PROPERTY_GET. */
#define DEFINE_PROPERTY_GET(function, bus_type, expression)                                                    \
        static int function(sd_bus *bus _unused_, const char *path _unused_, const char *interface _unused_,   \
                            const char *property _unused_, sd_bus_message *reply, void *userdata,              \
                            sd_bus_error *error _unused_)                                                      \
        {                                                                                                      \
                Manager *m _unused_ = userdata;                                                                \
                return sd_bus_message_append(reply, bus_type, expression);                                     \
        }

DEFINE_PROPERTY_GET(property_get_version, "s", VPROF_VERSION)
/* A Manager that never started sampling (the unit tests) has no sampler: its event is the configured one, and
 * it samples no CPU. */
DEFINE_PROPERTY_GET(property_get_event, "s",
                    sampler_event_to_string(m->sampler ? sampler_event(m->sampler) : m->config.event))
DEFINE_PROPERTY_GET(property_get_event_reason, "s", m->sampler ? sampler_event_reason(m->sampler) : "not sampling")
DEFINE_PROPERTY_GET(property_get_cpus, "u", m->sampler ? sampler_n_cpus(m->sampler) : 0u)
DEFINE_PROPERTY_GET(property_get_targets, "u", (uint32_t)hashmap_size(m->targets))
/* A C bool: sd-bus's own getter would read a D-Bus boolean's 4 bytes. */
DEFINE_PROPERTY_GET(property_get_off_cpu_default, "b", (int)m->config.off_cpu_default)
DEFINE_PROPERTY_GET(property_get_symbol_cache_size, "t", (uint64_t)symbolizer_budget(m->symbolizer))
DEFINE_PROPERTY_GET(property_get_symbol_cache_used, "t", (uint64_t)symbolizer_memory(m->symbolizer))
DEFINE_PROPERTY_GET(property_get_symbol_files_skipped, "t", symbolizer_skipped_files(m->symbolizer))
/* Bytes of the arena the tables are loaded into; 0: UnwindTableMiB=0, the kernel's frame-pointer walk. */
DEFINE_PROPERTY_GET(property_get_unwind_table_size, "t",
                    m->sampler ? sampler_unwind_arena_entries(m->sampler) * (uint64_t)sizeof(struct vprof_unwind_entry)
                               : 0u)
/* How user stacks are walked and why: "unwind tables", or "frame pointers (REASON)". */
DEFINE_PROPERTY_GET(property_get_unwind_walk, "s", m->sampler ? sampler_unwind_walk(m->sampler) : "not sampling")
/* 1 in N kept samples checked by the daemon's CFI interpreter; 0: off. */
DEFINE_PROPERTY_GET(property_get_unwind_self_check, "u", m->sampler ? sampler_unwind_self_check(m->sampler) : 0u)
/* The version of the last interpreter found whose frames are not walked, "" when none. */
DEFINE_PROPERTY_GET(property_get_python_unsupported_version, "s", m->stats_snapshot.python.unsupported_version)
DEFINE_PROPERTY_GET(property_get_symbol_files_damaged, "t", symbolizer_damaged_files(m->symbolizer))
DEFINE_PROPERTY_GET(property_get_window_memory, "t", manager_window_memory(m))
DEFINE_PROPERTY_GET(property_get_inline_expansions, "t", m->drain.stats.inline_expansions)
DEFINE_PROPERTY_GET(property_get_inline_addresses, "t", m->drain.stats.inline_addresses)
DEFINE_PROPERTY_GET(property_get_python_frames_recorded, "t", m->drain.stats.python.frames)
DEFINE_PROPERTY_GET(property_get_python_frames_dropped, "t", m->drain.stats.python.dropped)
DEFINE_PROPERTY_GET(property_get_python_frames_unknown, "t", m->drain.stats.python.unknown)
DEFINE_PROPERTY_GET(property_get_inline_files_size, "t", line_reader_bytes(m->drain.inline_reader))

/* Where the RSS goes (memory.h), bytes by part; read at each call. */
static int property_get_memory(sd_bus *bus _unused_, const char *path _unused_, const char *interface _unused_,
                               const char *property _unused_, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error)
{
        MemoryStatus ms;
        int r;

        r = memory_status_read(userdata, &ms);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot read the daemon's memory: %s", strerror(-r));
        return sd_bus_message_append(
                reply, "a{st}", 12, "rss", ms.rss, "peak_rss", ms.peak_rss, "tables", ms.tables, "windows",
                ms.windows, "unwind", ms.unwind, "symbols", ms.symbols, "bpf_maps", ms.bpf_maps, "bpf_mappings",
                (uint64_t)ms.bpf_mappings, "code", ms.code, "malloc_free", ms.malloc_free, "other", ms.other,
                "unwind_arena", ms.unwind_arena);
}

/* The counters (ManagerStats) as of the call being answered: GetAll asks for every property in turn, and
 * counters read apart would not add up while samples keep coming. They are read once a call, into
 * m->stats_snapshot, which the vtable's offsets point the getters at; the call is held (a reference), so that
 * no later message can take its address. The Manager is the object's userdata, that of the current slot. */
static int counters_for_call(sd_bus *bus, sd_bus_error *error)
{
        Manager *m = sd_bus_slot_get_userdata(sd_bus_get_current_slot(bus));
        sd_bus_message *call = sd_bus_get_current_message(bus);
        int r;

        if (call && call == m->stats_call)
                return 0;
        r = manager_get_stats(m, &m->stats_snapshot);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot read the sampler's counters: %s", strerror(-r));
        sd_bus_message_unref(m->stats_call);
        m->stats_call = sd_bus_message_ref(call);
        return 0;
}

static int property_get_counter(sd_bus *bus, const char *path _unused_, const char *interface _unused_,
                                const char *property _unused_, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        int r;

        r = counters_for_call(bus, error);
        if (r < 0)
                return r;
        return sd_bus_message_append(reply, "t", *(uint64_t *)userdata);
}

static int property_get_counter_u32(sd_bus *bus, const char *path _unused_, const char *interface _unused_,
                                    const char *property _unused_, sd_bus_message *reply, void *userdata,
                                    sd_bus_error *error)
{
        int r;

        r = counters_for_call(bus, error);
        if (r < 0)
                return r;
        return sd_bus_message_append(reply, "u", *(uint32_t *)userdata);
}

/* A call's target (target-spec.h), or InvalidArgs. */
static int read_spec(const char *text, TargetSpec *ret, sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];

        if (target_spec_parse(text, ret) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid target '%s': expected a PID, a unit name (NAME.service) or a "
                                         "cgroup path (/...)", quote_prefix(text, quoted));
        return 0;
}

/* An attach's error as the call's, for PID (the thread group of tgid, for -ECHILD). */
static int attach_error(Manager *m, int r, uint32_t pid, AuthzCaller caller, pid_t tgid, sd_bus_error *error)
{
        switch (r) {
        case -ESRCH:
                return sd_bus_error_setf(error, VPROF_ERROR_NO_SUCH_PROCESS, "No process with PID %u", pid);
        case -EEXIST: /* a group of that PID, its process detached alone since */
                return sd_bus_error_setf(error, VPROF_ERROR_ALREADY_ATTACHED,
                                         "PID %u is already attached with its children", pid);
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
                                         m->slots.max_targets_per_user);
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
}

/* A process alone, or with the children it forks from now on (its group). */
static int attach_process(Manager *m, uint32_t pid, AuthzCaller caller, uint64_t flags, pid_t *ret_tgid)
{
        TargetGroup *g;
        Target *t;

        if (flags & VPROF_ATTACH_CHILDREN)
                return manager_attach_children(m, (pid_t)pid, caller, flags, &g, ret_tgid);
        return manager_attach(m, (pid_t)pid, caller, flags, &t, ret_tgid);
}

static int method_attach(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        AuthzCaller caller;
        const char *spec_text;
        TargetSpec spec;
        uint64_t flags;
        uint32_t pid;
        Target *t;
        pid_t tgid = 0;
        int r;

        r = sd_bus_message_read(msg, "st", &spec_text, &flags);
        if (r < 0)
                return r;
        if (flags & ~VPROF_ATTACH_FLAGS_ALL)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Unknown attach flags 0x%" PRIx64 ": expected 0x1 (off-CPU), 0x2 "
                                         "(children) or 0", flags & ~VPROF_ATTACH_FLAGS_ALL);
        r = read_spec(spec_text, &spec, error);
        if (r < 0)
                return r;
        /* OffCpuDefault: every target tracks its off-CPU time. */
        if (m->config.off_cpu_default)
                flags |= VPROF_ATTACH_OFF_CPU;
        if (spec.kind != TARGET_SPEC_PID) {
                /* A unit's or a cgroup's members follow their children anyway. */
                if (flags & VPROF_ATTACH_CHILDREN)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                                 "Flag 0x2 (children) is for a PID: a unit's or a cgroup's "
                                                 "processes are all profiled");
                return bus_attach_group(m, msg, &spec, spec_text, flags, error);
        }
        pid = spec.pid;
        if ((pid_t)pid == getpid())
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "PID %u is vprofd itself, which does not profile itself", pid);
        /* With its children: what attaching the process needs, its children being its own. */
        r = authz_pid(&m->authz, msg, pid, manager_get_target(m, (pid_t)pid), AUTHZ_CHANGE, &caller, &t,
                      error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        if (t)
                return sd_bus_error_setf(error, VPROF_ERROR_ALREADY_ATTACHED, "PID %u (%s) is already attached%s",
                                         pid, t->info.comm, t->exited ? " and has exited; detach it first" : "");

        r = attach_process(m, pid, caller, flags, &tgid);
        if (r == -EPERM && !caller.polkit_allowed) {
                /* The process changed since authz_pid() read it (another one has the PID, or it exec()ed a
                 * set-ID program): the same question to polkit, then attach as root would. */
                r = authz_verify_polkit(&m->authz, msg, pid, error);
                if (r <= 0)
                        return r < 0 ? r : 1;
                caller.polkit_allowed = true;
                r = attach_process(m, pid, caller, flags, &tgid);
        }
        if (r < 0)
                return attach_error(m, r, pid, caller, tgid, error);
        return sd_bus_reply_method_return(msg, NULL);
}

/* The group a call names, if any: a unit's or a cgroup's by its spec, a process's with its children by its PID.
 * 1 with *ret set, when the caller may act on it (authz_group()); 0 when the spec names no group; negative with
 * error set. */
static int group_for_call(Manager *m, sd_bus_message *msg, const char *spec_text, const TargetSpec *spec,
                          AuthzCaller *ret_caller, TargetGroup **ret, sd_bus_error *error)
{
        char quoted[QUOTE_SIZE];
        TargetGroup *g;
        int r;

        g = manager_get_group(m, spec_text);
        if (!g) {
                if (spec->kind == TARGET_SPEC_PID)
                        return 0;
                return sd_bus_error_setf(error, VPROF_ERROR_NOT_ATTACHED, "%s is not attached",
                                         quote_prefix(spec_text, quoted));
        }
        r = authz_group(&m->authz, msg, g, AUTHZ_CHANGE, ret_caller, error);
        if (r < 0)
                return r;
        *ret = g;
        return 1;
}

static int method_detach(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        AuthzCaller caller;
        const char *spec_text;
        TargetSpec spec;
        TargetGroup *g;
        uint32_t pid;
        Target *t;
        int r;

        r = sd_bus_message_read(msg, "s", &spec_text);
        if (r < 0)
                return r;
        r = read_spec(spec_text, &spec, error);
        if (r < 0)
                return r;
        r = group_for_call(m, msg, spec_text, &spec, &caller, &g, error);
        if (r < 0)
                return r;
        if (r > 0) {
                r = manager_detach_group(m, g, caller);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, r, "Cannot detach %s: %s", g->spec, strerror(-r));
                return sd_bus_reply_method_return(msg, NULL);
        }
        pid = spec.pid;
        r = authz_target(&m->authz, msg, pid, manager_get_target(m, (pid_t)pid), AUTHZ_CHANGE, &caller, &t,
                         error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = manager_detach(m, (pid_t)pid, caller);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot detach PID %u: %s", pid, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_reset(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        AuthzCaller caller;
        const char *spec_text;
        TargetSpec spec;
        TargetGroup *g;
        uint32_t pid;
        Target *t;
        int r;

        r = sd_bus_message_read(msg, "s", &spec_text);
        if (r < 0)
                return r;
        r = read_spec(spec_text, &spec, error);
        if (r < 0)
                return r;
        /* Samples taken before the reset belong to the old tables; drained before the targets are looked up, as a
         * drain may make and drop targets. */
        manager_sync(m);
        r = group_for_call(m, msg, spec_text, &spec, &caller, &g, error);
        if (r < 0)
                return r;
        if (r > 0) {
                r = manager_reset_group(m, g, caller);
                if (r < 0)
                        return sd_bus_error_set_errnof(error, r, "Cannot reset %s: %s", g->spec, strerror(-r));
                return sd_bus_reply_method_return(msg, NULL);
        }
        pid = spec.pid;
        r = authz_target(&m->authz, msg, pid, manager_get_target(m, (pid_t)pid), AUTHZ_CHANGE, &caller, &t,
                         error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = manager_reset(m, t, caller);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot reset PID %u: %s", pid, strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

/* The queries wait their turn in the queue (query-queue.h), the other methods are answered at once. Without a
 * queue (the unit tests, which drive the bus without an event loop) a query runs at once too. */
#define QUEUED(name)                                                                                           \
        static int queued_##name(sd_bus_message *msg, void *userdata, sd_bus_error *error)                      \
        {                                                                                                      \
                Manager *m = userdata;                                                                         \
                return m->queries ? query_queue_add(m->queries, msg, method_##name, m)                         \
                                  : method_##name(msg, userdata, error);                                       \
        }
QUEUED(get_functions)
QUEUED(get_modules)
QUEUED(get_threads)
QUEUED(get_processes)
QUEUED(get_stacks)
QUEUED(get_profile)
QUEUED(get_window_tables)
QUEUED(get_module_symbols)
QUEUED(get_symbol_names)
QUEUED(get_function_sources)
QUEUED(get_function_values)
QUEUED(get_module_values)
QUEUED(get_thread_values)
QUEUED(get_process_values)
#undef QUEUED

#define COUNTER(name, field)                                                                                   \
        SD_BUS_PROPERTY(name, "t", property_get_counter, offsetof(Manager, stats_snapshot.field), 0)

static const sd_bus_vtable profiler_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Event", "s", property_get_event, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("EventReason", "s", property_get_event_reason, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Frequency", "u", NULL, offsetof(Manager, config.frequency),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("CPUs", "u", property_get_cpus, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Targets", "u", property_get_targets, 0, 0),
        COUNTER("SamplesSeen", seen),
        COUNTER("SamplesKept", kept),
        COUNTER("SamplesDiscarded", discarded),
        COUNTER("SamplesLost", lost),
        COUNTER("StackErrors", stack_errors),
        COUNTER("StacksTruncated", truncated),
        COUNTER("SamplesUnclaimed", unclaimed),
        SD_BUS_PROPERTY("OffCpuDefault", "b", property_get_off_cpu_default, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        COUNTER("OffCpuBlocked", off_cpu_blocked),
        COUNTER("OffCpuPreempted", off_cpu_preempted),
        COUNTER("OffCpuLost", off_cpu_lost),
        COUNTER("OffCpuUnclaimed", off_cpu_unclaimed),
        SD_BUS_PROPERTY("MaxTargets", "u", NULL, offsetof(Manager, config.max_targets),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxTargetsPerUser", "u", NULL, offsetof(Manager, slots.max_targets_per_user),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ExitedTargetRetentionUSec", "t", NULL, offsetof(Manager, slots.exited_retention_usec),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxFunctionsPerTarget", "u", NULL, offsetof(Manager, max_functions),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxStacksPerTarget", "u", NULL, offsetof(Manager, max_stacks),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("WindowSeconds", "u", NULL, offsetof(Manager, window_seconds),
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("WindowMemory", "t", property_get_window_memory, 0, 0),
        SD_BUS_PROPERTY("Memory", "a{st}", property_get_memory, 0, 0),
        SD_BUS_PROPERTY("SymbolCacheSize", "t", property_get_symbol_cache_size, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("SymbolCacheUsed", "t", property_get_symbol_cache_used, 0, 0),
        SD_BUS_PROPERTY("SymbolFilesSkipped", "t", property_get_symbol_files_skipped, 0, 0),
        SD_BUS_PROPERTY("SymbolFilesDamaged", "t", property_get_symbol_files_damaged, 0, 0),
        SD_BUS_PROPERTY("InlineExpansions", "t", property_get_inline_expansions, 0, 0),
        SD_BUS_PROPERTY("InlineAddresses", "t", property_get_inline_addresses, 0, 0),
        SD_BUS_PROPERTY("InlineFilesSize", "t", property_get_inline_files_size, 0, 0),
        COUNTER("SamplesInOtherFunctions", other_function_samples),
        COUNTER("SamplesInOtherStacks", other_stack_samples),
        SD_BUS_PROPERTY("TargetsAtLimit", "u", property_get_counter_u32,
                        offsetof(Manager, stats_snapshot.targets_at_limit), 0),
        SD_BUS_PROPERTY("UnwindWalk", "s", property_get_unwind_walk, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("UnwindTableSize", "t", property_get_unwind_table_size, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        COUNTER("UnwindTableUsed", unwind.bytes),
        SD_BUS_PROPERTY("UnwindTablesLoaded", "u", property_get_counter_u32,
                        offsetof(Manager, stats_snapshot.unwind.tables), 0),
        COUNTER("UnwindTablesCompiled", unwind.compiled),
        COUNTER("UnwindTablesEvicted", unwind.evicted),
        COUNTER("UnwindTablesTooBig", unwind.too_big),
        COUNTER("UnwindTablesFailed", unwind.failed),
        COUNTER("UnwindFilesWithoutCFI", unwind.no_cfi),
        COUNTER("UnwindCompileUSec", unwind.build_usec),
        COUNTER("UnwindMappingsDropped", unwind.mappings_dropped),
        COUNTER("UnwindFilesPrefetched", unwind.prefetched),
        COUNTER("UnwindAttachesUnfinished", unwind.prefetch_unfinished),
        SD_BUS_PROPERTY("PythonTargets", "u", property_get_counter_u32,
                        offsetof(Manager, stats_snapshot.python.targets), 0),
        COUNTER("PythonInterpreters", python.interpreters),
        COUNTER("PythonNotInterpreters", python.not_interpreters),
        COUNTER("PythonUnsupported", python.unsupported),
        COUNTER("PythonPushFailed", python.push_failed),
        COUNTER("PythonDetectUSec", python.detect_usec),
        SD_BUS_PROPERTY("PythonUnsupportedVersion", "s", property_get_python_unsupported_version, 0, 0),
        COUNTER("PythonWalksComplete", python_walks_complete),
        COUNTER("PythonWalksNoThreadState", python_walks_no_tstate),
        COUNTER("PythonWalksBadFrame", python_walks_bad_frame),
        COUNTER("PythonWalksFaulted", python_walks_faulted),
        COUNTER("PythonWalksAtDepthLimit", python_walks_at_depth_limit),
        COUNTER("PythonFramesWalked", python_frames_walked),
        SD_BUS_PROPERTY("PythonFramesRecorded", "t", property_get_python_frames_recorded, 0, 0),
        SD_BUS_PROPERTY("PythonFramesDropped", "t", property_get_python_frames_dropped, 0, 0),
        SD_BUS_PROPERTY("PythonFramesUnknown", "t", property_get_python_frames_unknown, 0, 0),
        COUNTER("WalksComplete", walks_complete),
        COUNTER("WalksEndedAtFramePointer", walks_end_fp),
        COUNTER("WalksAtDepthLimit", walks_depth),
        COUNTER("WalksFaulted", walks_fault),
        COUNTER("WalksBad", walks_bad),
        COUNTER("WalksFellBack", walks_fell_back),
        COUNTER("WalksOutsideCFI", walks_no_row),
        COUNTER("WalksBadRule", walks_bad_rule),
        COUNTER("WalksUnknownPC", walks_unknown_pc),
        COUNTER("WalksNoMappings", walks_no_mappings),
        SD_BUS_PROPERTY("UnwindSelfCheck", "u", property_get_unwind_self_check, 0,
                        SD_BUS_VTABLE_PROPERTY_CONST),
        COUNTER("UnwindSelfCheckAgreed", self_check.agreed),
        COUNTER("UnwindSelfCheckDisagreed", self_check.disagreed),
        COUNTER("UnwindSelfCheckUnchecked", self_check.unchecked),
        COUNTER("UnwindSelfCheckLost", self_check.lost),
        COUNTER("MembersRefused", members_refused),
        COUNTER("MappingChanges", mapping_changes),
        COUNTER("MappingChangesLost", mapping_changes_lost),
        COUNTER("MappingChangesStale", mapping_changes_stale),
        COUNTER("MappingChangesMissed", mapping_changes_missed),
        COUNTER("SamplesWithStaleMappings", samples_stale_mappings),
        COUNTER("PendingWalksCopied", pending_walks_copied),
        COUNTER("PendingWalksFinished", pending_walks_finished),
        COUNTER("PendingWalksUnfinished", pending_walks_unfinished),
        COUNTER("PendingWalksOverRate", pending_walks_over_rate),
        COUNTER("PendingWalksNoRoom", pending_walks_no_room),
        SD_BUS_METHOD_WITH_ARGS("Attach", SD_BUS_ARGS("s", target, "t", flags), SD_BUS_NO_RESULT,
                                method_attach, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Detach", SD_BUS_ARGS("s", target), SD_BUS_NO_RESULT, method_detach,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Reset", SD_BUS_ARGS("s", target), SD_BUS_NO_RESULT, method_reset,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListTargets", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ua{sv})", targets),
                                method_list_targets, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListGroups", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sa{sv})", groups),
                                method_list_groups, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetFunctions",
                                SD_BUS_ARGS("s", target, "s", sort, "u", limit, "t", window_usec),
                                SD_BUS_RESULT("t", total_samples, "(tt)", window, ROWS_SAMPLING(ROW_FUNCTION_NAME), functions,
                                              "au", inlined),
                                queued_get_functions, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetModules", SD_BUS_ARGS("s", target, "t", window_usec),
                                SD_BUS_RESULT("t", total_samples, "(tt)", window, ROWS_SAMPLING(ROW_MODULE_NAME), modules),
                                queued_get_modules, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetThreads", SD_BUS_ARGS("s", target, "t", window_usec),
                                SD_BUS_RESULT("t", total_samples, "(tt)", window, ROWS_SAMPLING(ROW_ID_NAME), threads),
                                queued_get_threads, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcesses", SD_BUS_ARGS("s", target, "t", window_usec),
                                SD_BUS_RESULT("t", total_samples, "(tt)", window, ROWS_SAMPLING(ROW_ID_NAME), processes),
                                queued_get_processes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetStacks", SD_BUS_ARGS("s", target, "u", limit, "t", window_usec),
                                SD_BUS_RESULT("t", total_samples, "t", other_samples, "(tt)", window,
                                              "a(ss)", functions, "a(auut)", stacks, "au", inlined),
                                queued_get_stacks, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetWindowTables",
                                SD_BUS_ARGS("s", target, "t", window_usec, "t", until_usec, "u", limit),
                                SD_BUS_RESULT("u", frequency, "t", total_samples, "t", other_samples, "(tt)", window,
                                              ROWS_SAMPLING(ROW_FUNCTION_NAME), functions, "au", inlined_rows,
                                              ROWS_SAMPLING(ROW_MODULE_NAME), modules,
                                              ROWS_SAMPLING(ROW_ID_NAME), threads, "a(ss)", stack_functions,
                                              "a(auut)", stacks, "au", inlined),
                                queued_get_window_tables, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProfile", SD_BUS_ARGS("s", target, "u", limit, "t", window_usec),
                                SD_BUS_RESULT("t", total_samples, "t", other_samples, "(tt)", window, "u",
                                              frequency, "b", off_cpu, "a(ussa(sssttt)a(ssst)a(us)a(auuutt))",
                                              processes, "aau", inlined, "aa(us)", sources, "aa(uu)", lines),
                                queued_get_profile, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetModuleSymbols", SD_BUS_ARGS("s", target),
                                SD_BUS_RESULT("a(sa{sv})", modules), queued_get_module_symbols,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSymbolNames", SD_BUS_ARGS("s", target), SD_BUS_RESULT("a(sss)", names),
                                queued_get_symbol_names, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetFunctionSources", SD_BUS_ARGS("s", target), SD_BUS_RESULT("a(sss)", sources),
                                queued_get_function_sources, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetFunctionValues",
                                SD_BUS_ARGS("s", target, "s", sort, "u", limit, "t", window_usec),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "(tt)", window,
                                              ROWS_VALUES(ROW_FUNCTION_NAME), functions, "au", inlined),
                                queued_get_function_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetModuleValues", SD_BUS_ARGS("s", target, "t", window_usec),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "(tt)", window,
                                              ROWS_VALUES(ROW_MODULE_NAME), modules),
                                queued_get_module_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetThreadValues", SD_BUS_ARGS("s", target, "t", window_usec),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "(tt)", window,
                                              ROWS_VALUES(ROW_ID_NAME), threads),
                                queued_get_thread_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetProcessValues", SD_BUS_ARGS("s", target, "t", window_usec),
                                SD_BUS_RESULT("d", elapsed_total, "d", application_total, "(tt)", window,
                                              ROWS_VALUES(ROW_ID_NAME), processes),
                                queued_get_process_values, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

/* sd-bus answers some calls itself, with messages that quote what the caller sent, whole: an unknown object
 * path ("Unknown object '...'."), an unknown interface or property given to org.freedesktop.DBus.Properties.
 * Those strings are bounded only by the message size, so a caller could have megabytes echoed back. This
 * filter answers such calls first, with the same errors, quoting a short prefix (quote.h) as the daemon's
 * own messages do. Names that fit are left to sd-bus, whose messages then quote no more than that. */

#define PROPERTIES_INTERFACE "org.freedesktop.DBus.Properties"

/* Whether quote_prefix() would quote s as it is. */
static bool quotable(const char *s)
{
        char buf[QUOTE_SIZE];

        return strcmp(quote_prefix(s, buf), s) == 0;
}

/* The interface and property names of a Properties call: NULL where the call has none, or its arguments are not
 * what the method takes (sd-bus then answers InvalidArgs, quoting only signatures). */
static void read_property_names(sd_bus_message *msg, const char **ret_interface, const char **ret_property)
{
        const char *member = sd_bus_message_get_member(msg);

        *ret_interface = *ret_property = NULL;
        if (!member)
                return;
        if (strcmp(member, "GetAll") == 0)
                (void)sd_bus_message_read(msg, "s", ret_interface);
        else if ((strcmp(member, "Get") == 0 || strcmp(member, "Set") == 0) &&
                 sd_bus_message_read(msg, "ss", ret_interface, ret_property) < 0)
                *ret_interface = *ret_property = NULL;
        (void)sd_bus_message_rewind(msg, true);
}

static int on_long_name(sd_bus_message *msg, void *userdata _unused_, sd_bus_error *ret_error _unused_)
{
        const char *path, *interface, *property;
        char quoted[QUOTE_SIZE];

        if (sd_bus_message_is_method_call(msg, NULL, NULL) <= 0)
                return 0;
        /* Only paths of other objects are this long: vprofd's and its parents' are short. */
        path = sd_bus_message_get_path(msg);
        if (path && !quotable(path)) {
                (void)sd_bus_reply_method_errorf(msg, SD_BUS_ERROR_UNKNOWN_OBJECT, "Unknown object '%s'.",
                                                 quote_prefix(path, quoted));
                return 1;
        }
        if (sd_bus_message_is_method_call(msg, PROPERTIES_INTERFACE, NULL) <= 0)
                return 0;
        read_property_names(msg, &interface, &property);
        /* The errors sd-bus gives: Get and Set say UnknownProperty for an unknown interface too. */
        if (interface && !quotable(interface)) {
                (void)sd_bus_reply_method_errorf(msg, property ? SD_BUS_ERROR_UNKNOWN_PROPERTY
                                                               : SD_BUS_ERROR_UNKNOWN_INTERFACE,
                                                 "Unknown interface '%s'.", quote_prefix(interface, quoted));
                return 1;
        }
        if (property && !quotable(property)) {
                (void)sd_bus_reply_method_errorf(msg, SD_BUS_ERROR_UNKNOWN_PROPERTY, "Unknown property '%s'.",
                                                 quote_prefix(property, quoted));
                return 1;
        }
        return 0;
}

/* The objects VPROF_BUS_USER_PATH/UID: the same vtable, each call judged as UID's (authz_delegated_uid()). */
static int find_user_object(sd_bus *bus _unused_, const char *path, const char *interface _unused_,
                            void *userdata, void **ret_found, sd_bus_error *error _unused_)
{
        uid_t uid;

        if (authz_delegated_uid(path, &uid) <= 0)
                return 0;
        *ret_found = userdata;
        return 1;
}

int bus_add_profiler(Manager *m)
{
        int r;

        r = sd_bus_add_object_vtable(m->bus, NULL, VPROF_BUS_PATH, VPROF_BUS_INTERFACE, profiler_vtable, m);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(m->bus, NULL, VPROF_BUS_USER_PATH, VPROF_BUS_INTERFACE, profiler_vtable,
                                       find_user_object, m);
        if (r < 0)
                return r;
        /* Floating, as the vtable's slot: both live as long as the connection. */
        return sd_bus_add_filter(m->bus, NULL, on_long_name, NULL);
}

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
        r = bus_add_profiler(m);
        if (r < 0)
                return log_error_errno(r, "Failed to publish %s: %m", VPROF_BUS_PATH);
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        /* Below the bus: every message is read, and the quick ones answered, before a query runs. */
        r = query_queue_new(m->event, SD_EVENT_PRIORITY_NORMAL + 1, &m->queries);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the queue of queries: %m");
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

void bus_done(Manager *m)
{
        m->queries = query_queue_free(m->queries);
        bus_groups_done(m);
}
