/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "bus-client-memory.h"
#include "bus-names.h"
#include "macros.h"

/* Calls to org.vprof.Profiler1 and the decoding of their replies: here the connection, the targets, the
 * daemon's status and the errors; the tables in bus-client-tables.h. Every call returns a negative errno and
 * fills *error with the D-Bus error when there is one; log_bus_error() turns both into the one line the user
 * sees. Nothing here prints on its own. Client and daemon ship together: there is no fallback for the methods of
 * an older daemon. */

typedef struct TargetInfo {
        uint32_t pid;
        char *command;
        char *state;
        uint64_t samples;
        uint64_t attached_usec;
        uint64_t flags; /* VPROF_ATTACH_* (bus-names.h) */
        uint32_t ns_pid; /* the PID in the target's own PID namespace */
        uint32_t frequency; /* of its tables' sample counts */
        char *group;        /* the spec of its group, "" or NULL for none */
} TargetInfo;

typedef struct TargetList {
        TargetInfo *targets;
        size_t n_targets;
} TargetList;

TargetList *target_list_free(TargetList *l);
DEFINE_TRIVIAL_CLEANUP_FUNC(TargetList *, target_list_free);

typedef struct DaemonStatus {
        char *version;
        char *event;
        char *event_reason;
        uint32_t frequency;
        uint32_t cpus;
        uint32_t targets;
        uint64_t samples_seen;
        uint64_t samples_kept;
        uint64_t samples_discarded;
        uint64_t samples_lost;
        uint64_t stack_errors;
        uint64_t stacks_truncated;
        uint64_t samples_unclaimed;
        int off_cpu_default; /* a D-Bus boolean */
        uint64_t off_cpu_blocked;
        uint64_t off_cpu_preempted;
        uint64_t off_cpu_lost;
        uint64_t off_cpu_unclaimed;
        uint32_t max_targets;
        uint32_t max_targets_per_user; /* 0: no limit per user */
        uint64_t exited_retention_usec; /* 0: until detached */
        uint32_t max_functions;
        uint32_t max_stacks;
        uint32_t window_seconds; /* 0: no time windows */
        uint64_t window_memory;  /* bytes, all targets' windows */
        uint64_t other_function_samples;
        uint64_t other_stack_samples;
        uint32_t targets_at_limit;
        uint64_t symbol_cache_size;
        uint64_t symbol_cache_used;
        uint64_t symbol_files_skipped;
        uint64_t symbol_files_damaged;
        uint64_t inline_expansions; /* new user addresses looked up for inlined functions */
        uint64_t inline_addresses;  /* of those, in inlined code */
        uint64_t inline_files_size; /* bytes of the files whose DWARF is held open for them */
        /* The unwind tables (0 bytes: the kernel's frame-pointer walk) and how the BPF walks ended. */
        char *unwind_walk; /* "unwind tables", or "frame pointers (REASON)" */
        uint64_t unwind_table_size;
        uint64_t unwind_table_used;
        uint32_t unwind_tables_loaded;
        uint64_t unwind_tables_compiled;
        uint64_t unwind_tables_evicted;
        uint64_t unwind_tables_too_big;
        uint64_t unwind_tables_failed;
        uint64_t unwind_files_without_cfi;
        uint64_t unwind_compile_usec;
        uint64_t unwind_mappings_dropped;
        uint64_t unwind_files_prefetched;
        uint64_t unwind_attaches_unfinished;
        /* CPython interpreters (issue 26): targets whose Python frames the walk may follow, files recognized,
         * files named like one that are none, targets of a version not walked (the last one's version). */
        uint32_t python_targets;
        uint64_t python_interpreters;
        uint64_t python_not_interpreters;
        uint64_t python_unsupported;
        uint64_t python_push_failed;
        uint64_t python_detect_usec;
        char *python_unsupported_version;
        uint64_t python_walks_complete;
        uint64_t python_walks_no_tstate;
        uint64_t python_walks_bad_frame;
        uint64_t python_walks_faulted;
        uint64_t python_walks_at_depth_limit;
        uint64_t python_frames_walked;
        uint64_t python_frames_recorded;
        uint64_t python_frames_dropped;
        uint64_t python_frames_unknown;
        uint64_t walks_complete;
        uint64_t walks_end_fp;
        uint64_t walks_depth;
        uint64_t walks_fault;
        uint64_t walks_bad;
        uint64_t walks_fell_back;
        uint64_t walks_no_row;
        uint64_t walks_bad_rule;
        uint64_t walks_unknown_pc;
        uint64_t walks_no_mappings;
        uint32_t unwind_self_check; /* 1 in N samples; 0: off */
        uint64_t self_check_agreed;
        uint64_t self_check_disagreed;
        uint64_t self_check_unchecked;
        uint64_t self_check_lost;
        uint64_t members_refused; /* processes that groups could not take in */
        uint64_t mapping_changes; /* changes of targets' executable mappings, in order with the samples */
        uint64_t mapping_changes_lost;
        uint64_t mapping_changes_stale;
        uint64_t mapping_changes_missed;
        uint64_t samples_stale_mappings;
        /* samples whose walk fell back for a table on its way: sent with their stack, finished by the daemon or
         * counted as walked; sent alone past the rate bound, or for want of room in the ring buffer */
        uint64_t pending_walks_copied;
        uint64_t pending_walks_finished;
        uint64_t pending_walks_unfinished;
        uint64_t pending_walks_over_rate;
        uint64_t pending_walks_no_room;
        StatusMemory memory;
} DaemonStatus;

