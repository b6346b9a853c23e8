/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "bus-names.h"
#include "log.h"
#include "manager.h"
#include "time-util.h"

/* The ring buffer wakes us when a quarter full; this timer drains what trickles in below that, so that tables
 * are never more than this far behind even when nobody queries. */
#define DRAIN_INTERVAL_USEC (200 * USEC_PER_MSEC)
/* The unwind self-check's counters go to the log every so many checks. */
#define SELF_CHECK_LOG_EVERY 1000

static void slots_remove(void *userdata, Target *t)
{
        (void)manager_remove_target(userdata, t); /* exited: out of the sampler already, nothing can fail */
}

static void slots_expired(void *userdata)
{
        manager_targets_changed(userdata);
}

int manager_new(const SamplerConfig *config, Manager **ret)
{
        _cleanup_(manager_freep) Manager *m = calloc(1, sizeof(*m));
        int r;

        if (!m)
                return -ENOMEM;
        m->config = *config;
        authz_init(&m->authz);
        m->targets = hashmap_new(&uint64_hash_ops);
        m->running = hashmap_new(&uint64_hash_ops);
        m->groups = hashmap_new(&string_hash_ops);
        m->groups_by_id = hashmap_new(&uint64_hash_ops);
        m->refused = hashmap_new(&uint64_hash_ops);
        if (!m->targets || !m->running || !m->groups || !m->groups_by_id || !m->refused)
                return -ENOMEM;
        r = symbolizer_new(&m->symbolizer);
        if (r < 0)
                return r;
        r = query_cache_new(&m->query_cache);
        if (r < 0)
                return r;
        /* Records of no target stay unclaimed until the groups take their processes in (manager-groups.h). */
        m->drain = (Drain){
                .targets = m->targets,
                .symbolizer = m->symbolizer,
                .python_interpreter_frames = config->python_interpreter_frames,
        };
        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        m->slots = (ManagerSlots){
                .targets = m->targets,
                .running = m->running,
                .event = m->event,
                .max_targets = config->max_targets,
                .remove = slots_remove,
                .expired = slots_expired,
                .userdata = m,
        };
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m)
{
        TargetGroup *g;
        Target *t;

        if (!m)
                return NULL;
        /* First: its worker hands debug files to the symbolizer and the targets. */
        debuginfod_free(m->debuginfod);
        query_cache_free(m->query_cache); /* its views were counted of the targets' windows */
        HASHMAP_FOREACH(t, m->targets)
                target_free(t);
        hashmap_free(m->targets);
        hashmap_free(m->running);
        HASHMAP_FOREACH(g, m->groups)
                target_group_free(g);
        hashmap_free(m->groups);
        hashmap_free(m->groups_by_id);
        hashmap_free(m->refused);
        drain_done(&m->drain);
        free(m->cgroup_mount);
        /* Before the bus: each holds a call. The Attach calls waiting for systemd are bus-groups.c's, dropped by
         * bus_done() before. */
        authz_done(&m->authz);
        sd_bus_message_unref(m->stats_call);
        sd_event_source_disable_unref(m->wakeup_source);
        sd_event_source_disable_unref(m->drain_timer);
        sd_event_source_disable_unref(m->close_timer);
        sd_event_source_disable_unref(m->idle_timer);
        manager_slots_done(&m->slots);
        sd_bus_slot_unref(m->idle_filter_slot);
        sd_bus_slot_unref(m->release_slot);
        unwind_tables_free(m->unwind_tables);
        python_procs_free(m->python_procs);
        sampler_free(m->sampler);
        symbolizer_free(m->symbolizer);
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}

static void on_unwind(void *userdata, Target *t, uint64_t addr, bool unknown_pc)
{
        unwind_tables_note(userdata, t, addr, unknown_pc);
}

static int on_record(void *userdata, void *data, size_t size)
{
        drain_record(userdata, data, size);
        return 0;
}

