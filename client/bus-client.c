/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-client.h"
#include "bus-object.h"
#include "log.h"

#define DEFAULT_SYSTEM_BUS_ADDRESS "unix:path=/run/dbus/system_bus_socket"

int bus_bad_reply(sd_bus_error *error, const char *method, int r)
{
        sd_bus_error_setf(error, VPROF_CLIENT_ERROR_BAD_REPLY, "Failed to parse the reply to %s: %s", method,
                          strerror(-r));
        return r;
}

TargetList *target_list_free(TargetList *l)
{
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_targets; i++) {
                free(l->targets[i].command);
                free(l->targets[i].state);
                free(l->targets[i].group);
        }
        free(l->targets);
        free(l);
        return NULL;
}

DaemonStatus *daemon_status_free(DaemonStatus *s)
{
        if (!s)
                return NULL;
        free(s->version);
        free(s->event);
        free(s->event_reason);
        free(s->unwind_walk);
        free(s->python_unsupported_version);
        free(s);
        return NULL;
}

int bus_connect_system(sd_bus **ret)
{
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        const char *address;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                address = getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: DEFAULT_SYSTEM_BUS_ADDRESS;
                return log_error_errno(r, "Cannot connect to the system bus at %s: %m", address);
        }

        /* Lets polkit ask for a password through an agent when a person is at the terminal. */
        (void)sd_bus_set_allow_interactive_authorization(bus, isatty(STDIN_FILENO));

        *ret = TAKE_PTR(bus);
        return 0;
}

int bus_attach(sd_bus *bus, const char *target, uint64_t flags, sd_bus_error *error)
{
        return sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "Attach", error, NULL,
                                  "st", target, flags);
}

int bus_call_target_method(sd_bus *bus, const char *method, const char *target, sd_bus_error *error)
{
        return sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, method, error,
                                  NULL, "s", target);
}

int bus_read_trailing_indices(sd_bus_message *m, size_t n, bus_index_fn mark, void *userdata)
{
        uint32_t index;
        int r;

        r = sd_bus_message_peek_type(m, NULL, NULL);
        if (r <= 0)
                return r;
        r = sd_bus_message_enter_container(m, 'a', "u");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read_basic(m, 'u', &index)) > 0) {
                if (index >= n)
                        return -EBADMSG;
                mark(index, userdata);
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int bus_read_dict(sd_bus_message *m, bus_dict_entry_fn fn, void *userdata)
{
        const char *key;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                r = fn(m, key, userdata);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* A new zeroed entry at the end of l. */
static TargetInfo *target_list_append(TargetList *l, size_t *allocated)
{
        TargetInfo *t;

        if (l->n_targets == *allocated) {
                size_t a = MAX(*allocated * 2, (size_t)16);

                t = reallocarray(l->targets, a, sizeof(*t));
                if (!t)
                        return NULL;
                l->targets = t;
                *allocated = a;
        }
        t = &l->targets[l->n_targets++];
        *t = (TargetInfo){};
        return t;
}

int bus_read_variant_string(sd_bus_message *m, char **ret)
{
        const char *v;
        int r;

        r = sd_bus_message_read(m, "v", "s", &v);
        if (r < 0)
                return r;
        free(*ret);
        *ret = strdup(v);
        return *ret ? 0 : -ENOMEM;
}

/* One dictionary entry into t. */
static int read_target_entry(sd_bus_message *m, const char *key, void *userdata)
{
        TargetInfo *t = userdata;

        if (strcmp(key, "command") == 0)
                return bus_read_variant_string(m, &t->command);
        if (strcmp(key, "state") == 0)
                return bus_read_variant_string(m, &t->state);
        if (strcmp(key, "samples") == 0)
                return sd_bus_message_read(m, "v", "t", &t->samples);
        if (strcmp(key, "attached_usec") == 0)
                return sd_bus_message_read(m, "v", "t", &t->attached_usec);
        if (strcmp(key, "flags") == 0)
                return sd_bus_message_read(m, "v", "t", &t->flags);
        if (strcmp(key, "ns_pid") == 0)
                return sd_bus_message_read(m, "v", "u", &t->ns_pid);
        if (strcmp(key, "frequency") == 0)
                return sd_bus_message_read(m, "v", "u", &t->frequency);
        if (strcmp(key, "group") == 0)
                return bus_read_variant_string(m, &t->group);
        return sd_bus_message_skip(m, "v");
}

static int read_target(sd_bus_message *m, TargetInfo *t)
{
        int r;

        r = sd_bus_message_read(m, "u", &t->pid);
        if (r < 0)
                return r;
        r = bus_read_dict(m, read_target_entry, t);
        if (r < 0)
                return r;
        /* The two strings every row shows. */
        if (!t->command)
                t->command = strdup("");
        if (!t->state)
                t->state = strdup("");
        return t->command && t->state ? 0 : -ENOMEM;
}

int bus_list_targets(sd_bus *bus, sd_bus_error *error, TargetList **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(target_list_freep) TargetList *l = NULL;
        size_t allocated = 0;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE, "ListTargets",
                               error, &reply, NULL);
        if (r < 0)
                return r;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(ua{sv})");
        if (r < 0)
                return bus_bad_reply(error, "ListTargets", r);
        while ((r = sd_bus_message_enter_container(reply, 'r', "ua{sv}")) > 0) {
                TargetInfo *t = target_list_append(l, &allocated);

                if (!t)
                        return -ENOMEM;
                r = read_target(reply, t);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bus_bad_reply(error, "ListTargets", r);
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, "ListTargets", r);
        }
        if (r < 0)
                return bus_bad_reply(error, "ListTargets", r);
        *ret = TAKE_PTR(l);
        return 0;
}

