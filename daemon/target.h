/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "address-space.h"
#include "hashmap.h"
#include "frame-cache.h"
#include "profile.h"
#include "profile-delta.h"
#include "profile-window.h"
#include "proc-info.h"
#include "symbolizer.h"
#include "target-group.h"
#include "vprof-abi.h"

/* What targets take from their owner (the manager, manager_target_context()): the same for all of them, and
 * nothing that they must call back. */
typedef struct TargetContext {
        Symbolizer *symbolizer;  /* whose files the targets' address spaces map */
        uint32_t frequency;      /* Hz: the tables of a new target or a reset count at it */
        uint32_t max_functions;  /* per target; 0: no limit */
        uint32_t max_stacks;
        bool keep_deltas;        /* targets keep a ProfileDelta for the state's journal */
        uint32_t window_seconds; /* per-second buckets kept for time windows (profile-window.h); 0: none */
        size_t window_bytes;     /* their bound per target */
        int pidfd_bound;         /* a pidfd at or above it is one too many (fd-limit.h); 0: none */
} TargetContext;

typedef struct Target Target;

/* Called once, when the process of t has exited (its pidfd turned readable). */
typedef void (*target_exit_fn)(Target *t, void *userdata);

/* One attached process: pinned by a pidfd, its maps snapshot, its profile and the caches that turn its
 * addresses into the profile's function ids (drain.h fills them). */
struct Target {
        pid_t pid;
        int pidfd;
        sd_event_source *exit_source;
        target_exit_fn on_exit;
        void *exit_userdata;
        ProcInfo info;          /* as read at attach; comm follows the main thread's name */
        uint64_t attach_usec;   /* CLOCK_REALTIME */
        uint64_t epoch_ns;      /* CLOCK_MONOTONIC (BPF's clock) of the attach or the last reset */
        uint64_t flags;         /* VPROF_TARGET_* */
        uid_t attach_uid;       /* who attached it (0: root, or allowed by polkit); state-store.h */
        uid_t owner_uid;        /* the caller's own UID, also when polkit allowed it: whose slot it takes */
        TargetGroup *group;     /* the unit, cgroup or parent followed that took it in; NULL when attached alone */
        bool exited;
        uint64_t exit_usec;     /* CLOCK_REALTIME of the exit (of the restore, when unknown); 0 while running */

        AddressSpace *address_space; /* NULL for a target restored after its process was gone */
        uint16_t exec_count;         /* the image the address space is of: records carry theirs */
        uint32_t maps_generation;    /* the mappings the address space is of (struct vprof_maps_change) */
        Profile *profile;
        /* What the profile gained since the manager last closed a second (manager_close_second()): the
         * journal's record and the newest bucket of the window. NULL with neither a journal nor windows. */
        ProfileDelta *delta;
        uint64_t delta_start_usec; /* CLOCK_REALTIME: when the delta began */
        ProfileWindow *window;   /* the last seconds, bucket by bucket; NULL without windows */
        FrameCache *user_frames; /* looked-up address -> function id */
        FrameCache *kernel_frames;
        uint64_t kallsyms_generation; /* of the names in kernel_frames */
        struct TargetPython *python;  /* its CPython interpreter's code objects (target-python.h); NULL: none */
};

/* The empty tables and frame caches of t, with the limits of c, its delta when c keeps a journal or windows,
 * and its window's ring. */
int target_alloc_tables(Target *t, const TargetContext *c);

/* t->profile was replaced: its delta (if any) begins anew on it, and the window's buckets, of the old tables'
 * ids, go. */
void target_profile_replaced(Target *t);

/* The second that t's ended delta holds closes, at now_usec (CLOCK_REALTIME): it becomes the newest bucket of
 * t's window (an exited target's only while it still brings samples), and the delta begins anew. Errors of the
 * ring (-ENOMEM: the bucket is there, empty and inexact) are returned for the log; the delta begins anew
 * whatever happens. */
int target_close_second(Target *t, uint64_t now_usec);

/* Validates the process, opens its pidfd and maps; does not touch BPF or the event loop. -ESRCH when the
 * process does not exist or exits meanwhile, -EINVAL for a kernel thread, -ECHILD for a thread ID that is not
 * a process (ret_tgid then holds its process), -EPERM when caller may not profile it by the local rules
 * (authz.h; caller 0 stands for root, or a caller polkit allowed). */
int target_new(const TargetContext *c, pid_t pid, uid_t caller, uint64_t flags, Target **ret, pid_t *ret_tgid);
Target *target_free(Target *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(Target *, target_free);

/* The child pid, started at start_time (proc-info.h), that the process of parent (NULL: not a target) forked,
 * as a member of a group: attached as root would (the group's caller was). It starts with a copy of its parent's
 * address space, as the process itself does. A child already gone, or whose PID is another process's now, is
 * made exited at once, named after its parent: its records, which were kept from its first sample, are still
 * counted and named. -ESRCH when it is gone and has no parent target to take that from; -EMFILE. */
int target_new_child(const TargetContext *c, pid_t pid, uint64_t start_time, const Target *parent, uint64_t flags,
                     Target **ret);

/* A target of saved tables whose process is gone (state-store.h): exited from the start, with the saved
 * process information; exit_usec 0 when the time of the exit is unknown (now is taken). Takes *profile. */
int target_new_exited(const TargetContext *c, const ProcInfo *info, uint64_t flags, uid_t attach_uid,
                      uid_t owner_uid, uint64_t attach_usec, uint64_t exit_usec, Profile **profile, Target **ret);

/* Watch the pidfd of t, running, in event: fn(t, userdata) when its process exits. */
int target_watch_exit(Target *t, sd_event *event, target_exit_fn fn, void *userdata);

/* Its process exited: the pidfd and its event source go, the exit time is now. */
void target_mark_exited(Target *t);

/* Clear the tables (new ones with the limits of c), keep sampling. */
int target_reset(Target *t, const TargetContext *c);

/* Read the process's user, group and dumpable flag again (they change on exec of a set-ID program). */
void target_refresh_credentials(Target *t);

/* Its status, as the bus says it: "running", or "exited" once its process is gone (its tables stay). */
const char *target_status(const Target *t);
