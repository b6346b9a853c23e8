/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "address-space.h"
#include "demangle.h"
#include "drain.h"
#include "log.h"
#include "time-util.h"
#include "unwinder.h"
#include "utf8.h"

/* The hot path of the daemon: every record the BPF program keeps comes through here, Frequency= a second for
 * each CPU that runs a target, and the targets' off-CPU intervals. Most frames of a busy target were seen before,
 * so the common case is a CFI step or two at the leaf (on a file's call frame information parsed once), a frame
 * cache hit per frame and one profile_add_sample_stack(); the symbolizer runs for new addresses only. */

/* addr: the frame's address, for the run-time address of its function (pprof's Function and Location). */
static int intern_symbol(Target *t, const Symbol *sym, bool kernel, uint64_t addr, uint32_t *ret_id)
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
        if (r < 0)
                return r;
        /* The symbol's start (offset is addr's from it); a frame without a symbol is named by its own address. */
        r = profile_set_function_address(t->profile, *ret_id, sym->function ? addr - sym->offset : addr);
        if (r < 0 || !demangled)
                return r;
        return profile_set_mangled(t->profile, *ret_id, name);
}

/* The id of a return address outside executable memory: a frame-pointer walk that went through code built
 * without frame pointers (most distribution libraries) read junk there, and everything after it is junk too. */
#define FRAME_NOT_CODE UINT32_MAX

/* Whether a failed lookup of inlined functions says something of the file (no DWARF at that address, a damaged
 * unit, no code file): then "none" is cached as an answer is, or every process of that image, every child of a
 * storm, would open the file and search its units again for it. Not a passing want of memory or descriptors. */
static bool inline_failure_lasts(int r)
{
        return !IN_SET(r, -ENOMEM, -EMFILE, -ENFILE, -EINTR, -EAGAIN);
}

/* The names of the functions inlined at lookup_addr, innermost first, without the function they are inlined into:
 * from the cache shared by the targets, else from the file's DWARF (then cached). 1 and the names (valid until
 * the next lookup), 0 for none known, -errno. */
static int inlined_names(Drain *d, Target *t, uint64_t lookup_addr, const char *const **ret_names, size_t *ret_n)
{
        InlineFrame frames[INLINE_FRAMES_MAX + 1];
        const char *names[INLINE_FRAMES_MAX];
        const ProcMap *pm = proc_maps_find(address_space_maps(t->address_space, NULL), lookup_addr);
        InlineKey key = {};
        uint64_t vaddr;
        int fd, n, r;

        if (!d->inline_cache) {
                r = inline_cache_new(DRAIN_INLINE_CACHE_MAX, &d->inline_cache);
                if (r < 0)
                        return r;
        }
        if (pm && pm->inode != 0) {
                key = (InlineKey){ .dev_major = pm->dev_major, .dev_minor = pm->dev_minor, .inode = pm->inode,
                                   .offset = lookup_addr - pm->start + pm->offset };
                if (inline_cache_get(d->inline_cache, &key, ret_names, ret_n) > 0)
                        return 1;
        }
        /* Started over past its bounds, but never for the one file it holds: that would read and index the file
         * again at every new address (a budget of 0 is no bound). */
        if (!d->inline_reader ||
            (line_reader_files(d->inline_reader) > 1 &&
             (line_reader_files(d->inline_reader) >= DRAIN_INLINE_FILES_MAX ||
              (symbolizer_budget(d->symbolizer) > 0 &&
               line_reader_bytes(d->inline_reader) > symbolizer_budget(d->symbolizer) / 2)))) {
                d->inline_reader = line_reader_free(d->inline_reader);
                if (line_reader_new(&d->inline_reader) < 0)
                        return 0;
        }
        r = address_space_dwarf_file(t->address_space, lookup_addr, &fd, &vaddr);
        if (r < 0)
                goto none;
        d->stats.inline_expansions++;
        d->inline_read_usec = now_usec(CLOCK_MONOTONIC);
        n = line_reader_inline(d->inline_reader, fd, vaddr, frames, ELEMENTSOF(frames));
        if (n < 0) {
                r = n;
                goto none;
        }
        d->stats.inline_addresses += n > 1;
        /* frames[n - 1] is the subprogram: the symbol stands for it. */
        for (int i = 0; i < n - 1; i++)
                names[i] = frames[i].function;
        if (!pm || pm->inode == 0 || inline_cache_put(d->inline_cache, &key, names, n > 1 ? (size_t)n - 1 : 0) < 0)
                return 0; /* names[] points into the reader: not kept */
        return inline_cache_get(d->inline_cache, &key, ret_names, ret_n);
none:
        if (pm && pm->inode != 0 && inline_failure_lasts(r))
                (void)inline_cache_put(d->inline_cache, &key, NULL, 0);
        return 0;
}

