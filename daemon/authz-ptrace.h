/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "proc-info.h"

/* The local rule of authz.h, alone: a caller may profile a process it could ptrace. It judges credentials only,
 * so that the target's constructor (target.h) applies it to the process it reads without the rest of authz. */

/* Whether caller may profile a process of these credentials: caller is root, or the process's real, effective
 * and saved UIDs are all caller's and it is dumpable (not set-ID, not marked non-dumpable). */
bool authz_may_profile(uid_t caller, const ProcInfo *target);