/* The context-switch program runs while some running target wants off-CPU time. */
static int off_cpu_targets_changed(Manager *m, int delta)
{
        int r;

        m->n_off_cpu_targets += delta;
        r = m->sampler ? sampler_track_off_cpu(m->sampler, m->n_off_cpu_targets > 0) : 0;
        if (r < 0)
                m->n_off_cpu_targets -= delta;
        return r;
}

/* The fork program runs while some running target follows its children. */
static int children_targets_changed(Manager *m, int delta)
{
        int r;

        m->n_children_targets += delta;
        r = m->sampler ? sampler_follow_forks(m->sampler, m->n_children_targets > 0) : 0;
        if (r < 0)
                m->n_children_targets -= delta;
        return r;
}

/* The target stops being sampled: out of the BPF map, and off the context-switch and fork programs. */
static int target_leave_sampler(Manager *m, Target *t)
{
        int r;

        r = m->sampler ? sampler_remove_target(m->sampler, (uint32_t)t->pid) : 0;
        if (r < 0 && r != -ENOENT)
                return r;
        hashmap_remove(m->running, UINT64_TO_PTR((uint64_t)t->pid));
        unwind_tables_forget(m->unwind_tables, t->pid);
        python_procs_forget(m->python_procs, t->pid);
        /* The last one gone: the files held open for inlined functions (tens of MB for a large debug file)
         * go too, and a daemon left attached to nothing holds no file. */
        if (hashmap_size(m->running) == 0)
                drain_release_dwarf(&m->drain);
        if (t->flags & VPROF_TARGET_OFF_CPU)
                (void)off_cpu_targets_changed(m, -1);
        if (t->flags & VPROF_TARGET_CHILDREN)
                (void)children_targets_changed(m, -1);
        /* A slot may be free: processes of cgroups refused one may try again. */
        m->slots_generation++;
        return 0;
}

/* The symbolizer counts (library code logs at debug only); the daemon says once what its operator should
 * know, when a count first moves. */
static void log_symbolizer_counts(Manager *m)
{
        if (!m->logged_cache_full && symbolizer_skipped_files(m->symbolizer) > 0) {
                log_warning("Symbol cache full (%zu KiB in use by attached processes): further files stay "
                            "without symbols; raise SymbolCacheMiB.",
                            symbolizer_memory(m->symbolizer) >> 10);
                m->logged_cache_full = true;
        }
        if (!m->logged_kptr_restrict && symbolizer_kallsyms_restricted_reads(m->symbolizer) > 0) {
                log_notice("/proc/kallsyms hides kernel addresses (kptr_restrict): kernel frames are named "
                           "[kernel].");
                m->logged_kptr_restrict = true;
        }
        if (!m->logged_damaged_files && symbolizer_damaged_files(m->symbolizer) > 0) {
                log_warning("A file changed while it was read for symbols (truncated or rewritten in "
                            "place): its frames are named by offset. The property SymbolFilesDamaged counts "
                            "such files.");
                m->logged_damaged_files = true;
        }
}

TargetContext manager_target_context(const Manager *m)
{
        return (TargetContext){
                .symbolizer = m->symbolizer,
                .frequency = m->config.frequency,
                .max_functions = m->max_functions,
                .max_stacks = m->max_stacks,
                .keep_deltas = m->keep_deltas,
                .window_seconds = m->window_seconds,
                .window_bytes = m->window_bytes,
                .pidfd_bound = m->pidfd_bound,
        };
}

