/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "authz-ptrace.h"
#include "target.h"
#include "pidfd-alive.h"
#include "target-python.h"
#include "time-util.h"

static int pidfd_open(pid_t pid)
{
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? negative_errno() : fd;
}

/* Addresses cached per target and mode: 2 MiB when full. */
#define FRAME_CACHE_MAX 65536

int target_alloc_tables(Target *t, const TargetContext *c)
{
        int r;

        r = profile_new(c->frequency, &t->profile);
        if (r < 0)
                return r;
        profile_set_limits(t->profile, c->max_functions, c->max_stacks);
        if (c->keep_deltas || c->window_seconds > 0) {
                r = profile_delta_new(&t->delta);
                if (r < 0)
                        return r;
                profile_delta_begin(t->delta, t->profile);
                t->delta_start_usec = now_usec(CLOCK_REALTIME);
        }
        if (c->window_seconds > 0) {
                r = profile_window_new(c->window_seconds, c->window_bytes, &t->window);
                if (r < 0)
                        return r;
        }
        r = frame_cache_new(FRAME_CACHE_MAX, &t->user_frames);
        if (r < 0)
                return r;
        return frame_cache_new(FRAME_CACHE_MAX, &t->kernel_frames);
}

void target_profile_replaced(Target *t)
{
        if (t->delta) {
                profile_delta_begin(t->delta, t->profile);
                t->delta_start_usec = now_usec(CLOCK_REALTIME);
        }
        if (t->window)
                profile_window_clear(t->window);
}

int target_close_second(Target *t, uint64_t now)
{
        int r = 0;

        if (!t->delta)
                return 0;
        /* An exited target's last samples (drained after its exit) make its last bucket; then it has no more
         * seconds, and its window ends where its life did. */
        if (t->window && (!t->exited || profile_delta_n_entries(t->delta) > 0))
                r = profile_window_push(t->window, t->delta, t->delta_start_usec, MAX(now, t->delta_start_usec));
        profile_delta_begin(t->delta, t->profile);
        t->delta_start_usec = now;
        return r;
}

int target_new(const TargetContext *c, pid_t pid, uid_t caller, uint64_t flags, Target **ret, pid_t *ret_tgid)
{
        _cleanup_(target_freep) Target *t = NULL;
        _cleanup_close_ int pidfd = -1;
        ProcInfo info;
        int r;

        /* Pin the process first: whatever /proc says afterwards is about this process if it is still
         * alive after the reads (checked below), never about a successor that reused the PID. */
        pidfd = pidfd_open(pid);
        if (IN_SET(pidfd, -EINVAL, -ENOENT, -ESRCH)) {
                /* A thread that is not a thread-group leader gets EINVAL before Linux 6.9 and ENOENT since. */
                r = proc_info_read(pid, &info);
                if (r < 0)
                        return r;
                if (info.tgid != pid) {
                        *ret_tgid = info.tgid;
                        return -ECHILD;
                }
                return -ESRCH;
        }
        if (pidfd < 0)
                return pidfd;
        /* The descriptors above are the daemon's own (fd-limit.h). */
        if (c->pidfd_bound > 0 && pidfd >= c->pidfd_bound)
                return -EMFILE;

        r = proc_info_read(pid, &info);
        if (r < 0)
                return r;
        if (info.kernel_thread)
                return -EINVAL;
        if (info.tgid != pid) {
                *ret_tgid = info.tgid;
                return -ECHILD;
        }
        if (!authz_may_profile(caller, &info))
                return -EPERM;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->pidfd = -1;
        t->pid = pid;
        t->info = info;
        t->attach_usec = now_usec(CLOCK_REALTIME);
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        t->flags = flags;
        t->attach_uid = caller;
        t->owner_uid = caller;
        r = target_alloc_tables(t, c);
        if (r < 0)
                return r;
        r = address_space_new(c->symbolizer, pid, &t->address_space);
        if (r < 0)
                return r;

        r = pidfd_alive(pidfd);
        if (r < 0)
                return r == -ESRCH ? -ESRCH : r;

        t->pidfd = TAKE_FD(pidfd);
        *ret = TAKE_PTR(t);
        return 0;
}

