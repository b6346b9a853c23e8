/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/* The object path that the calling thread's calls to vprofd go to: VPROF_BUS_PATH, which answers with the
 * caller's own rights, or VPROF_BUS_USER_PATH "/UID", which a reader (root, the group vprof) calls to read on
 * behalf of the user UID and gets what UID would get (org.vprof.Profiler1(5)). Per thread, so that
 * vprof-exporter's worker threads, each answering one request at a time, ask each for its own client, while
 * the bus library's calls keep their signatures. */
const char *vprof_bus_object(void);

/* From now on this thread's calls read on behalf of uid. */
void vprof_bus_object_set_user(uid_t uid);

/* From now on this thread's calls are the caller's own (VPROF_BUS_PATH). */
void vprof_bus_object_reset(void);