void manager_sync(Manager *m)
{
        int r;

        if (!m->sampler)
                return;
        r = sampler_drain(m->sampler);
        if (r < 0)
                log_warning_errno(r, "Failed to drain the ring buffer: %m");
        /* The processes of groups that the read found, made targets now that it returned. */
        drain_members(&m->drain);
        /* New targets, maps read anew (dlopen(), exec()), tables loaded: the BPF walk's mappings follow. */
        unwind_tables_sync(m->unwind_tables);
        python_procs_sync(m->python_procs);
        drain_release_idle_dwarf(&m->drain, now_usec(CLOCK_MONOTONIC));
        log_symbolizer_counts(m);
        if (m->drain.self_check.stats.checked >= m->self_check_logged + SELF_CHECK_LOG_EVERY) {
                m->self_check_logged = m->drain.self_check.stats.checked;
                manager_log_unwind_self_check(m);
        }
}

static int on_wakeup(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_, void *userdata)
{
        manager_sync(userdata);
        return 0;
}

static bool any_running_target(Manager *m)
{
        return hashmap_size(m->running) > 0;
}

static bool any_cgroup_group(Manager *m)
{
        TargetGroup *g;

        HASHMAP_FOREACH(g, m->groups)
                if (target_group_has_cgroup(g))
                        return true;
        return false;
}

/* The timer only runs while some target runs, or a cgroup is attached whose processes become targets from their
 * records: an idle daemon does not wake up. */
static void update_drain_timer(Manager *m)
{
        if (m->drain_timer)
                (void)sd_event_source_set_enabled(m->drain_timer, any_running_target(m) || any_cgroup_group(m)
                                                                          ? SD_EVENT_ON
                                                                          : SD_EVENT_OFF);
}

/* The programs that follow the targets' mappings run while some target runs: they run on every system call. A
 * failure leaves the names to the maps read on a miss, as without them. */
static void update_maps_programs(Manager *m)
{
        if (m->sampler)
                (void)sampler_follow_maps(m->sampler, any_running_target(m));
}

uint64_t manager_close_interval(const Manager *m)
{
        return m->window_seconds > 0 ? USEC_PER_SEC : m->journal_usec;
}

bool manager_closing(const Manager *m)
{
        return m->close_timer && sd_event_source_get_enabled(m->close_timer, NULL) > 0;
}

void manager_close_second(Manager *m)
{
        uint64_t now;
        Target *t;
        int r;

        manager_sync(m);
        now = now_usec(CLOCK_REALTIME);
        HASHMAP_FOREACH(t, m->targets) {
                if (!t->delta)
                        continue;
                profile_delta_end(t->delta, t->profile);
                if (profile_delta_lost(t->delta) > 0)
                        log_warning("The second just closed of %d (%s) misses %" PRIu64 " samples in its journal "
                                    "record and its window, for want of memory (its tables have them).",
                                    (int)t->pid, t->info.comm, profile_delta_lost(t->delta));
                if (!profile_delta_empty(t->delta) && m->observer.delta_closed)
                        m->observer.delta_closed(m->observer.userdata, t);
                r = target_close_second(t, now);
                if (r < 0)
                        log_debug_errno(r, "The window of %d misses a second: %m", (int)t->pid);
        }
        if (m->observer.second_closed)
                m->observer.second_closed(m->observer.userdata);
}

uint64_t manager_window_memory(Manager *m)
{
        uint64_t bytes = 0;
        Target *t;

        HASHMAP_FOREACH(t, m->targets)
                if (t->window)
                        bytes += profile_window_bytes(t->window);
        return bytes;
}

/* Runs while some target runs, and once more after the last one exits, for its last samples. */
static int on_close_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        Manager *m = userdata;

        manager_close_second(m);
        if (!any_running_target(m))
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        /* From the time it was due, not from now: no drift, a bucket every second. */
        return sd_event_source_set_time(s, usec + manager_close_interval(m));
}

static void update_close_timer(Manager *m)
{
        uint64_t interval = manager_close_interval(m), now;
        int r;

        if (interval == 0 || manager_closing(m) || !any_running_target(m) ||
            sd_event_now(m->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (!m->close_timer) {
                /* Within a millisecond of the second: the buckets are a second long, and a window of N
                 * seconds spans N seconds, to the time the loop takes to get to the timer. */
                r = sd_event_add_time(m->event, &m->close_timer, CLOCK_MONOTONIC, now + interval, USEC_PER_MSEC,
                                      on_close_timer, m);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->close_timer, SD_EVENT_ON);
        } else {
                r = sd_event_source_set_time(m->close_timer, now + interval);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->close_timer, SD_EVENT_ON);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to start the timer that closes the seconds of the windows and the "
                                  "journal: %m");
}