int target_new_child(const TargetContext *c, pid_t pid, uint64_t start_time, const Target *parent, uint64_t flags,
                     Target **ret)
{
        _cleanup_(target_freep) Target *t = NULL;
        _cleanup_close_ int pidfd = -1;
        ProcInfo info;
        int r;

        /* Pinned and still the process that was forked: its own information. */
        pidfd = pidfd_open(pid);
        if (pidfd >= 0 && c->pidfd_bound > 0 && pidfd >= c->pidfd_bound)
                return -EMFILE;
        if (pidfd >= 0) {
                r = proc_info_read(pid, &info);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || info.tgid != pid || info.start_time != start_time || info.kernel_thread)
                        pidfd = safe_close(pidfd);
        }
        /* Gone (or another process has its PID): what its records need, from its parent. */
        if (pidfd < 0) {
                if (!parent || !parent->address_space)
                        return -ESRCH;
                info = parent->info;
                info.tgid = pid;
                info.ns_tgid = 0;
                info.start_time = start_time;
        }

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->pidfd = -1;
        t->pid = pid;
        t->info = info;
        t->attach_usec = now_usec(CLOCK_REALTIME);
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        t->flags = flags;
        r = target_alloc_tables(t, c);
        if (r < 0)
                return r;
        if (parent && parent->address_space)
                r = address_space_clone(parent->address_space, pid, start_time, &t->address_space);
        else
                r = address_space_new(c->symbolizer, pid, &t->address_space);
        if (r < 0)
                return r;
        if (pidfd < 0) {
                t->exited = true;
                t->exit_usec = t->attach_usec;
        }
        t->pidfd = TAKE_FD(pidfd);
        *ret = TAKE_PTR(t);
        return 0;
}

int target_new_exited(const TargetContext *c, const ProcInfo *info, uint64_t flags, uid_t attach_uid,
                      uid_t owner_uid, uint64_t attach_usec, uint64_t exit_usec, Profile **profile, Target **ret)
{
        _cleanup_(target_freep) Target *t = calloc(1, sizeof(*t));
        int r;

        if (!t)
                return -ENOMEM;
        t->pidfd = -1;
        t->pid = info->tgid;
        t->info = *info;
        t->attach_usec = attach_usec;
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        t->flags = flags;
        t->attach_uid = attach_uid;
        t->owner_uid = owner_uid;
        t->exited = true;
        t->exit_usec = exit_usec ?: now_usec(CLOCK_REALTIME);
        r = target_alloc_tables(t, c); /* the caches too: a reset works on exited targets */
        if (r < 0)
                return r;
        profile_free(t->profile);
        t->profile = TAKE_PTR(*profile);
        profile_set_limits(t->profile, c->max_functions, c->max_stacks);
        target_profile_replaced(t);
        *ret = TAKE_PTR(t);
        return 0;
}

Target *target_free(Target *t)
{
        if (!t)
                return NULL;
        sd_event_source_disable_unref(t->exit_source);
        safe_close(t->pidfd);
        address_space_free(t->address_space);
        profile_free(t->profile);
        profile_delta_free(t->delta);
        profile_window_free(t->window);
        frame_cache_free(t->user_frames);
        frame_cache_free(t->kernel_frames);
        target_python_free(t->python);
        free(t);
        return NULL;
}

static int on_pidfd(sd_event_source *s _unused_, int fd _unused_, uint32_t revents _unused_, void *userdata)
{
        Target *t = userdata;

        t->on_exit(t, t->exit_userdata);
        return 0;
}

int target_watch_exit(Target *t, sd_event *event, target_exit_fn fn, void *userdata)
{
        int r;

        r = sd_event_add_io(event, &t->exit_source, t->pidfd, EPOLLIN, on_pidfd, t);
        if (r < 0)
                return r;
        t->on_exit = fn;
        t->exit_userdata = userdata;
        return 0;
}

void target_mark_exited(Target *t)
{
        t->exited = true;
        t->exit_usec = now_usec(CLOCK_REALTIME);
        t->exit_source = sd_event_source_disable_unref(t->exit_source);
        t->pidfd = safe_close(t->pidfd);
}

int target_reset(Target *t, const TargetContext *c)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        int r;

        r = profile_new(c->frequency, &p);
        if (r < 0)
                return r;
        profile_set_limits(p, c->max_functions, c->max_stacks);
        profile_free(t->profile);
        t->profile = TAKE_PTR(p);
        /* What the old tables gained since the last journal record goes with them. */
        target_profile_replaced(t);
        /* The caches hold ids of the old profile. */
        frame_cache_clear(t->user_frames);
        frame_cache_clear(t->kernel_frames);
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        return 0;
}

void target_refresh_credentials(Target *t)
{
        ProcInfo info;

        /* The pidfd pins the process, so this is still it; an exited one keeps its last credentials. */
        if (t->exited || proc_info_read(t->pid, &info) < 0)
                return;
        memcpy(t->info.uid, info.uid, sizeof(info.uid));
        memcpy(t->info.gid, info.gid, sizeof(info.gid));
        t->info.dumpable = info.dumpable;
}

const char *target_status(const Target *t)
{
        return t->exited ? "exited" : "running";
}
