/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "manager.h"

/* The checks every method that names a target shares. Each returns a negative errno and fills error. */

#define PID_MAX_LIMIT (UINT32_C(4) * 1024 * 1024)

/* InvalidArgs for PID 0 and PIDs no kernel hands out. */
int bus_check_pid_argument(uint32_t pid, sd_bus_error *error);
/* Whether caller may see and act on t by the local rules (authz.h), with t's credentials read afresh. */
bool bus_caller_may_see(Target *t, uid_t caller);
/* For a caller the local rules refuse: polkit_verify_async() on profiling pid. Only bus_authorize_pid() and a
 * process that changed under an attach call it. */
int bus_verify_profile_access(Manager *m, sd_bus_message *msg, uint32_t pid, sd_bus_error *error);

/* Whether the caller may know about pid and act on it: the one rule, written out at its definition. 1 with
 * *ret_caller set, and *ret_target the target at pid or NULL when pid is not attached; 0 when polkit was asked,
 * and the method handler must return 1 and leave the call unanswered until it runs again; negative with
 * InvalidArgs or AccessDenied in error. */
int bus_authorize_pid(Manager *m, sd_bus_message *msg, uint32_t pid, AuthzCaller *ret_caller, Target **ret_target,
                      sd_bus_error *error);

/* The attached target pid, if the caller may see it (bus_authorize_pid()). 1 with *ret set (and *ret_caller, unless NULL); 0 when
 * polkit was asked, and the method handler must return 1 and leave the call unanswered until it runs again;
 * negative with InvalidArgs, NotAttached or AccessDenied in error. */
int bus_get_target_for_caller(Manager *m, sd_bus_message *msg, uint32_t pid, AuthzCaller *ret_caller, Target **ret,
                              sd_bus_error *error);

/* The target named by the message's only argument, a PID. Returns as bus_get_target_for_caller(). */
int bus_read_target(Manager *m, sd_bus_message *msg, AuthzCaller *ret_caller, Target **ret, sd_bus_error *error);

/* The table of the target named by the message's only argument, a PID, for the caller, after draining the
 * ring buffer; as profile_modules() and profile_threads(). The caller frees *ret_rows. Returns as
 * bus_get_target_for_caller(). */
typedef int (*profile_table_fn)(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n);
int bus_read_target_table(Manager *m, sd_bus_message *msg, profile_table_fn table, ProfileSort sort,
                          Target **ret_target, ProfileRow **ret_rows, size_t *ret_n, sd_bus_error *error);

/* GetFunctions and GetFunctionValues: reads (u pid, s sort, u limit), checks the sort key against the kind of
 * table (values: the elapsed and application keys) and returns the sorted rows as bus_read_target_table(). */
int bus_read_function_table(Manager *m, sd_bus_message *msg, bool values, Target **ret_target,
                            ProfileRow **ret_rows, size_t *ret_n, sd_bus_error *error);

/* ListTargets: a reply of one array, an element (of element_signature, a struct) per target
 * the caller may see, written by append, after draining the ring buffer. */
typedef int (*bus_target_append_fn)(sd_bus_message *reply, const Target *t);
int bus_reply_visible_targets(sd_bus_message *msg, Manager *m, const char *element_signature,
                              bus_target_append_fn append, sd_bus_error *error);
