/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "address-space.h"
#include "authz.h"
#include "log.h"
#include "demangle.h"
#include "manager.h"
#include "state-store.h"
#include "target.h"
#include "time-util.h"
#include "unwinder.h"

static int pidfd_open(pid_t pid)
{
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);
        return fd < 0 ? negative_errno() : fd;
}

static int pidfd_alive(int pidfd)
{
        return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ? negative_errno() : 0;
}

/* Addresses cached per target and mode: 2 MiB when full. */
#define FRAME_CACHE_MAX 65536

int target_alloc_tables(Target *t)
{
        int r;

        r = profile_new(t->manager->config.frequency, &t->profile);
        if (r < 0)
                return r;
        profile_set_limits(t->profile, t->manager->max_functions, t->manager->max_stacks);
        if (t->manager->keep_deltas) {
                r = profile_delta_new(&t->delta);
                if (r < 0)
                        return r;
                profile_delta_begin(t->delta, t->profile);
        }
        r = frame_cache_new(FRAME_CACHE_MAX, &t->user_frames);
        if (r < 0)
                return r;
        return frame_cache_new(FRAME_CACHE_MAX, &t->kernel_frames);
}

void target_profile_replaced(Target *t)
{
        if (t->delta)
                profile_delta_begin(t->delta, t->profile);
}

int target_new(Manager *m, pid_t pid, uid_t caller, uint64_t flags, Target **ret, pid_t *ret_tgid)
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
        if (m->pidfd_bound > 0 && pidfd >= m->pidfd_bound)
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
        t->manager = m;
        t->pid = pid;
        t->info = info;
        t->attach_usec = now_usec(CLOCK_REALTIME);
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        t->flags = flags;
        t->attach_uid = caller;
        t->owner_uid = caller;
        r = target_alloc_tables(t);
        if (r < 0)
                return r;
        r = address_space_new(m->symbolizer, pid, &t->address_space);
        if (r < 0)
                return r;

        r = pidfd_alive(pidfd);
        if (r < 0)
                return r == -ESRCH ? -ESRCH : r;

        t->pidfd = TAKE_FD(pidfd);
        *ret = TAKE_PTR(t);
        return 0;
}

int target_new_exited(Manager *m, const ProcInfo *info, uint64_t flags, uid_t attach_uid, uid_t owner_uid,
                      uint64_t attach_usec, uint64_t exit_usec, Profile **profile, Target **ret)
{
        _cleanup_(target_freep) Target *t = calloc(1, sizeof(*t));
        int r;

        if (!t)
                return -ENOMEM;
        t->pidfd = -1;
        t->manager = m;
        t->pid = info->tgid;
        t->info = *info;
        t->attach_usec = attach_usec;
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        t->flags = flags;
        t->attach_uid = attach_uid;
        t->owner_uid = owner_uid;
        t->exited = true;
        t->exit_usec = exit_usec ?: now_usec(CLOCK_REALTIME);
        r = target_alloc_tables(t); /* the caches too: a reset works on exited targets */
        if (r < 0)
                return r;
        profile_free(t->profile);
        t->profile = TAKE_PTR(*profile);
        profile_set_limits(t->profile, m->max_functions, m->max_stacks);
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
        frame_cache_free(t->user_frames);
        frame_cache_free(t->kernel_frames);
        free(t);
        return NULL;
}

void target_mark_exited(Target *t)
{
        t->exited = true;
        t->exit_usec = now_usec(CLOCK_REALTIME);
        t->exit_source = sd_event_source_disable_unref(t->exit_source);
        t->pidfd = safe_close(t->pidfd);
}

