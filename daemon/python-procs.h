/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "hashmap.h"
#include "sampler.h"
#include "target.h"

/* Each running target's CPython interpreter, for the BPF walk of its Python frames (issue 26): when a target's
 * maps (read anew after a dlopen() or an exec()) hold a file named like an interpreter (python3.X,
 * libpython3.X.so), python_detect_fd() and python_offsets_fill() decide what it is, once per file (device,
 * inode, build-id), and the target's entry of the BPF map python_procs (common/vprof-abi.h) is pushed, or
 * dropped when its maps no longer hold one. An interpreter whose version the walk does not follow keeps native
 * frames only, counted and named in the status. */

typedef struct PythonProcsStats {
        uint32_t targets;           /* running targets with an entry now */
        uint64_t interpreters;      /* interpreter files recognized (each file once) */
        uint64_t not_interpreters;  /* files named like one that are none (or could not be read) */
        uint64_t unsupported;       /* targets whose interpreter the walk does not follow: native frames */
        uint64_t push_failed;       /* entries the BPF map refused */
        uint64_t detect_usec;       /* CPU time spent recognizing files and filling their layouts */
        char unsupported_version[32]; /* the version of the last of them ("3.10.12"), "" when none */
} PythonProcsStats;

typedef struct PythonProcs PythonProcs;

/* targets: the manager's running ones, by PID. */
int python_procs_new(Sampler *sampler, Hashmap *targets, PythonProcs **ret);
PythonProcs *python_procs_free(PythonProcs *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(PythonProcs *, python_procs_free);

/* The entries of the running targets whose maps were read anew (new targets among them) follow. After each
 * drain, and at a target's attach. */
void python_procs_sync(PythonProcs *p);
void python_procs_sync_target(PythonProcs *p, Target *t);
/* The target is detached or exited: its entry goes. */
void python_procs_forget(PythonProcs *p, pid_t pid);

void python_procs_get_stats(const PythonProcs *p, PythonProcsStats *ret);