static const struct {
        const char *name;
        char type;
        size_t offset;
} status_properties[] = {
        {"Version", 's', offsetof(DaemonStatus, version)},
        {"Event", 's', offsetof(DaemonStatus, event)},
        {"EventReason", 's', offsetof(DaemonStatus, event_reason)},
        {"Frequency", 'u', offsetof(DaemonStatus, frequency)},
        {"CPUs", 'u', offsetof(DaemonStatus, cpus)},
        {"Targets", 'u', offsetof(DaemonStatus, targets)},
        {"SamplesSeen", 't', offsetof(DaemonStatus, samples_seen)},
        {"SamplesKept", 't', offsetof(DaemonStatus, samples_kept)},
        {"SamplesDiscarded", 't', offsetof(DaemonStatus, samples_discarded)},
        {"SamplesLost", 't', offsetof(DaemonStatus, samples_lost)},
        {"StackErrors", 't', offsetof(DaemonStatus, stack_errors)},
        {"StacksTruncated", 't', offsetof(DaemonStatus, stacks_truncated)},
        {"SamplesUnclaimed", 't', offsetof(DaemonStatus, samples_unclaimed)},
        {"OffCpuDefault", 'b', offsetof(DaemonStatus, off_cpu_default)},
        {"OffCpuBlocked", 't', offsetof(DaemonStatus, off_cpu_blocked)},
        {"OffCpuPreempted", 't', offsetof(DaemonStatus, off_cpu_preempted)},
        {"OffCpuLost", 't', offsetof(DaemonStatus, off_cpu_lost)},
        {"OffCpuUnclaimed", 't', offsetof(DaemonStatus, off_cpu_unclaimed)},
        {"MaxTargets", 'u', offsetof(DaemonStatus, max_targets)},
        {"MaxTargetsPerUser", 'u', offsetof(DaemonStatus, max_targets_per_user)},
        {"ExitedTargetRetentionUSec", 't', offsetof(DaemonStatus, exited_retention_usec)},
        {"MaxFunctionsPerTarget", 'u', offsetof(DaemonStatus, max_functions)},
        {"MaxStacksPerTarget", 'u', offsetof(DaemonStatus, max_stacks)},
        {"WindowSeconds", 'u', offsetof(DaemonStatus, window_seconds)},
        {"WindowMemory", 't', offsetof(DaemonStatus, window_memory)},
        {"SamplesInOtherFunctions", 't', offsetof(DaemonStatus, other_function_samples)},
        {"SamplesInOtherStacks", 't', offsetof(DaemonStatus, other_stack_samples)},
        {"TargetsAtLimit", 'u', offsetof(DaemonStatus, targets_at_limit)},
        {"SymbolCacheSize", 't', offsetof(DaemonStatus, symbol_cache_size)},
        {"SymbolCacheUsed", 't', offsetof(DaemonStatus, symbol_cache_used)},
        {"SymbolFilesSkipped", 't', offsetof(DaemonStatus, symbol_files_skipped)},
        {"SymbolFilesDamaged", 't', offsetof(DaemonStatus, symbol_files_damaged)},
        {"UnwindWalk", 's', offsetof(DaemonStatus, unwind_walk)},
        {"InlineExpansions", 't', offsetof(DaemonStatus, inline_expansions)},
        {"InlineAddresses", 't', offsetof(DaemonStatus, inline_addresses)},
        {"InlineFilesSize", 't', offsetof(DaemonStatus, inline_files_size)},
        {"UnwindTableSize", 't', offsetof(DaemonStatus, unwind_table_size)},
        {"UnwindTableUsed", 't', offsetof(DaemonStatus, unwind_table_used)},
        {"UnwindTablesLoaded", 'u', offsetof(DaemonStatus, unwind_tables_loaded)},
        {"UnwindTablesCompiled", 't', offsetof(DaemonStatus, unwind_tables_compiled)},
        {"UnwindTablesEvicted", 't', offsetof(DaemonStatus, unwind_tables_evicted)},
        {"UnwindTablesTooBig", 't', offsetof(DaemonStatus, unwind_tables_too_big)},
        {"UnwindTablesFailed", 't', offsetof(DaemonStatus, unwind_tables_failed)},
        {"UnwindFilesWithoutCFI", 't', offsetof(DaemonStatus, unwind_files_without_cfi)},
        {"UnwindCompileUSec", 't', offsetof(DaemonStatus, unwind_compile_usec)},
        {"UnwindMappingsDropped", 't', offsetof(DaemonStatus, unwind_mappings_dropped)},
        {"UnwindFilesPrefetched", 't', offsetof(DaemonStatus, unwind_files_prefetched)},
        {"UnwindAttachesUnfinished", 't', offsetof(DaemonStatus, unwind_attaches_unfinished)},
        {"PythonTargets", 'u', offsetof(DaemonStatus, python_targets)},
        {"PythonInterpreters", 't', offsetof(DaemonStatus, python_interpreters)},
        {"PythonNotInterpreters", 't', offsetof(DaemonStatus, python_not_interpreters)},
        {"PythonUnsupported", 't', offsetof(DaemonStatus, python_unsupported)},
        {"PythonPushFailed", 't', offsetof(DaemonStatus, python_push_failed)},
        {"PythonDetectUSec", 't', offsetof(DaemonStatus, python_detect_usec)},
        {"PythonUnsupportedVersion", 's', offsetof(DaemonStatus, python_unsupported_version)},
        {"PythonWalksComplete", 't', offsetof(DaemonStatus, python_walks_complete)},
        {"PythonWalksNoThreadState", 't', offsetof(DaemonStatus, python_walks_no_tstate)},
        {"PythonWalksBadFrame", 't', offsetof(DaemonStatus, python_walks_bad_frame)},
        {"PythonWalksFaulted", 't', offsetof(DaemonStatus, python_walks_faulted)},
        {"PythonWalksAtDepthLimit", 't', offsetof(DaemonStatus, python_walks_at_depth_limit)},
        {"PythonFramesWalked", 't', offsetof(DaemonStatus, python_frames_walked)},
        {"PythonFramesRecorded", 't', offsetof(DaemonStatus, python_frames_recorded)},
        {"PythonFramesDropped", 't', offsetof(DaemonStatus, python_frames_dropped)},
        {"PythonFramesUnknown", 't', offsetof(DaemonStatus, python_frames_unknown)},
        {"WalksComplete", 't', offsetof(DaemonStatus, walks_complete)},
        {"WalksEndedAtFramePointer", 't', offsetof(DaemonStatus, walks_end_fp)},
        {"WalksAtDepthLimit", 't', offsetof(DaemonStatus, walks_depth)},
        {"WalksFaulted", 't', offsetof(DaemonStatus, walks_fault)},
        {"WalksBad", 't', offsetof(DaemonStatus, walks_bad)},
        {"WalksFellBack", 't', offsetof(DaemonStatus, walks_fell_back)},
        {"WalksOutsideCFI", 't', offsetof(DaemonStatus, walks_no_row)},
        {"WalksBadRule", 't', offsetof(DaemonStatus, walks_bad_rule)},
        {"WalksUnknownPC", 't', offsetof(DaemonStatus, walks_unknown_pc)},
        {"WalksNoMappings", 't', offsetof(DaemonStatus, walks_no_mappings)},
        {"UnwindSelfCheck", 'u', offsetof(DaemonStatus, unwind_self_check)},
        {"UnwindSelfCheckAgreed", 't', offsetof(DaemonStatus, self_check_agreed)},
        {"UnwindSelfCheckDisagreed", 't', offsetof(DaemonStatus, self_check_disagreed)},
        {"UnwindSelfCheckUnchecked", 't', offsetof(DaemonStatus, self_check_unchecked)},
        {"UnwindSelfCheckLost", 't', offsetof(DaemonStatus, self_check_lost)},
        {"MembersRefused", 't', offsetof(DaemonStatus, members_refused)},
        {"MappingChanges", 't', offsetof(DaemonStatus, mapping_changes)},
        {"MappingChangesLost", 't', offsetof(DaemonStatus, mapping_changes_lost)},
        {"MappingChangesStale", 't', offsetof(DaemonStatus, mapping_changes_stale)},
        {"MappingChangesMissed", 't', offsetof(DaemonStatus, mapping_changes_missed)},
        {"SamplesWithStaleMappings", 't', offsetof(DaemonStatus, samples_stale_mappings)},
        {"PendingWalksCopied", 't', offsetof(DaemonStatus, pending_walks_copied)},
        {"PendingWalksFinished", 't', offsetof(DaemonStatus, pending_walks_finished)},
        {"PendingWalksUnfinished", 't', offsetof(DaemonStatus, pending_walks_unfinished)},
        {"PendingWalksOverRate", 't', offsetof(DaemonStatus, pending_walks_over_rate)},
        {"PendingWalksNoRoom", 't', offsetof(DaemonStatus, pending_walks_no_room)},
};

