/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "authz.h"
#include "debuginfod.h"
#include "drain.h"
#include "hashmap.h"
#include "manager-slots.h"
#include "python-procs.h"
#include "query-cache.h"
#include "query-queue.h"
#include "sampler.h"
#include "symbolizer.h"
#include "target.h"
#include "target-group.h"
#include "unwind-tables.h"

/* Accounting as the bus shows it. Off-CPU intervals: blocked and preempted ones were counted in a table or,
 * for a detached target, as unclaimed; lost ones were not. */
typedef struct ManagerStats {
        uint64_t seen, kept, discarded, lost, stack_errors, truncated, unclaimed;
        uint64_t off_cpu_blocked, off_cpu_preempted, off_cpu_lost, off_cpu_unclaimed;
        /* Over the attached targets: samples with a function, or a stack, past the per-target limits, and how
         * many targets reached either limit. */
        uint64_t other_function_samples, other_stack_samples;
        uint32_t targets_at_limit;
        /* Processes that groups could not take in (manager-groups.h), and forks of targets that follow their
         * children lost for want of room in the ring buffer. */
        uint64_t members_refused;
        /* How the BPF program's walks of user stacks by the unwind tables ended (each in one of the first five)
         * and what they met on the way (docs/UNWINDING.md); all 0 with UnwindTableMiB=0. */
        uint64_t walks_complete, walks_end_fp, walks_depth, walks_fault, walks_bad;
        uint64_t walks_fell_back, walks_no_row, walks_bad_rule, walks_unknown_pc, walks_no_mappings;
        UnwindTablesStats unwind;
        PythonProcsStats python; /* the targets' CPython interpreters (python-procs.h) */
        /* How the BPF walks of Python frames ended (bpf/python.bpf.h), and the frames they followed. */
        uint64_t python_walks_complete, python_walks_no_tstate, python_walks_bad_frame, python_walks_faulted;
        uint64_t python_walks_at_depth_limit, python_frames_walked;
        UnwindSelfCheckStats self_check; /* all 0 without UnwindSelfCheck= */
        /* Changes of targets' executable mappings (daemon/maps-change.h): sent by the BPF program, lost for want
         * of room in the ring buffer, read by the daemon after the process had moved on, found missing from a
         * sample's generation; and samples named with mappings later than theirs. */
        uint64_t mapping_changes, mapping_changes_lost, mapping_changes_stale, mapping_changes_missed;
        uint64_t samples_stale_mappings;
        /* Samples whose walk fell back for a table on its way (unwind-pending.h): sent with their stack, the walk
         * finished by the daemon, counted as the BPF program walked them; sent alone past the rate bound or for want
         * of room for the copy. */
        uint64_t pending_walks_copied, pending_walks_finished, pending_walks_unfinished;
        uint64_t pending_walks_over_rate, pending_walks_no_room;
} ManagerStats;

/* Whoever keeps the tables in files (the state store, state-store.h) hears of the targets' changes through
 * these, without the manager knowing it; each may be NULL. */
typedef struct ManagerObserver {
        /* Targets came, went or exited: save soon; the journal runs while some target runs. */
        void (*targets_changed)(void *userdata);
        /* The tables of t were cleared, or t is being detached: the journal says so at once. */
        void (*target_reset)(void *userdata, const Target *t);
        void (*target_detached)(void *userdata, const Target *t);
        /* A second closed (manager_close_second()): delta_closed for each target whose ended delta holds
         * something (t->delta, before it begins anew: the journal's record), then second_closed once. */
        void (*delta_closed)(void *userdata, const Target *t);
        void (*second_closed)(void *userdata);
        void *userdata;
} ManagerObserver;

