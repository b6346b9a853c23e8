/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "manager.h"

/* The manager's target slots: who gets one, and how long an exited target keeps one.
 *
 * There are MaxTargets= slots in all, and a user other than root holds at most MaxTargetsPerUser= of them,
 * running or exited, counted by the UID that asked for the attach (owner_uid, also when polkit allowed it:
 * polkit grants access to a process, not a larger share of the daemon). An attach that finds a limit full
 * takes the slot of the exited target that exited longest ago: the same user's for the per-user limit,
 * anyone's for MaxTargets=. Running targets are never taken: when they alone fill a limit, the attach is
 * refused. Apart from that, an exited target stays until it is detached, or until ExitedTargetRetentionSec=
 * after its exit, by a timer on the wall clock (the exit times are saved with the tables, state-store.h).
 * Every target that goes without being asked is logged. */

/* Whether an attach for owner gets a slot, exited targets giving way if need be: 0 if so, -EDQUOT when owner's
 * running targets fill its per-user limit, -E2BIG when running targets fill MaxTargets=. Changes nothing. */
int manager_slots_check(Manager *m, uid_t owner);

/* Makes room for newcomer, which manager_slots_check() let in and which is not among the targets yet: detaches
 * (and logs) exited targets until both limits leave a slot for it. A newcomer that is a member of group (NULL:
 * none) has the evictions counted in group, and logged for the first one only: a process forking thousands of
 * children would otherwise write a line for each, the user's to write in the daemon's log. */
void manager_slots_make_room(Manager *m, const Target *newcomer, TargetGroup *group);

/* Exited targets are detached usec (> 0) after their exit. */
int manager_slots_enable_retention(Manager *m, uint64_t usec);
/* Whether exited target t is past its retention time now. */
bool manager_slots_expired(Manager *m, const Target *t);
/* Sets the timer for the exited target that exited longest ago (off without one); after any change. */
void manager_slots_update_retention(Manager *m);