/* Reads the variant of one property into s; properties unknown to this client, or of another type than it
 * expects, are skipped so that a newer daemon stays readable. */
static int read_status_property(sd_bus_message *m, const char *name, DaemonStatus *s)
{
        const char *contents;
        char type[2] = {};
        void *p;
        int r;

        if (strcmp(name, "Memory") == 0) {
                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                if (contents && strcmp(contents, "a{st}") == 0)
                        return bus_read_status_memory(m, &s->memory);
        }
        for (size_t i = 0; i < ELEMENTSOF(status_properties); i++) {
                if (strcmp(name, status_properties[i].name) != 0)
                        continue;

                type[0] = status_properties[i].type;
                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;
                if (!contents || strcmp(contents, type) != 0)
                        break;

                p = (uint8_t *)s + status_properties[i].offset;
                r = sd_bus_message_enter_container(m, 'v', type);
                if (r < 0)
                        return r;
                if (type[0] == 's') {
                        const char *v;
                        char *copy;

                        r = sd_bus_message_read_basic(m, 's', &v);
                        if (r < 0)
                                return r;
                        copy = strdup(v);
                        if (!copy)
                                return -ENOMEM;
                        free(*(char **)p);
                        *(char **)p = copy;
                } else {
                        r = sd_bus_message_read_basic(m, type[0], p);
                        if (r < 0)
                                return r;
                }
                return sd_bus_message_exit_container(m);
        }

        return sd_bus_message_skip(m, "v");
}