/* The functions inlined at a new user address, looked up in its file's DWARF (inline-frames.h): ids[0..n) of them,
 * innermost first, then id, the function they were inlined into, as the symbols name it (ELF symbols win over
 * DWARF for the outermost: the same name as without DWARF). 1 (only id) when the address is in no inlined code,
 * its file has no DWARF, or there is no room. */
static size_t expand_inlined(Drain *d, Target *t, const Symbol *sym, uint64_t lookup_addr, uint64_t start,
                             uint32_t id, uint32_t *ids, size_t room)
{
        const char *const *names;
        size_t m = 0, n;

        if (room < 2 || inlined_names(d, t, lookup_addr, &names, &n) <= 0 || n == 0)
                goto only;
        for (size_t i = 0; i < n && m + 1 < room; i++) {
                _cleanup_free_ char *demangled = NULL;
                const char *name = names[i];

                if (demangle_symbol(name, &demangled) < 0 ||
                    profile_intern_frame(t->profile, sym->module, demangled ?: name, true, &ids[m]) < 0)
                        goto only;
                /* Where its code is: the function it was inlined into. */
                (void)profile_set_function_address(t->profile, ids[m], start);
                m++;
        }
        ids[m++] = id;
        return m;
only:
        ids[0] = id;
        return 1;
}

/* The function ids of a frame into ids[0..room) (room >= 1): the function at addr, preceded by the functions
 * inlined there, innermost first (only the function when they do not fit). Their number, or -errno. */