DaemonStatus *daemon_status_free(DaemonStatus *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(DaemonStatus *, daemon_status_free);

/* Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured) and logs the failure itself, naming the bus.
 */
int bus_connect_system(sd_bus **ret);

/* Attach(target, flags), VPROF_ATTACH_* flags; target as target-spec.h names it. */
int bus_attach(sd_bus *bus, const char *target, uint64_t flags, sd_bus_error *error);
/* Detach or Reset, the methods whose only argument is the target. */
int bus_call_target_method(sd_bus *bus, const char *method, const char *target, sd_bus_error *error);

/* ListTargets: each target's PID and a dictionary; keys this client does not know are skipped, and known keys of
 * another type are refused as a bad reply. */
int bus_list_targets(sd_bus *bus, sd_bus_error *error, TargetList **ret);

int bus_get_status(sd_bus *bus, sd_bus_error *error, DaemonStatus **ret);
/* The Frequency property: samples per second, the unit of the elapsed and application values. */
int bus_get_frequency(sd_bus *bus, sd_bus_error *error, uint32_t *ret);

/* A dictionary value of type s into *ret, which it replaces (freeing the old one). */
int bus_read_variant_string(sd_bus_message *m, char **ret);

/* Reads an a{sv} at the message's position: fn reads each entry's variant after its key (or skips it), and
 * returns a negative errno to stop. */
typedef int (*bus_dict_entry_fn)(sd_bus_message *m, const char *key, void *userdata);
int bus_read_dict(sd_bus_message *m, bus_dict_entry_fn fn, void *userdata);

/* Reads a reply's optional last argument, an au of indices below n (absent from an older vprofd: 0), calling
 * mark for each; -EBADMSG for an index out of range. */
typedef void (*bus_index_fn)(uint32_t index, void *userdata);
int bus_read_trailing_indices(sd_bus_message *m, size_t n, bus_index_fn mark, void *userdata);

/* Sets *error to say that the reply to method could not be parsed (r, negative), and returns r. */
int bus_bad_reply(sd_bus_error *error, const char *method, int r);

/* Logs the one error line for a failed call of method and returns r (negative). */
int log_bus_error(int r, const sd_bus_error *error, const char *method);