int bus_get_status(sd_bus *bus, sd_bus_error *error, DaemonStatus **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(daemon_status_freep) DaemonStatus *s = NULL;
        int r;

        r = sd_bus_call_method(bus, VPROF_BUS_NAME, vprof_bus_object(), "org.freedesktop.DBus.Properties",
                               "GetAll", error, &reply, "s", VPROF_BUS_INTERFACE);
        if (r < 0)
                return r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;

        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return bus_bad_reply(error, "GetAll", r);
        for (;;) {
                const char *name;

                r = sd_bus_message_enter_container(reply, 'e', "sv");
                if (r < 0)
                        return bus_bad_reply(error, "GetAll", r);
                if (r == 0)
                        break;
                r = sd_bus_message_read_basic(reply, 's', &name);
                if (r < 0)
                        return bus_bad_reply(error, "GetAll", r);
                r = read_status_property(reply, name, s);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return bus_bad_reply(error, "GetAll", r);
                r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        return bus_bad_reply(error, "GetAll", r);
        }
        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return bus_bad_reply(error, "GetAll", r);

        *ret = TAKE_PTR(s);
        return 0;
}

int bus_get_frequency(sd_bus *bus, sd_bus_error *error, uint32_t *ret)
{
        uint32_t frequency;
        int r;

        r = sd_bus_get_property_trivial(bus, VPROF_BUS_NAME, vprof_bus_object(), VPROF_BUS_INTERFACE,
                                        "Frequency", error, 'u', &frequency);
        if (r < 0)
                return r;
        *ret = frequency;
        return 0;
}

