/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>

#include "proc-info.h"

/* The one place that decides who may do what. Root may do everything; any other caller may attach to, query,
 * reset and detach a process only if it could ptrace it: the process's real, effective and saved UIDs are all
 * the caller's and it is dumpable (not set-ID, not marked non-dumpable). Anything else is put to polkit
 * (authz-polkit.h) by the method handlers, through bus_authorize_pid() (bus-target.h), which applies these rules
 * to the PID a call names. */

/* Who asks for a target: the caller's effective UID, and whether polkit allowed what the local rules refused.
 * Such a caller acts as root would (the target's attach_uid is 0), but the target still counts as the
 * caller's (target-slots.h). */
typedef struct AuthzCaller {
        uid_t uid;
        bool polkit_allowed;
} AuthzCaller;

/* The caller's effective UID from the bus credentials; refuses credentials that sd-bus only guessed from
 * /proc (augmented), which a caller could race. */
int bus_caller_uid(sd_bus_message *m, uid_t *ret, sd_bus_error *error);

bool authz_may_profile(uid_t caller, const ProcInfo *target);
