/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "hashmap.h"
#include "target.h"
#include "target-group.h"

/* The manager's target slots: who gets one, and how long an exited target keeps one.
 *
 * There are MaxTargets= slots in all, and a user other than root holds at most MaxTargetsPerUser= of them,
 * running or exited, counted by the UID that asked for the attach (owner_uid, also when polkit allowed it:
 * polkit grants access to a process, not a larger share of the daemon). An attach that finds a limit full
 * takes the slot of the exited target that exited longest ago: the same user's for the per-user limit,
 * anyone's for MaxTargets=. Running targets are never taken: when they alone fill a limit, the attach is
 * refused. Apart from that, an exited target stays until it is detached, or until ExitedTargetRetentionSec=
 * after its exit, by a timer on the wall clock (the exit times are saved with the tables, state-store.h).
 * Every target that goes without being asked is logged.
 *
 * The slots know the manager's targets and nothing else of it: they detach a target through remove(). */
typedef struct ManagerSlots {
        Hashmap *targets; /* pid -> Target, the manager's: not owned */
        Hashmap *running; /* the running ones of targets: not owned */
        sd_event *event;  /* not owned */
        uint32_t max_targets;
        uint32_t max_targets_per_user;  /* 0: no limit per user */
        uint64_t exited_retention_usec; /* exited targets go this long after their exit; 0: never */
        sd_event_source *retention_timer; /* CLOCK_REALTIME, at the next exited target's time to go, or sooner */
        /* Detaches t, exited, its slot taken or its time up (the manager's manager_remove_target()). */
        void (*remove)(void *userdata, Target *t);
        /* The timer detached exited targets: the targets changed. */
        void (*expired)(void *userdata);
        void *userdata;
} ManagerSlots;

void manager_slots_done(ManagerSlots *s);

/* Whether an attach for owner gets a slot, exited targets giving way if need be: 0 if so, -EDQUOT when owner's
 * running targets fill its per-user limit, -E2BIG when running targets fill MaxTargets=. Changes nothing; costs
 * as many steps as targets run, however many exited. */
int manager_slots_check(ManagerSlots *s, uid_t owner);

/* Makes room for newcomer, which manager_slots_check() let in and which is not among the targets yet: detaches
 * (and logs) exited targets until both limits leave a slot for it. A newcomer that is a member of group (NULL:
 * none) has the evictions counted in group, and logged for the first one only: a process forking thousands of
 * children would otherwise write a line for each, the user's to write in the daemon's log. */
void manager_slots_make_room(ManagerSlots *s, const Target *newcomer, TargetGroup *group);

/* Exited targets are detached usec (> 0) after their exit. */
int manager_slots_enable_retention(ManagerSlots *s, uint64_t usec);
/* Whether exited target t is past its retention time now. */
bool manager_slots_expired(ManagerSlots *s, const Target *t);
/* t has exited (or came exited: a restore, a child gone before its fork was seen): the timer is set for it if it
 * is the first to go. One step: a storm's thousands of exits do not look at each other. A target detached leaves
 * the timer as it is: it fires early at worst, and looks again then. */
void manager_slots_exited(ManagerSlots *s, const Target *t);