static bool error_name_has_prefix(const sd_bus_error *error, const char *prefix)
{
        return sd_bus_error_is_set(error) && strncmp(error->name, prefix, strlen(prefix)) == 0;
}

static bool errno_is_disconnect(int r)
{
        return r == -ECONNRESET || r == -ENOTCONN || r == -ECONNREFUSED || r == -EPIPE;
}

int log_bus_error(int r, const sd_bus_error *error, const char *method)
{
        _cleanup_free_ char *message = NULL;

        if (r >= 0)
                r = -EIO;

        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER))
                return log_error_errno(
                        r, "vprofd is not running: %s is neither on the system bus nor activatable",
                        VPROF_BUS_NAME);
        /* sd-bus reports its local failures as System.Error.E* with strerror() as the message: say it with
         * the errno. */
        if (!sd_bus_error_is_set(error) || error_name_has_prefix(error, "System.Error.")) {
                if (errno_is_disconnect(r))
                        return log_error_errno(r, "Connection to the system bus failed: %m");
                return log_error_errno(r, "Failed to call %s: %m", method);
        }

        /* The daemon's messages are one line by contract; make sure of it for everyone else's. */
        message = strdup(error->message ?: error->name);
        if (!message)
                return log_error_errno(-ENOMEM, "Failed to call %s: %m", method);
        for (char *p = message; *p; p++)
                if (*p == '\n' || *p == '\r')
                        *p = ' ';

        if (error_name_has_prefix(error, "org.freedesktop.DBus.Error.Spawn."))
                return log_error_errno(r, "Failed to start vprofd: %s", message);
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT,
                                   "org.freedesktop.DBus.Error.TimedOut"))
                return log_error_errno(r, "vprofd did not reply to %s: %s", method, message);
        /* The daemon's own errors (and our parse errors) say everything in their message, and so do a bad
         * argument and a refusal, whether the daemon's or the bus policy's (which names the method). */
        if (error_name_has_prefix(error, "org.vprof.") ||
            sd_bus_error_has_names(error, SD_BUS_ERROR_INVALID_ARGS, SD_BUS_ERROR_ACCESS_DENIED))
                return log_error_errno(r, "%s", message);
        /* sd-bus's own errors (an unknown method, say) need the method to make sense. */
        return log_error_errno(r, "Failed to call %s: %s", method, message);
}
