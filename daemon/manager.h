/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "hashmap.h"
#include "sampler.h"
#include "symbolizer.h"
#include "target.h"

/* All daemon state: one per process, created and freed in run(). */
typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_event_source *wakeup_source;
        sd_event_source *drain_timer;

        SamplerConfig config;
        Sampler *sampler;
        Symbolizer *symbolizer;
        Hashmap *targets; /* pid -> Target */

        unsigned n_off_cpu_targets; /* running targets that track off-CPU time */

        uint64_t samples_unclaimed; /* drained after their target was detached */
        uint64_t samples_failed;    /* drained but not counted: out of memory */
        uint64_t off_cpu_unclaimed; /* intervals of detached targets, drained or dropped from the map */
        uint64_t off_cpu_failed_blocked; /* drained but not counted: out of memory */
        uint64_t off_cpu_failed_preempted;
} Manager;

/* Accounting as the bus shows it. Off-CPU intervals: blocked and preempted ones were counted in a table or,
 * for a detached target, as unclaimed; lost ones were not. */
typedef struct ManagerStats {
        uint64_t seen, kept, discarded, lost, stack_errors, truncated, unclaimed;
        uint64_t off_cpu_blocked, off_cpu_preempted, off_cpu_lost, off_cpu_unclaimed;
} ManagerStats;

int manager_new(const SamplerConfig *config, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Load BPF, open the events, hook the ring buffer into the event loop. */
int manager_start_sampling(Manager *m);

/* Bring every table up to date: drain the ring buffer. Called before answering any query. */
void manager_sync(Manager *m);

/* flags: VPROF_TARGET_*. Errors as target_new(), and -E2BIG when the BPF targets map is full. */
int manager_attach(Manager *m, pid_t pid, uid_t caller, uint64_t flags, Target **ret, pid_t *ret_tgid);
int manager_detach(Manager *m, pid_t pid);
Target *manager_get_target(Manager *m, pid_t pid);
int manager_get_stats(Manager *m, ManagerStats *ret);