int target_reset(Target *t)
{
        _cleanup_(profile_freep) Profile *p = NULL;
        int r;

        r = profile_new(t->manager->config.frequency, &p);
        if (r < 0)
                return r;
        profile_set_limits(p, t->manager->max_functions, t->manager->max_stacks);
        profile_free(t->profile);
        t->profile = TAKE_PTR(p);
        /* What the old tables gained since the last journal record goes with them. */
        target_profile_replaced(t);
        /* The caches hold ids of the old profile. */
        frame_cache_clear(t->user_frames);
        frame_cache_clear(t->kernel_frames);
        t->epoch_ns = now_ns(CLOCK_MONOTONIC);
        state_store_target_reset(t->manager->state, t);
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

static int intern_symbol(Target *t, const Symbol *sym, bool kernel, uint32_t *ret_id)
{
        _cleanup_free_ char *demangled = NULL;
        char module[256], function[512];
        const char *name = sym->function;
        int r;

        /* Kernel modules in brackets, as perf shows them, so "[kernel]" never reads as a file name. */
        if (kernel)
                snprintf(module, sizeof(module), "[%s]", sym->module);
        else
                snprintf(module, sizeof(module), "%s", sym->module);
        if (!name) {
                /* No symbol: keep the frame, named by where it is. */
                snprintf(function, sizeof(function), "%s+0x%" PRIx64, module, sym->offset);
                name = function;
        } else if (!kernel) {
                /* C++ and Rust names as people write them; the symbol itself stays with the function for
                 * GetSymbolNames. Only new addresses come here (resolve_frame caches them). */
                r = demangle_symbol(name, &demangled);
                if (r < 0)
                        return r;
        }
        r = profile_intern_function(t->profile, module, demangled ?: name, ret_id);
        if (r < 0 || !demangled)
                return r;
        return profile_set_mangled(t->profile, *ret_id, name);
}

/* The id of a return address outside executable memory: a frame-pointer walk that went through code built
 * without frame pointers (most distribution libraries) read junk there, and everything after it is junk too. */
#define FRAME_NOT_CODE UINT32_MAX

static int resolve_frame(Target *t, uint64_t addr, bool kernel, bool return_address, uint32_t *ret_id)
{
        FrameCache *cache = kernel ? t->kernel_frames : t->user_frames;
        uint64_t key = return_address ? addr - 1 : addr;
        Symbol sym;
        uint32_t id;
        int r;

        /* Kernel names cached before kallsyms was read again may have changed. */
        if (kernel && _unlikely_(t->kallsyms_generation != symbolizer_kallsyms_generation(t->manager->symbolizer))) {
                frame_cache_clear(cache);
                t->kallsyms_generation = symbolizer_kallsyms_generation(t->manager->symbolizer);
        }
        /* The hot path: most frames of a busy target were seen before. */
        if (frame_cache_get(cache, key, ret_id))
                return 0;

        if (kernel)
                r = symbolizer_resolve_kernel(t->manager->symbolizer, addr, &sym);
        else
                r = address_space_resolve(t->address_space, addr, return_address, &sym);
        if (r < 0)
                return r;
        if (return_address && !sym.code) {
                *ret_id = FRAME_NOT_CODE;
                return 0;
        }
        r = intern_symbol(t, &sym, kernel, &id);
        if (r < 0)
                return r;
        /* Only code is cached: an address outside it may become code later (dlopen, exec), and the
         * symbolizer re-reads the maps for it, at most every 100 ms. Nor are names that may change (JIT code,
         * a kernel address before kallsyms is read again). A full cache starts over rather than
         * grow with every address a JIT or a huge binary ever ran: it only saves lookups. */
        if (sym.code && !sym.transient) {
                r = frame_cache_put(cache, key, id);
                if (r < 0)
                        return r;
        }
        *ret_id = id;
        return 0;
}

/* What the record counts as, and for how long: on-CPU samples by mode, off-CPU intervals by kind. An interval
 * that began before the attach or the last reset (a thread that left the CPU under an earlier attachment
 * of the same process) counts from then on only. Returns false for nothing left to count. */
static bool classify(const Target *t, const struct vprof_sample *s, ProfileSampleKind *ret_kind,
                     uint64_t *ret_duration_ns)
{
        uint64_t start = s->time_ns, end = s->time_ns + s->period;

        if (!(s->flags & VPROF_SAMPLE_OFF_CPU)) {
                *ret_kind = s->kernel_depth > 0 ? PROFILE_SAMPLE_KERNEL : PROFILE_SAMPLE_USER;
                *ret_duration_ns = 0;
                return true;
        }
        start = MAX(start, t->epoch_ns);
        if (end <= start)
                return false;
        *ret_kind = s->flags & VPROF_SAMPLE_PREEMPTED ? PROFILE_SAMPLE_PREEMPTED : PROFILE_SAMPLE_BLOCKED;
        *ret_duration_ns = end - start;
        return true;
}

/* Callers put back in one stack, at most: deeper than that, the stack window has run out anyway. */
#define MAX_RECOVERED_CALLERS 8

/* The user stack with the callers that the kernel's frame-pointer walk skipped put back. A function that has
 * not set up a frame (a GCC leaf, a libc system call wrapper, any function in its prologue) leaves the frame
 * pointer at its caller's frame, so the walk goes from it to its caller's caller. From the leaf up, each
 * frame's caller is found from its CFI and the words of stack in the record, until that caller is the next
 * frame of the walk (the walk is right from there on) or the window runs out. Returns the depth. */
static size_t complete_user_stack(Target *t, const struct vprof_sample *s, uint64_t *out)
{
        const __u64 *user = s->frames + s->kernel_depth; /* depths checked against the record's size */
        size_t udepth = s->user_depth, n = 0;
        UnwindRegs regs, caller;

        if (udepth == 0)
                return 0;
        out[n++] = user[0];
        regs = (UnwindRegs){ .ip = user[0], .sp = s->user_sp, .bp = s->user_bp };
        for (unsigned step = 0; step < MAX_RECOVERED_CALLERS && s->window_words > 0; step++) {
                uint64_t offset = regs.sp - s->user_sp;
                size_t words;

                if (regs.sp < s->user_sp || offset % sizeof(uint64_t) != 0)
                        break;
                offset /= sizeof(uint64_t);
                words = MIN((size_t)s->window_words, (size_t)VPROF_STACK_WINDOW_WORDS);
                if (offset >= words)
                        break;
                if (unwinder_step(t->address_space, &regs, step > 0,
                                  (const uint64_t *)s->user_window + offset, words - offset, &caller) < 0)
                        break;
                if (udepth > 1 && caller.ip == user[1])
                        break;
                out[n++] = caller.ip;
                regs = caller;
        }
        for (size_t i = 1; i < udepth && n < VPROF_MAX_USER_FRAMES + MAX_RECOVERED_CALLERS; i++)
                out[n++] = user[i];
        return n;
}

/* The process exec()ed since the record before: from this record on, its addresses are the new image's. The
 * tables stay; the maps are read afresh and the caches of the old image's addresses go. A record from before
 * the exec that comes later (an off-CPU interval) is resolved with the new image: the count only moves on. */
static void follow_exec(Target *t, const struct vprof_sample *s)
{
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        int r;

        if ((int16_t)(s->exec_count - t->exec_count) <= 0)
                return;
        t->exec_count = s->exec_count;
        r = address_space_new(t->manager->symbolizer, t->pid, &as);
        if (r < 0) {
                log_debug_errno(r, "Cannot read the maps of %d after its exec(): %m", (int)t->pid);
                return;
        }
        address_space_free(t->address_space);
        t->address_space = TAKE_PTR(as);
        frame_cache_clear(t->user_frames);
        log_info("Target %d exec()ed %.*s: its tables stay, its new image's symbols from now on.", (int)t->pid,
                 VPROF_COMM_LEN, s->comm);
}

int target_add_sample(Target *t, const struct vprof_sample *s)
{
        uint32_t frames[VPROF_MAX_KERNEL_FRAMES + VPROF_MAX_USER_FRAMES + MAX_RECOVERED_CALLERS];
        uint64_t user[VPROF_MAX_USER_FRAMES + MAX_RECOVERED_CALLERS];
        unsigned kdepth = s->kernel_depth, udepth;
        char comm[VPROF_COMM_LEN + 1];
        ProfileSampleKind kind;
        ProfileSample sample;
        uint64_t duration_ns;
        size_t n = 0, n_kernel;
        uint32_t stack_id;
        int r;

        if (!classify(t, s, &kind, &duration_ns))
                return 0;
        if (_unlikely_(s->exec_count != t->exec_count))
                follow_exec(t, s);
        udepth = complete_user_stack(t, s, user);

        /* Innermost first: the kernel frames of a kernel-mode sample, then the user frames. Frame 0 of each
         * stack is an interrupted instruction, the others are return addresses. */
        for (unsigned i = 0; i < kdepth; i++) {
                r = resolve_frame(t, s->frames[i], true, i > 0, &frames[n]);
                if (r < 0)
                        return r;
                n++;
        }
        n_kernel = n;
        for (unsigned i = 0; i < udepth; i++) {
                r = resolve_frame(t, user[i], false, i > 0, &frames[n]);
                if (r < 0)
                        return r;
                if (frames[n] == FRAME_NOT_CODE)
                        break;
                n++;
        }
        if (n == 0) {
                /* No stack could be read: the sample still counts, under a name that says so. */
                r = profile_intern_function(t->profile, "[unknown]", "[unknown]", &frames[n]);
                if (r < 0)
                        return r;
                n++;
        }

        memcpy(comm, s->comm, VPROF_COMM_LEN);
        comm[VPROF_COMM_LEN] = '\0';
        sample = (ProfileSample){
                .tid = s->tid,
                .thread_name = comm,
                .frames = frames,
                .n_frames = n,
                .kind = kind,
                .n_kernel_frames = n_kernel,
                .duration_ns = duration_ns,
        };
        r = profile_add_sample_stack(t->profile, &sample, &stack_id);
        if (r < 0)
                return r;
        /* For the journal. Out of memory it misses the sample, which the tables have: only a crash would lose it. */
        if (t->delta)
                (void)profile_delta_add(t->delta, &sample, stack_id);
        /* The process is named after its main thread, which exec and prctl may rename. */
        if (s->tid == (uint32_t)t->pid && strcmp(t->info.comm, comm) != 0)
                snprintf(t->info.comm, sizeof(t->info.comm), "%s", comm);
        return 0;
}