static int resolve_frame(Drain *d, Target *t, uint64_t addr, bool kernel, bool return_address, uint32_t *ids,
                         size_t room)
{
        FrameCache *cache = kernel ? t->kernel_frames : t->user_frames;
        uint64_t key = return_address ? addr - 1 : addr;
        Symbol sym;
        uint32_t id;
        size_t n;
        int r;

        /* Kernel names cached before kallsyms was read again may have changed. */
        if (kernel && _unlikely_(t->kallsyms_generation != symbolizer_kallsyms_generation(d->symbolizer))) {
                frame_cache_clear(cache);
                t->kallsyms_generation = symbolizer_kallsyms_generation(d->symbolizer);
        }
        /* The hot path: most frames of a busy target were seen before. */
        if (frame_cache_get(cache, key, &id)) {
                const uint32_t *chain;

                if (_likely_(!(id & FRAME_CACHE_CHAIN))) {
                        ids[0] = id;
                        return 1;
                }
                chain = frame_cache_chain(cache, id, &n);
                if (n > room) {
                        ids[0] = chain[n - 1]; /* the function itself */
                        return 1;
                }
                memcpy(ids, chain, n * sizeof(*ids));
                return (int)n;
        }

        if (kernel)
                r = symbolizer_resolve_kernel(d->symbolizer, addr, &sym);
        else
                r = address_space_resolve(t->address_space, addr, return_address, &sym);
        if (r < 0)
                return r;
        if (return_address && !sym.code) {
                ids[0] = FRAME_NOT_CODE;
                return 1;
        }
        r = intern_symbol(t, &sym, kernel, addr, &id);
        if (r < 0)
                return r;
        /* Inlined functions: in the user code of files, from their DWARF (a return address's call is at key). */
        n = 1;
        ids[0] = id;
        if (!kernel && sym.code && !sym.transient && sym.function)
                n = expand_inlined(d, t, &sym, key, addr - sym.offset, id, ids,
                                   MIN(room, (size_t)INLINE_FRAMES_MAX + 1));
        /* Only code is cached: an address outside it may become code later (dlopen, exec), and the
         * symbolizer re-reads the maps for it, at most every 100 ms. Nor are names that may change (JIT code,
         * a kernel address before kallsyms is read again). A full cache starts over rather than
         * grow with every address a JIT or a huge binary ever ran: it only saves lookups. A user frame without
         * room for all its inlined functions is not cached: another stack may have room for them. */
        if (sym.code && !sym.transient && (kernel || room > INLINE_FRAMES_MAX)) {
                r = n > 1 ? frame_cache_put_chain(cache, key, ids, n) : frame_cache_put(cache, key, id);
                if (r < 0)
                        return r;
        }
        return (int)n;
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
static size_t complete_user_stack(Target *t, const struct vprof_sample *s, uint64_t *out, size_t *ret_recovered)
{
        const __u64 *user = s->frames + s->kernel_depth; /* depths checked against the record's size */
        size_t udepth = s->user_depth, n = 0;
        UnwindRegs regs, caller;

        *ret_recovered = 0;
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
        *ret_recovered = n - 1;
        for (size_t i = 1; i < udepth && n < VPROF_MAX_USER_FRAMES + MAX_RECOVERED_CALLERS; i++)
                out[n++] = user[i];
        return n;
}

/* The process exec()ed since the record before: from this record on, its addresses are the new image's. The
 * tables stay; the maps are read afresh and the caches of the old image's addresses go. A record from before
 * the exec that comes later (an off-CPU interval) is resolved with the new image: the count only moves on. */
static void follow_exec(Drain *d, Target *t, const struct vprof_sample *s)
{
        _cleanup_(address_space_freep) AddressSpace *as = NULL;
        char comm[PROC_COMM_ESCAPED_SIZE];
        int r;

        if ((int16_t)(s->exec_count - t->exec_count) <= 0)
                return;
        t->exec_count = s->exec_count;
        r = address_space_new(d->symbolizer, t->pid, &as);
        if (r < 0) {
                log_debug_errno(r, "Cannot read the maps of %d after its exec(): %m", (int)t->pid);
                return;
        }
        address_space_free(t->address_space);
        t->address_space = TAKE_PTR(as);
        frame_cache_clear(t->user_frames);
        log_info("Target %d exec()ed %s: its tables stay, its new image's symbols from now on.", (int)t->pid,
                 utf8_escape_buf(s->comm, strnlen(s->comm, PROC_COMM_LEN), comm, sizeof(comm)));
}

/* What the BPF walk asks of the unwind tables: the table of the module of the first frame that fell back for
 * want of one, fresh mappings after a pc outside them. */
static void note_walk(Drain *d, Target *t, const struct vprof_sample *s)
{
        uint64_t addr = 0;

        if ((s->walk_flags & VPROF_WALK_FELL_BACK) && s->fallback_frame < s->user_depth) {
                uint64_t frame = s->frames[s->kernel_depth + s->fallback_frame];

                /* A return address is looked up at its call; frame 0 and a frame after a signal are exact. */
                addr = frame & ~VPROF_FRAME_EXACT;
                if (s->fallback_frame > 0 && !(frame & VPROF_FRAME_EXACT) && addr > 0)
                        addr--;
        }
        d->on_unwind(d->unwind_userdata, t, addr, s->walk_flags & VPROF_WALK_UNKNOWN_PC);
}

int drain_sample(Drain *d, Target *t, const struct vprof_sample *s)
{
        /* Twice the frames: room for the functions inlined in them (resolve_frame()). */
        uint32_t frames[VPROF_MAX_KERNEL_FRAMES + 2 * (VPROF_MAX_USER_FRAMES + MAX_RECOVERED_CALLERS)];
        uint64_t user[VPROF_MAX_USER_FRAMES + MAX_RECOVERED_CALLERS];
        unsigned kdepth = s->kernel_depth, udepth;
        char comm[PROC_COMM_ESCAPED_SIZE];
        ProfileSampleKind kind;
        ProfileSample sample;
        uint64_t duration_ns;
        size_t n = 0, n_kernel, recovered, python_at = 0;
        uint32_t stack_id;
        int r;

        if (!classify(t, s, &kind, &duration_ns))
                return 0;
        if (_unlikely_(s->exec_count != t->exec_count))
                follow_exec(d, t, s);
        if (_unlikely_(s->maps_generation != t->maps_generation))
                maps_change_sample(t, s, &d->stats.maps);
        if (_unlikely_(s->walk_flags & (VPROF_WALK_FELL_BACK | VPROF_WALK_UNKNOWN_PC)) && d->on_unwind)
                note_walk(d, t, s);
        udepth = complete_user_stack(t, s, user, &recovered);

        /* Innermost first: the kernel frames of a kernel-mode sample, then the user frames. Frame 0 of each
         * stack is an interrupted instruction, the others are return addresses. */
        for (unsigned i = 0; i < kdepth; i++) {
                r = resolve_frame(d, t, s->frames[i], true, i > 0, &frames[n], 1);
                if (r < 0)
                        return r;
                n++;
        }
        n_kernel = n;
        for (unsigned i = 0; i < udepth; i++) {
                /* After a signal frame the walk gives the interrupted instruction, not a return address. */
                bool exact = user[i] & VPROF_FRAME_EXACT;

                /* The Python frames an evaluation-loop frame runs are its callees: before it, and in its place
                 * (docs/COUNTING.md) unless PythonInterpreterFrames= keeps it. Callers put back (recovered)
                 * follow frame 0 and have none. */
                if (s->python_depth > 0 && (i == 0 || i > recovered)) {
                        r = drain_python_run(&d->stats.python, t, s, i == 0 ? 0 : i - recovered, &python_at, &frames[n],
                                             ELEMENTSOF(frames) - n, udepth - i);
                        if (r < 0)
                                return r;
                        n += r;
                        if (r > 0 && !d->python_interpreter_frames)
                                continue;
                }
                /* Room for the inlined functions of this frame, keeping one for each frame after it. */
                r = resolve_frame(d, t, user[i] & ~VPROF_FRAME_EXACT, false, i > 0 && !exact, &frames[n],
                                  ELEMENTSOF(frames) - n - (udepth - 1 - i));
                if (r < 0)
                        return r;
                if (frames[n] == FRAME_NOT_CODE)
                        break;
                n += r;
        }
        if (python_at < s->python_depth) /* runs of frames the stack counted does not reach, or no tag */
                d->stats.python.dropped += (s->python_depth - python_at) / VPROF_PYTHON_FRAME_WORDS;
        if (n == 0) {
                /* No stack could be read: the sample still counts, under a name that says so. */
                r = profile_intern_function(t->profile, "[unknown]", "[unknown]", &frames[n]);
                if (r < 0)
                        return r;
                n++;
        }

        /* The thread's name as the kernel holds it, any bytes: escaped here, where it comes in, so that the
         * tables, the saved state and every answer hold valid UTF-8. A pass over 16 bytes, as the copy was. */
        utf8_escape_buf(s->comm, strnlen(s->comm, PROC_COMM_LEN), comm, sizeof(comm));
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
                strcpy(t->info.comm, comm); /* both escaped: the same size */
        return 0;
}

/* The record as the BPF program writes it: cut after its last frame, padded to 8 bytes by the ring buffer.
 * Anything else would make the frames past its end be read. */
static bool record_valid(const struct vprof_sample *s, size_t size)
{
        return size >= VPROF_SAMPLE_HEADER_SIZE && s->kernel_depth <= VPROF_MAX_KERNEL_FRAMES &&
               s->user_depth <= VPROF_MAX_USER_FRAMES && s->python_depth % VPROF_PYTHON_FRAME_WORDS == 0 &&
               (size_t)s->kernel_depth + s->user_depth + s->python_depth <= VPROF_MAX_FRAMES &&
               size >= VPROF_SAMPLE_SIZE((size_t)s->kernel_depth + s->user_depth + s->python_depth);
}

/* A sample that came with the top of its stack, its walk having fallen back for a table on its way: walked again
 * by the CFI interpreter with the mappings of its generation (the exec and the changes before it applied first),
 * and counted once, with that walk or, when it finds no better one, as the BPF program walked it. */
static int drain_sample_with_stack(Drain *d, Target *t, const struct vprof_sample_stack *c)
{
        const struct vprof_sample *s = &c->sample;
        struct vprof_sample finished;

        if (_unlikely_(s->exec_count != t->exec_count))
                follow_exec(d, t, s);
        if (_unlikely_(s->maps_generation != t->maps_generation))
                maps_change_sample(t, s, &d->stats.maps);
        if (t->address_space && !t->exited && s->exec_count == t->exec_count &&
            unwind_pending_finish(t->address_space, c, &finished)) {
                d->stats.pending.finished++;
                return drain_sample(d, t, &finished);
        }
        d->stats.pending.unfinished++;
        return drain_sample(d, t, s);
}

/* A stack copy of the unwind self-check: compared with the walk of its sample, which its own record counted. A copy
 * of a target detached meanwhile has nothing to be compared with. */
static void drain_stack_copy(Drain *d, const struct vprof_stack_copy *c, size_t size)
{
        Target *t = hashmap_get(d->targets, UINT64_TO_PTR(c->header.tgid));

        if (t)
                unwind_self_check_record(&d->self_check, t, c, size);
}

/* The records' buffer kept from one read to the next up to this size; a larger one goes when it is done with. */
#define DRAIN_PENDING_KEEP ((size_t)64 << 10)

/* A record of no target, or one that a waiting record's process takes over: copied, to be counted by
 * drain_members(). False when it cannot wait: a sample past DRAIN_PENDING_MAX, or out of memory. */
static bool wait_for_member(Drain *d, const void *data, size_t size, bool sample)
{
        DrainPending *p = &d->pending;
        size_t need = sizeof(uint64_t) + ALIGN_TO(size, sizeof(uint64_t));
        uint32_t tgid = ((const struct vprof_record_header *)data)->tgid;
        uint64_t header = size;

        if (sample && p->sample_bytes + need > DRAIN_PENDING_MAX)
                return false;
        if (!p->pids) {
                p->pids = hashmap_new(&uint64_hash_ops);
                if (!p->pids)
                        return false;
        }
        if (p->size + need > p->allocated) {
                size_t allocated = MAX(p->allocated * 2, p->size + need + 4096);
                uint8_t *data_new = realloc(p->data, allocated);

                if (!data_new)
                        return false;
                p->data = data_new;
                p->allocated = allocated;
        }
        if (hashmap_put(p->pids, UINT64_TO_PTR((uint64_t)tgid), UINT64_TO_PTR(1)) < 0 &&
            !hashmap_contains(p->pids, UINT64_TO_PTR((uint64_t)tgid)))
                return false;
        memcpy(p->data + p->size, &header, sizeof(header));
        memcpy(p->data + p->size + sizeof(header), data, size);
        p->size += need;
        if (sample)
                p->sample_bytes += need;
        return true;
}

static bool waiting(const Drain *d, uint32_t tgid)
{
        return d->pending.size > 0 && hashmap_contains(d->pending.pids, UINT64_TO_PTR((uint64_t)tgid));
}

/* A fork of a target that follows its children: the child's target is made after the read, before any record of
 * its is counted. */
static void drain_fork(Drain *d, const struct vprof_fork *f, size_t size, bool deferred)
{
        if (size < sizeof(*f)) {
                d->stats.forks_malformed++;
                return;
        }
        if (!d->on_member)
                return;
        if (deferred)
                (void)d->on_member(d->member_userdata, f->group, f->header.tgid, f);
        else if (!wait_for_member(d, f, size, false))
                d->stats.forks_lost++;
}

/* A change of a target's executable mappings, made where it comes in the ring (maps-change.h); of no target,
 * nothing to change. */
static void drain_maps_change(Drain *d, const struct vprof_maps_change *c, size_t size)
{
        Target *t;

        if (size < sizeof(*c)) {
                d->stats.malformed++;
                return;
        }
        t = hashmap_get(d->targets, UINT64_TO_PTR((uint64_t)c->header.tgid));
        /* The new mapping's table found (or compiled) now, so that the push after this read gives it to the walk:
         * not at the first sample that falls back in it, a wakeup later. */
        if (t && maps_change_apply(t, c, &d->stats.maps) && d->on_unwind)
                d->on_unwind(d->unwind_userdata, t, c->start, false);
}

static void count_unclaimed(Drain *d, const struct vprof_record_header *h)
{
        if (h->flags & VPROF_SAMPLE_OFF_CPU)
                d->stats.off_cpu_unclaimed++;
        else
                d->stats.samples_unclaimed++;
}

/* deferred: drain_members() hands it over, after the ring buffer's read; on_member may be called. */
static void record(Drain *d, const void *data, size_t size, bool deferred)
{
        const struct vprof_record_header *h = data;
        const struct vprof_sample_stack *with_stack = NULL;
        const struct vprof_sample *s = data;
        size_t sample_size = size;
        bool off_cpu;
        Target *t;

        /* Every record begins with the header, whose flags say what it is. */
        if (_unlikely_(size < sizeof(*h))) {
                d->stats.malformed++;
                return;
        }
        /* Behind a record of its process that waits: in its order, so that a child's fork comes first. */
        if (!deferred && _unlikely_(waiting(d, h->tgid))) {
                unsigned type = h->flags & VPROF_RECORD_TYPE_MASK;

                if (wait_for_member(d, data, size, type != VPROF_SAMPLE_FORK))
                        return;
                if (type == VPROF_SAMPLE_FORK)
                        d->stats.forks_lost++;
                else if (type == 0 || type == VPROF_SAMPLE_WITH_STACK)
                        count_unclaimed(d, h);
                return; /* a stack copy without its sample: nothing to compare */
        }
        switch (h->flags & VPROF_RECORD_TYPE_MASK) {
        case 0:
                break;
        case VPROF_SAMPLE_STACK_COPY:
                drain_stack_copy(d, data, size);
                return;
        case VPROF_SAMPLE_WITH_STACK:
                /* The sample whole, then its stack: a fixed size. */
                if (_unlikely_(size < sizeof(*with_stack))) {
                        d->stats.malformed++;
                        return;
                }
                with_stack = data;
                sample_size = sizeof(with_stack->sample);
                break;
        case VPROF_SAMPLE_MAPS_CHANGE:
                drain_maps_change(d, data, size);
                return;
        default: /* VPROF_SAMPLE_FORK */
                drain_fork(d, data, size, deferred);
                return;
        }

        if (_unlikely_(!record_valid(s, sample_size))) {
                d->stats.malformed++;
                return;
        }
        off_cpu = h->flags & VPROF_SAMPLE_OFF_CPU;
        t = hashmap_get(d->targets, UINT64_TO_PTR(h->tgid));
        /* A process of a group that is no target yet: a cgroup's (the program keeps its samples by its cgroup),
         * or a child whose fork record made none. It is made one after the read. */
        if (!t && s->group != 0 && d->on_member) {
                if (deferred)
                        t = d->on_member(d->member_userdata, s->group, h->tgid, NULL);
                else if (wait_for_member(d, data, size, true))
                        return;
        }
        if (!t) {
                count_unclaimed(d, h);
                return;
        }
        /* Only ENOMEM fails here: count the loss and go on with the other records. */
        if ((with_stack ? drain_sample_with_stack(d, t, with_stack) : drain_sample(d, t, s)) < 0) {
                if (!off_cpu)
                        d->stats.samples_failed++;
                else if (h->flags & VPROF_SAMPLE_PREEMPTED)
                        d->stats.off_cpu_failed_preempted++;
                else
                        d->stats.off_cpu_failed_blocked++;
        }
}

void drain_record(Drain *d, const void *data, size_t size)
{
        record(d, data, size, false);
}

void drain_members(Drain *d)
{
        DrainPending p = d->pending;

        if (p.size == 0)
                return;
        /* Taken: what on_member does cannot add to the list being read. */
        d->pending = (DrainPending){ .pids = p.pids };
        hashmap_clear(p.pids);
        for (size_t i = 0; i < p.size;) {
                uint64_t size;

                memcpy(&size, p.data + i, sizeof(size));
                record(d, p.data + i + sizeof(size), (size_t)size, true);
                i += sizeof(size) + ALIGN_TO((size_t)size, sizeof(uint64_t));
        }
        /* The buffer kept for the next read, unless one came meanwhile or a storm made it large. */
        if (!d->pending.data && p.allocated <= DRAIN_PENDING_KEEP) {
                d->pending.data = p.data;
                d->pending.allocated = p.allocated;
        } else
                free(p.data);
}

void drain_release_dwarf(Drain *d)
{
        d->inline_reader = line_reader_free(d->inline_reader);
        inline_cache_clear(d->inline_cache);
}

void drain_release_idle_dwarf(Drain *d, uint64_t now)
{
        if (d->inline_reader && now - d->inline_read_usec >= DRAIN_INLINE_IDLE_USEC)
                d->inline_reader = line_reader_free(d->inline_reader);
}

void drain_done(Drain *d)
{
        d->inline_reader = line_reader_free(d->inline_reader);
        d->inline_cache = inline_cache_free(d->inline_cache);
        free(d->pending.data);
        hashmap_free(d->pending.pids);
        d->pending = (DrainPending){};
}