void manager_notify_status(Manager *m, const char *state)
{
        unsigned running = hashmap_size(m->running);
        int r;

        if (!m->sampler)
                return;
        r = sd_notifyf(false, "%sSTATUS=Sampling with %s at %u Hz on %u CPUs; %zu target%s (%u running).",
                       state ?: "", sampler_event_to_string(sampler_event(m->sampler)), m->config.frequency,
                       sampler_n_cpus(m->sampler), hashmap_size(m->targets),
                       hashmap_size(m->targets) == 1 ? "" : "s", running);
        if (r < 0)
                log_debug_errno(r, "Failed to notify the service manager: %m");
}

/* The idle timer runs, for the whole idle time, from the moment the last target goes; off while any target is
 * attached. Exited targets count: their tables would be lost. */
static void update_idle_timer(Manager *m)
{
        int r;

        if (!m->idle_timer || m->exiting)
                return;
        /* A group without a member yet is attached all the same. */
        if (hashmap_size(m->targets) > 0 || hashmap_size(m->groups) > 0)
                r = sd_event_source_set_enabled(m->idle_timer, SD_EVENT_OFF);
        else if (sd_event_source_get_enabled(m->idle_timer, NULL) > 0)
                return; /* already counting */
        else {
                r = sd_event_source_set_time_relative(m->idle_timer, m->exit_idle_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->idle_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0)
                log_warning_errno(r, "Failed to update the idle timer: %m");
}

static int on_name_released(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error _unused_)
{
        Manager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        m->release_slot = sd_bus_slot_unref(m->release_slot);
        /* The bus sent us every call addressed to the name before this reply, and we have answered them (the
         * connection dispatches in order; the queries still queued are answered now); later calls go to the next
         * instance, started by bus activation. */
        query_queue_flush(m->queries);
        if (e)
                log_warning("Failed to release %s: %s", VPROF_BUS_NAME, e->message);
        else
                log_info("Released %s.", VPROF_BUS_NAME);
        return sd_event_exit(m->event, 0);
}

static int on_idle_timer(sd_event_source *s, uint64_t usec _unused_, void *userdata)
{
        Manager *m = userdata;
        int r;

        /* A call waiting for polkit or systemd is not idle: wait another period. */
        if (authz_pending(&m->authz) || hashmap_size(m->pending_attaches) > 0) {
                r = sd_event_source_set_time_relative(s, m->exit_idle_usec);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                return r;
        }
        log_info("No target and no call for %" PRIu64 " s: releasing %s and exiting.",
                 m->exit_idle_usec / USEC_PER_SEC, VPROF_BUS_NAME);
        m->exiting = true;
        /* STOPPING=1 first: from now on systemd queues a start request (bus activation) until we are gone,
         * instead of taking us for the running instance that will own the name. */
        (void)sd_notifyf(false, "STOPPING=1\nSTATUS=Exiting after %" PRIu64 " s without targets or calls.",
                         m->exit_idle_usec / USEC_PER_SEC);
        r = sd_bus_release_name_async(m->bus, &m->release_slot, VPROF_BUS_NAME, on_name_released, m);
        if (r < 0) {
                log_warning_errno(r, "Failed to release %s: %m", VPROF_BUS_NAME);
                return sd_event_exit(m->event, 0);
        }
        return 0;
}

/* Every call to the daemon restarts the idle time, so that a client between two calls does not find it gone. */
static int on_bus_message(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error _unused_)
{
        Manager *m = userdata;

        if (sd_bus_message_is_method_call(msg, NULL, NULL) > 0 && !m->exiting &&
            sd_event_source_get_enabled(m->idle_timer, NULL) > 0)
                (void)sd_event_source_set_time_relative(m->idle_timer, m->exit_idle_usec);
        return 0;
}

int manager_enable_idle_exit(Manager *m, uint64_t usec)
{
        int r;

        if (!m->bus || usec == 0)
                return -EINVAL;
        m->exit_idle_usec = usec;
        r = sd_event_add_time_relative(m->event, &m->idle_timer, CLOCK_MONOTONIC, usec, 0, on_idle_timer, m);
        if (r < 0)
                return r;
        /* Lowest priority: calls already received are dispatched (and restart the timer) before it fires. */
        r = sd_event_source_set_priority(m->idle_timer, SD_EVENT_PRIORITY_IDLE);
        if (r < 0)
                return r;
        (void)sd_event_source_set_enabled(m->idle_timer, SD_EVENT_OFF);
        r = sd_bus_add_filter(m->bus, &m->idle_filter_slot, on_bus_message, m);
        if (r < 0)
                return r;
        update_idle_timer(m);
        return 0;
}

static int on_drain_timer(sd_event_source *s, uint64_t usec _unused_, void *userdata)
{
        manager_sync(userdata);
        return sd_event_source_set_time_relative(s, DRAIN_INTERVAL_USEC);
}

int manager_start_sampling(Manager *m)
{
        int r;

        r = sampler_new(&m->config, on_record, &m->drain, &m->sampler);
        if (r < 0)
                return r;
        if (sampler_unwind_arena_entries(m->sampler) > 0) {
                r = unwind_tables_new(m->sampler, m->event, m->running, &m->unwind_tables);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the unwind tables: %m");
                m->drain.on_unwind = on_unwind;
                m->drain.unwind_userdata = m->unwind_tables;
        }
        r = python_procs_new(m->sampler, m->running, &m->python_procs);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the Python interpreters' entries: %m");
        r = sd_event_add_io(m->event, &m->wakeup_source, sampler_wakeup_fd(m->sampler), EPOLLIN, on_wakeup, m);
        if (r < 0)
                return log_error_errno(r, "Failed to watch the ring buffer: %m");
        r = sd_event_add_time_relative(m->event, &m->drain_timer, CLOCK_MONOTONIC, DRAIN_INTERVAL_USEC,
                                       10 * USEC_PER_MSEC, on_drain_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add the drain timer: %m");
        update_drain_timer(m);
        return 0;
}

static void targets_changed(Manager *m, bool members_only)
{
        update_drain_timer(m);
        update_maps_programs(m);
        update_close_timer(m);
        update_idle_timer(m);
        manager_notify_status(m, NULL);
        /* A group's members come and go by the hundred: the next periodic snapshot (or the one at the stop)
         * saves them, and the seconds' journal records have their counts meanwhile (manager-groups.h). */
        if (!members_only && m->observer.targets_changed)
                m->observer.targets_changed(m->observer.userdata);
}

void manager_targets_changed(Manager *m)
{
        targets_changed(m, false);
}

void manager_members_changed(Manager *m)
{
        targets_changed(m, true);
}

int manager_remove_target(Manager *m, Target *t)
{
        int r;

        if (!t->exited) {
                r = target_leave_sampler(m, t);
                if (r < 0)
                        return r;
        }
        /* Samples already in the ring will find no target and count as unclaimed. */
        hashmap_remove(m->targets, UINT64_TO_PTR((uint64_t)t->pid));
        /* At once in the journal: a replay must not add a later target of this PID into these tables. */
        if (m->observer.target_detached)
                m->observer.target_detached(m->observer.userdata, t);
        target_free(t);
        return 0;
}

static void on_target_exit(Target *t, void *userdata)
{
        Manager *m = userdata;
        int r;

        /* Its last samples may still be in the ring: count them before it leaves the BPF map. */
        manager_sync(m);
        r = target_leave_sampler(m, t);
        if (r < 0)
                log_warning_errno(r, "Failed to remove PID %d from the BPF targets: %m", (int)t->pid);
        target_mark_exited(t);
        manager_slots_exited(&m->slots, t);
        /* A group's members come and go by the hundred: its members' exits at debug level only. */
        if (t->group)
                log_debug("Target %d (%s) of %s exited.", (int)t->pid, t->info.comm, t->group->spec);
        else if (m->slots.exited_retention_usec > 0)
                log_info("Target %d (%s) of UID %u exited; its tables stay until it is detached, for %" PRIu64
                         " s at most.", (int)t->pid, t->info.comm, (unsigned)t->owner_uid,
                         m->slots.exited_retention_usec / USEC_PER_SEC);
        else
                log_info("Target %d (%s) of UID %u exited; its tables stay until it is detached.", (int)t->pid,
                         t->info.comm, (unsigned)t->owner_uid);
        /* Saved soon: the exit time decides how long the tables stay, also after a restart. A member's, with the
         * next snapshot. */
        if (t->group)
                manager_members_changed(m);
        else
                manager_targets_changed(m);
}

Target *manager_get_target(Manager *m, pid_t pid)
{
        return hashmap_get(m->targets, UINT64_TO_PTR((uint64_t)pid));
}

TargetGroup *manager_get_group(Manager *m, const char *spec)
{
        return hashmap_get(m->groups, spec);
}

int manager_group_members(Manager *m, const TargetGroup *g, Target ***ret, size_t *ret_n)
{
        _cleanup_free_ Target **members = calloc(MAX(hashmap_size(m->targets), (size_t)1), sizeof(Target *));
        size_t n = 0;
        Target *t;

        if (!members)
                return -ENOMEM;
        HASHMAP_FOREACH(t, m->targets)
                if (t->group == g)
                        members[n++] = t;
        *ret = TAKE_PTR(members);
        *ret_n = n;
        return 0;
}

int manager_add_target(Manager *m, Target *t, TargetGroup *g)
{
        bool off_cpu = !t->exited && (t->flags & VPROF_TARGET_OFF_CPU);
        bool children = !t->exited && (t->flags & VPROF_TARGET_CHILDREN);
        int r;

        if (!t->exited) {
                r = target_watch_exit(t, m->event, on_target_exit, m);
                if (r < 0)
                        return r;
        }
        /* The programs first, so that no switch or fork of the target goes unseen once it is in the map. */
        if (off_cpu) {
                r = off_cpu_targets_changed(m, +1);
                if (r < 0)
                        return r;
        }
        if (children) {
                r = children_targets_changed(m, +1);
                if (r < 0)
                        goto undo_off_cpu;
        }
        manager_slots_make_room(&m->slots, t, g);
        r = hashmap_put(m->targets, UINT64_TO_PTR((uint64_t)t->pid), t);
        if (r < 0)
                goto undo_children;
        if (!t->exited) {
                /* Its tables before its samples: none falls back for want of one that is only being compiled. */
                unwind_tables_prefetch(m->unwind_tables, t);
                python_procs_sync_target(m->python_procs, t);
                r = hashmap_put(m->running, UINT64_TO_PTR((uint64_t)t->pid), t);
                if (r >= 0 && m->sampler)
                        r = g ? sampler_add_member(m->sampler, (uint32_t)t->pid, t->flags, g->id)
                              : sampler_add_target(m->sampler, (uint32_t)t->pid, t->flags);
                if (r < 0) {
                        unwind_tables_forget(m->unwind_tables, t->pid);
                        python_procs_forget(m->python_procs, t->pid);
                        hashmap_remove(m->running, UINT64_TO_PTR((uint64_t)t->pid));
                        hashmap_remove(m->targets, UINT64_TO_PTR((uint64_t)t->pid));
                        goto undo_children;
                }
        }
        t->group = g;
        if (t->exited)
                manager_slots_exited(&m->slots, t);
        return 0;

undo_children:
        if (children)
                (void)children_targets_changed(m, -1);
undo_off_cpu:
        if (off_cpu)
                (void)off_cpu_targets_changed(m, -1);
        return r;
}

int manager_add_exited(Manager *m, Target *t)
{
        int r;

        if (manager_slots_expired(&m->slots, t))
                return -ETIME;
        if (hashmap_size(m->targets) >= m->config.max_targets)
                return -E2BIG;
        r = hashmap_put(m->targets, UINT64_TO_PTR((uint64_t)t->pid), t);
        if (r < 0)
                return r;
        update_idle_timer(m);
        manager_slots_exited(&m->slots, t);
        manager_notify_status(m, NULL);
        return 0;
}

/* The counters without a drain: the drain's comparisons, the BPF program's lost copies. */
static int read_unwind_self_check(Manager *m, UnwindSelfCheckStats *ret)
{
        uint64_t stats[_VPROF_STAT_MAX];
        int r;

        if (!m->sampler || sampler_unwind_self_check(m->sampler) == 0) {
                *ret = (UnwindSelfCheckStats){};
                return 0;
        }
        r = sampler_read_stats(m->sampler, stats);
        if (r < 0)
                return r;
        *ret = m->drain.self_check.stats;
        ret->lost = stats[VPROF_STAT_SELF_CHECK_LOST];
        return 0;
}

void manager_log_unwind_self_check(Manager *m)
{
        UnwindSelfCheckStats s;
        int r;

        if (!m->sampler || sampler_unwind_self_check(m->sampler) == 0)
                return;
        r = read_unwind_self_check(m, &s);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the unwind self-check's counters: %m");
                return;
        }
        unwind_self_check_log(&s);
}

static void count_limits(Manager *m, ManagerStats *stats)
{
        Target *t;

        HASHMAP_FOREACH(t, m->targets) {
                uint64_t functions = profile_other_function_samples(t->profile);
                uint64_t stacks = profile_other_stack_samples(t->profile);

                stats->other_function_samples += functions;
                stats->other_stack_samples += stacks;
                /* A limit is reached before anything is folded: count a target as soon as it is full. */
                if (functions > 0 || stacks > 0 ||
                    (m->max_stacks > 0 && profile_n_stacks(t->profile) >= m->max_stacks))
                        stats->targets_at_limit++;
        }
}

int manager_get_stats(Manager *m, ManagerStats *ret)
{
        uint64_t stats[_VPROF_STAT_MAX], lost_in_daemon, lost_in_kernel;
        int r;

        if (!m->sampler) {
                *ret = (ManagerStats){ .members_refused = m->members_refused };
                count_limits(m, ret);
                return 0;
        }
        manager_sync(m);
        r = sampler_read_stats(m->sampler, stats);
        if (r < 0)
                return r;
        /* A record the daemon failed to count moves from kept to lost, so that seen = kept + discarded + lost
         * holds exactly, and kept = counted in some table + unclaimed. */
        lost_in_daemon = m->drain.stats.samples_failed + m->drain.stats.malformed;
        lost_in_kernel = stats[VPROF_STAT_RING_FULL] + stats[VPROF_STAT_NO_BUFFER];

        *ret = (ManagerStats){
                .seen = stats[VPROF_STAT_KEPT] + stats[VPROF_STAT_DISCARDED] + lost_in_kernel,
                .kept = stats[VPROF_STAT_KEPT] - lost_in_daemon,
                .discarded = stats[VPROF_STAT_DISCARDED],
                .lost = lost_in_kernel + lost_in_daemon,
                .stack_errors = stats[VPROF_STAT_USER_STACK_EFAULT] + stats[VPROF_STAT_USER_STACK_ERROR] +
                                stats[VPROF_STAT_KERNEL_STACK_ERROR],
                .truncated = stats[VPROF_STAT_USER_TRUNCATED] + stats[VPROF_STAT_KERNEL_TRUNCATED],
                .unclaimed = m->drain.stats.samples_unclaimed,
                /* Likewise an interval the daemon failed to count moves from its kind to lost. */
                .off_cpu_blocked = stats[VPROF_STAT_OFF_CPU_BLOCKED] - m->drain.stats.off_cpu_failed_blocked,
                .off_cpu_preempted = stats[VPROF_STAT_OFF_CPU_PREEMPTED] - m->drain.stats.off_cpu_failed_preempted,
                .off_cpu_lost = stats[VPROF_STAT_OFF_CPU_UNTRACKED] + stats[VPROF_STAT_OFF_CPU_RING_FULL] +
                                m->drain.stats.off_cpu_failed_blocked + m->drain.stats.off_cpu_failed_preempted,
                .off_cpu_unclaimed = m->drain.stats.off_cpu_unclaimed + sampler_off_cpu_dropped(m->sampler),
                .walks_complete = stats[VPROF_STAT_UNWIND_END],
                .walks_end_fp = stats[VPROF_STAT_UNWIND_END_FP],
                .walks_depth = stats[VPROF_STAT_UNWIND_DEPTH],
                .walks_fault = stats[VPROF_STAT_UNWIND_FAULT],
                .walks_bad = stats[VPROF_STAT_UNWIND_BAD],
                .walks_fell_back = stats[VPROF_STAT_UNWIND_FELL_BACK],
                .walks_no_row = stats[VPROF_STAT_UNWIND_NO_ROW],
                .walks_bad_rule = stats[VPROF_STAT_UNWIND_BAD_RULE],
                .walks_unknown_pc = stats[VPROF_STAT_UNWIND_UNKNOWN_PC],
                .walks_no_mappings = stats[VPROF_STAT_UNWIND_NO_MAPPINGS],
                .members_refused = m->members_refused + stats[VPROF_STAT_FORKS_LOST] + m->drain.stats.forks_lost,
                .mapping_changes = stats[VPROF_STAT_MAPS_CHANGES],
                .mapping_changes_lost = stats[VPROF_STAT_MAPS_CHANGES_LOST],
                .mapping_changes_stale = m->drain.stats.maps.stale,
                .mapping_changes_missed = m->drain.stats.maps.missed,
                .samples_stale_mappings = m->drain.stats.maps.samples_stale,
                .pending_walks_copied = stats[VPROF_STAT_PENDING_COPIED],
                .pending_walks_finished = m->drain.stats.pending.finished,
                .pending_walks_unfinished = m->drain.stats.pending.unfinished,
                .pending_walks_over_rate = stats[VPROF_STAT_PENDING_OVER_RATE],
                .pending_walks_no_room = stats[VPROF_STAT_PENDING_NO_ROOM],
                .python_walks_complete = stats[VPROF_STAT_PYTHON_WALKED],
                .python_walks_no_tstate = stats[VPROF_STAT_PYTHON_NO_TSTATE],
                .python_walks_bad_frame = stats[VPROF_STAT_PYTHON_BAD_FRAME],
                .python_walks_faulted = stats[VPROF_STAT_PYTHON_FAULT],
                .python_walks_at_depth_limit = stats[VPROF_STAT_PYTHON_DEPTH],
                .python_frames_walked = stats[VPROF_STAT_PYTHON_FRAMES],
        };
        if (m->unwind_tables)
                unwind_tables_get_stats(m->unwind_tables, &ret->unwind);
        python_procs_get_stats(m->python_procs, &ret->python);
        if (sampler_unwind_self_check(m->sampler) > 0) {
                ret->self_check = m->drain.self_check.stats;
                ret->self_check.lost = stats[VPROF_STAT_SELF_CHECK_LOST];
        }
        count_limits(m, ret);
        return 0;
}
