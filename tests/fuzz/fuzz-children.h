/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "fuzz-random.h"

/* Processes for the fuzz driver to attach to: a long-lived worker with a second thread, and short-lived
 * children that exit on their own (attached ones turn into exited targets). All of them alternate busy loops
 * and sleeps, so that targets collect on-CPU samples and off-CPU time. */

#define CHILDREN_RECENT 16

typedef struct Child {
        pid_t pid;
        bool alive; /* not yet reaped */
} Child;

typedef struct Children {
        pid_t worker; /* its PID stays an argument after it is gone */
        bool worker_alive;
        pid_t worker_thread; /* the thread ID of the worker's second thread */
        Child recent[CHILDREN_RECENT]; /* the latest short-lived ones, alive or gone */
        unsigned n_recent, n_alive;
} Children;

int children_start(Children *c);
/* Starts a short-lived child living up to max_msec, unless max_alive of them are alive already. */
int children_spawn_short(Children *c, Rng *r, unsigned max_alive, unsigned max_msec);
/* Reaps the children that exited. */
void children_reap(Children *c);
/* Kills and reaps them all. */
void children_stop(Children *c);
