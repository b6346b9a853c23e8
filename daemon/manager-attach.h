/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "authz.h"
#include "manager.h"

/* The calls on single targets: attach, detach, reset, for a caller, each said in the log with who asked. Above the
 * manager's targets (manager.h) and its slots; the groups (manager-groups.h) attach their first member here. */

/* flags: VPROF_TARGET_*. An attach for caller, which takes the slot of an exited target when a limit is full
 * (manager-slots.h; the target that gives way is detached and logged). Errors as target_new(), -EDQUOT when the
 * caller's running targets fill its per-user limit, -E2BIG when running targets fill MaxTargets= or the BPF
 * targets map is full, and -ESHUTDOWN when the daemon is exiting (idle exit began: the call came in just before
 * the bus name was released). */
int manager_attach(Manager *m, pid_t pid, AuthzCaller caller, uint64_t flags, Target **ret, pid_t *ret_tgid);
/* manager_attach() of the process that started at start_time (proc-info.h), checked once it is pinned: -ESTALE
 * when pid is another process now. */
int manager_attach_started(Manager *m, pid_t pid, uint64_t start_time, AuthzCaller caller, uint64_t flags,
                           Target **ret, pid_t *ret_tgid);
/* manager_attach_started() of a member of group g (NULL: alone), flags kept as they are. */
int manager_attach_in_group(Manager *m, pid_t pid, uint64_t start_time, AuthzCaller caller, uint64_t flags,
                            TargetGroup *g, Target **ret, pid_t *ret_tgid);
/* Detach and Reset, for caller (named in the log line). Reset does not drain: the caller drains before it
 * looks t up (a drain may make and drop targets: manager-groups.h). */
int manager_detach(Manager *m, pid_t pid, AuthzCaller caller);
int manager_reset(Manager *m, Target *t, AuthzCaller caller);
/* "for UID 1000" or "for UID 1000, allowed by polkit": who asked, for the log lines of the calls. */
const char *manager_caller_text(AuthzCaller caller, char buf[static 64]);