/* All daemon state: one per process, created and freed in run(). */
typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        QueryCache *query_cache; /* the windowed views counted lately (query-cache.h) */
        QueryQueue *queries; /* the queries waiting their turn (query-queue.h); NULL: run as they come (tests) */
        sd_event_source *wakeup_source;
        sd_event_source *drain_timer;
        sd_event_source *close_timer; /* manager_close_second(), while some target runs */

        SamplerConfig config;
        Sampler *sampler;
        UnwindTables *unwind_tables; /* NULL: UnwindTableMiB=0, or not sampling */
        PythonProcs *python_procs;   /* NULL: not sampling */
        Symbolizer *symbolizer;
        Debuginfod *debuginfod; /* NULL: DebuginfodURLs= is empty, or libdebuginfod is missing */
        Hashmap *targets; /* pid -> Target */
        /* pid -> Target: the running ones of targets, so that what concerns them only (the slots' check, the
         * unwind tables' mappings, the timers) costs as many as run, not as many as a storm's group left. */
        Hashmap *running;
        Hashmap *groups;  /* spec -> TargetGroup (target-group.h): units, cgroups, processes with children */
        Hashmap *groups_by_id; /* TargetGroup.id -> TargetGroup: the group a record carries */
        uint32_t last_group_id;
        char *cgroup_mount;    /* the cgroup2 mount point, found at the first cgroup attached; NULL before */
        /* Processes of cgroups refused a slot, by PID: not tried again until a slot frees (manager-groups.h). */
        Hashmap *refused;
        uint32_t slots_generation; /* moves when a running target leaves: a slot may be free */
        uint64_t members_refused;  /* processes that groups could not take in (manager-groups.h) */
        /* Attach calls waiting for systemd's answer: bus-groups.c's, freed by it (bus_done(), bus.h) */
        Hashmap *pending_attaches;
        Drain drain;      /* the ring buffer's records into the targets' tables */
        Authz authz; /* the polkit questions out and the readers' group (authz.h) */

        unsigned n_off_cpu_targets; /* running targets that track off-CPU time */
        unsigned n_children_targets; /* running targets that follow their children (the fork program) */

        ManagerSlots slots; /* MaxTargets=, MaxTargetsPerUser=, ExitedTargetRetentionSec= (manager-slots.h) */
        uint64_t fd_limit; /* RLIMIT_NOFILE's soft limit, as fd-limit.h found it; 0: not checked */
        int pidfd_bound;   /* a pidfd at or above it is one too many (fd-limit.h); 0: none */

        /* Per target; 0 for none. */
        uint32_t max_functions;
        uint32_t max_stacks;
        bool keep_deltas;  /* targets keep a ProfileDelta for the state's journal */
        uint64_t journal_usec; /* the journal's interval: how often seconds close without windows; 0: none */
        uint32_t window_seconds; /* per-second buckets per target for time windows; 0: no windows */
        size_t window_bytes;     /* their bound per target */
        ManagerObserver observer; /* the saved tables (state-store.h); none without a state directory */

        /* Idle exit (0: never): the timer runs while no target is attached, and restarts on every call. */
        uint64_t exit_idle_usec;
        sd_event_source *idle_timer;
        sd_bus_slot *idle_filter_slot;
        sd_bus_slot *release_slot; /* the ReleaseName call, while the name is being released */
        bool exiting;              /* the name is released or being released: no new targets */

        uint64_t self_check_logged; /* the unwind self-check's checks when its counters were last logged */
        /* The symbolizer's counts that the log told already: each is said once, when it first moves. */
        bool logged_cache_full, logged_kptr_restrict, logged_damaged_files;
        /* The BPF maps' pages as /proc/self/smaps last had them (memory.c): read at most once a second, as
         * walking smaps costs a status call more than the rest of it under a storm. */
        uint64_t bpf_maps_bytes, bpf_maps_usec;
        uint32_t bpf_maps_n;
        /* The counters read for the call being answered (see bus.c), so that GetAll's add up. */
        ManagerStats stats_snapshot;
        sd_bus_message *stats_call;
} Manager;


int manager_new(const SamplerConfig *config, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Load BPF, open the events, hook the ring buffer into the event loop. Until then (the unit tests never do)
 * targets are attached, queried and detached, but nothing samples them and the counters stay 0. */
int manager_start_sampling(Manager *m);

/* Exit after usec (> 0) with no target attached and no call: STOPPING=1, release the bus name, answer the calls
 * that came before the release, exit the event loop with 0. Needs the bus (after bus_setup()). */
int manager_enable_idle_exit(Manager *m, uint64_t usec);

/* Send the service manager (NOTIFY_SOCKET, if set) the status line: event, frequency and targets, after
 * "READY=1\n" or the like when state is not NULL. */
void manager_notify_status(Manager *m, const char *state);

/* Bring every table up to date: drain the ring buffer. Called before answering any query. */
void manager_sync(Manager *m);

/* The one place where a second closes: drain, then each target's delta ends, goes to the observer (the journal)
 * and into the target's window as its newest bucket, and begins anew. A timer calls it every second with
 * windows (else every journal interval, with a journal; else never) while some target runs; a snapshot calls it
 * too, so that the journal continues the snapshot exactly. */
void manager_close_second(Manager *m);
/* The interval of that timer, 0 for none: a second with windows, else the journal's. */
uint64_t manager_close_interval(const Manager *m);
/* Whether the timer runs: the next close comes within its interval. */
bool manager_closing(const Manager *m);
/* Bytes held by every target's window (WindowMemory). */
uint64_t manager_window_memory(Manager *m);

/* What the targets take from the manager's settings (target.h). */
TargetContext manager_target_context(const Manager *m);

/* t, new, joins the targets as a member of g (NULL: alone), running or exited: its exit watched, the BPF programs
 * it needs, a slot (manager_slots_check() said yes; exited targets give way), the BPF maps. On failure nothing
 * changed, t is still the caller's. Does not call manager_targets_changed(). */
int manager_add_target(Manager *m, Target *t, TargetGroup *g);
/* Keep t, an exited target of saved tables (target_new_exited()); -E2BIG at the target limit, -EEXIST, -ETIME
 * when it exited longer ago than the retention time. */
int manager_add_exited(Manager *m, Target *t);
/* Take t out of the targets and free it, out of the sampler first when it runs; then call
 * manager_targets_changed(). */
int manager_remove_target(Manager *m, Target *t);
/* After targets came, went or exited: the timers, the service manager's status line, a save. */
void manager_targets_changed(Manager *m);
/* The same after a group was attached or its members came or exited, without asking for a save. */
void manager_members_changed(Manager *m);
Target *manager_get_target(Manager *m, pid_t pid);

/* The group of that spec (target-group.h), NULL when none is attached. */
TargetGroup *manager_get_group(Manager *m, const char *spec);
/* The members of g, running and exited, in no particular order; the caller frees *ret (not the targets). */
int manager_group_members(Manager *m, const TargetGroup *g, Target ***ret, size_t *ret_n);
int manager_get_stats(Manager *m, ManagerStats *ret);
/* The unwind self-check's counters (UnwindSelfCheck=, unwind-self-check.h) in one line at info level, as they
 * stand (no drain), when the self-check is on: every 1000 checks
 * (manager_sync()) and when vprofd exits. */
void manager_log_unwind_self_check(Manager *m);
