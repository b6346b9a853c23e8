/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The unwind self-check (daemon/unwind-self-check.h) on a real stack: this process's, captured inside a callback
 * of the unwind fixture's library (built without frame pointers), as the BPF program copies it: the registers, the
 * words from the stack pointer up, and as "the walk's frames" those of another unwinder, glibc's backtrace()
 * (libgcc's, from .eh_frame too). Then the same stack altered the ways a broken walk would. No root, no BPF. */
#include <check.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "drain.h"
#include "hashmap.h"
#include "macros.h"
#include "profile.h"
#include "symbolizer.h"
#include "target.h"
#include "unwind-self-check.h"
#include "vprof-abi.h"

#define PAGE 4096

/* From the command line: the unwind fixture's library. */
static const char *arg_lib;

/* What the callback captured, for the test that called it. */
static struct vprof_stack_copy *captured;

/* The stack from sp up, as the BPF program reads it: to the end of sp's page, then whole pages while they fit and
 * can be read. Through /proc/self/mem, which fails where nothing is mapped instead of faulting. */
static void copy_stack(struct vprof_stack_copy *c, uint64_t sp)
{
        int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
        size_t n = PAGE - (sp & (PAGE - 1));

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pread(fd, c->stack, n, (off_t)sp), (ssize_t)n);
        while (n + PAGE <= sizeof(c->stack) && pread(fd, c->stack + n, PAGE, (off_t)(sp + n)) == PAGE)
                n += PAGE;
        c->stack_bytes = (uint16_t)n;
        close(fd);
}

/* Called back by the library: frame 0 is right after backtrace() returned, where rsp and rbp are read. Nothing
 * above the stack pointer changes until the copy is made. */
static __attribute__((noinline)) uint64_t capture(uint64_t x)
{
        void *frames[VPROF_MAX_USER_FRAMES];
        Dl_info self, info;
        uint64_t sp, bp;
        int n;

        n = backtrace(frames, ELEMENTSOF(frames));
        __asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1" : "=r"(sp), "=r"(bp) : : "memory");
        /* Under ASan, backtrace() is the sanitizer's interceptor, which calls glibc's: its own frame (in
         * libasan) comes first. Frame 0 is the first in this program. */
        ck_assert_int_ne(dladdr((void *)capture, &self), 0);
        while (n > 0 && !(dladdr(frames[0], &info) && info.dli_fbase == self.dli_fbase))
                memmove(frames, frames + 1, --n * sizeof(frames[0]));
        ck_assert_int_gt(n, 3);
        *captured = (struct vprof_stack_copy){
                .tgid = (uint32_t)getpid(),
                .tid = (uint32_t)getpid(),
                .flags = VPROF_SAMPLE_STACK_COPY,
                .user_sp = sp,
                .user_bp = bp,
                .user_depth = (uint16_t)n,
                /* backtrace() goes on to _start, whose return address is undefined. */
                .walk_end = VPROF_WALK_END,
        };
        for (int i = 0; i < n; i++)
                captured->frames[i] = (uintptr_t)frames[i];
        copy_stack(captured, sp);
        return x + (uint64_t)n;
}

/* The copy and the process to compare it in: this one, attached as the daemon attaches a target. */
typedef struct Check {
        Symbolizer *symbolizer;
        Target *target;
        struct vprof_stack_copy *copy; /* as captured */
        struct vprof_stack_copy *c;    /* what a test alters */
        bool whole_stack;              /* the copy reaches the end of the stack, _start's frame */
} Check;

static void check_init(Check *k)
{
        TargetContext context = { .frequency = 99, .max_functions = 1000, .max_stacks = 1000 };
        uint64_t (*lib_call)(uint64_t (*)(uint64_t), uint64_t);
        void *handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        pid_t tgid = 0;

        ck_assert_msg(handle, "dlopen: %s", dlerror());
        lib_call = (uint64_t(*)(uint64_t (*)(uint64_t), uint64_t))dlsym(handle, "vprof_unwind_lib_call");
        ck_assert_ptr_nonnull(lib_call);
        k->copy = captured = calloc(1, sizeof(*captured));
        k->c = malloc(sizeof(*k->c));
        ck_assert_ptr_nonnull(k->copy);
        ck_assert_ptr_nonnull(k->c);
        ck_assert_uint_ne(lib_call(capture, 1), 0);
        /* A copy shorter than 16 KiB ended where the stack does. */
        k->whole_stack = k->copy->stack_bytes < sizeof(k->copy->stack);

        ck_assert_int_eq(symbolizer_new(&k->symbolizer), 0);
        context.symbolizer = k->symbolizer;
        ck_assert_int_eq(target_new(&context, getpid(), getuid(), 0, &k->target, &tgid), 0);
        memcpy(k->c, k->copy, sizeof(*k->c));
}

static void check_done(Check *k)
{
        target_free(k->target);
        symbolizer_free(k->symbolizer);
        free(k->copy);
        free(k->c);
        captured = NULL;
}

/* k->c as if sampled in the library's frame, frame 1, right after the callback returned: its registers are those the
 * callback's frame record gives, its stack the copy's from there. */
static void sampled_in_library(Check *k)
{
        uint64_t sp = k->copy->user_bp + 16, bp, off = sp - k->copy->user_sp;

        ck_assert_uint_le(off, k->copy->stack_bytes);
        memcpy(&bp, k->copy->stack + (k->copy->user_bp - k->copy->user_sp), sizeof(bp));
        memcpy(k->c, k->copy, sizeof(*k->c));
        k->c->user_sp = sp;
        k->c->user_bp = bp;
        k->c->stack_bytes = (uint16_t)(k->copy->stack_bytes - off);
        memmove(k->c->stack, k->copy->stack + off, k->c->stack_bytes);
        memmove(k->c->frames, k->copy->frames + 1, (k->copy->user_depth - 1) * sizeof(uint64_t));
        k->c->user_depth = (uint16_t)(k->copy->user_depth - 1);
}

static UnwindCheckResult compare(Check *k)
{
        UnwindCheckResult res;

        unwind_self_check_compare(k->target->address_space, k->c, &res);
        return res;
}

/* The two unwinders agree on every frame of the real stack, through the library without frame pointers, down to
 * _start when the copy reaches it. */
START_TEST(test_agree)
{
        _cleanup_(check_done) Check k = {};
        UnwindCheckResult res;

        check_init(&k);
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_AGREED);
        /* At least from the callback to the library, and from the library to this function. */
        ck_assert_uint_ge(res.steps, 2);
        /* Every frame, and the end: _start's rule says it is the last. */
        if (k.whole_stack)
                ck_assert_uint_eq(res.steps, k.c->user_depth);

        /* The same from the library's frame, which has none. */
        sampled_in_library(&k);
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_AGREED);
        if (k.whole_stack)
                ck_assert_uint_eq(res.steps, k.c->user_depth);
}
END_TEST

/* A walk whose frame 2 is another function's: the first differing frame is named, with both unwinders' frames. */
START_TEST(test_callers_differ)
{
        _cleanup_(check_done) Check k = {};
        UnwindCheckResult res;

        check_init(&k);
        k.c->frames[2] = k.copy->frames[0];
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_DISAGREED);
        ck_assert_uint_eq(res.frame, 2);
        ck_assert_uint_eq(res.steps, 1);
        ck_assert_uint_eq(res.walk_frame, k.copy->frames[0]);
        ck_assert_uint_eq(res.interpreter_frame, k.copy->frames[2]);
        ck_assert_ptr_nonnull(res.reason);
}
END_TEST

/* A walk that ends early by an end marker, and one that goes on past _start. */
START_TEST(test_ends_differ)
{
        _cleanup_(check_done) Check k = {};
        unsigned n;
        UnwindCheckResult res;

        check_init(&k);
        k.c->user_depth = 3;
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_DISAGREED);
        ck_assert_uint_eq(res.frame, 3);
        ck_assert_uint_eq(res.walk_frame, 0);
        ck_assert_uint_eq(res.interpreter_frame, k.copy->frames[3]);

        /* The same depth, ended for the walk's own reasons (a fault): nothing to say about frame 3. */
        k.c->walk_end = VPROF_WALK_FAULT;
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_AGREED);
        ck_assert_uint_eq(res.steps, 2);

        if (!k.whole_stack)
                return;
        n = k.copy->user_depth;
        memcpy(k.c, k.copy, sizeof(*k.c));
        k.c->frames[n] = k.copy->frames[n - 1];
        k.c->user_depth = (uint16_t)(n + 1);
        k.c->walk_end = VPROF_WALK_DEPTH;
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_DISAGREED);
        ck_assert_uint_eq(res.frame, n);
        ck_assert_uint_eq(res.interpreter_frame, 0);
}
END_TEST

/* A frame-pointer step through the library, which keeps no frame: it skips this function, as the walk does for a
 * file without its table yet. With the walk's flag that says so, the comparison takes it and goes on; without, it
 * is a disagreement. */
START_TEST(test_frame_pointer_step)
{
        _cleanup_(check_done) Check k = {};
        uint64_t saved_bp, fp_frame;
        UnwindCheckResult res;
        unsigned n;

        check_init(&k);
        n = k.copy->user_depth;
        /* The callback keeps a frame: its saved rbp is the library's, which leaves it alone, so this function's
         * frame record, whose return address is frame 3. */
        ck_assert_uint_ge(k.copy->user_bp, k.copy->user_sp);
        ck_assert_uint_le(k.copy->user_bp + 8 - k.copy->user_sp, k.copy->stack_bytes);
        memcpy(&saved_bp, k.copy->stack + (k.copy->user_bp - k.copy->user_sp), sizeof(saved_bp));
        ck_assert_uint_ge(saved_bp, k.copy->user_sp);
        ck_assert_uint_le(saved_bp + 16 - k.copy->user_sp, k.copy->stack_bytes);
        memcpy(&fp_frame, k.copy->stack + (saved_bp + 8 - k.copy->user_sp), sizeof(fp_frame));
        ck_assert_uint_eq(fp_frame, k.copy->frames[3]);

        memmove(k.c->frames + 2, k.copy->frames + 3, (n - 3) * sizeof(uint64_t));
        k.c->user_depth = (uint16_t)(n - 1);
        k.c->walk_flags = VPROF_WALK_FELL_BACK;
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_AGREED);
        if (k.whole_stack)
                ck_assert_uint_eq(res.steps, n - 2);

        k.c->walk_flags = 0;
        res = compare(&k);
        ck_assert_int_eq(res.outcome, UNWIND_CHECK_DISAGREED);
        ck_assert_uint_eq(res.frame, 2);
        ck_assert_uint_eq(res.interpreter_frame, k.copy->frames[2]);
}
END_TEST

/* Nothing to compare: frame 0 in no mapping, no stack copied, a walk of frame 0 only, a walk by frame pointers only
 * (before the tables) that read its frame 1 through a frame pointer of code without one, pointing anywhere. */
START_TEST(test_unchecked)
{
        _cleanup_(check_done) Check k = {};
        uint64_t junk;

        check_init(&k);
        k.c->frames[0] = 0x1000;
        ck_assert_int_eq(compare(&k).outcome, UNWIND_CHECK_UNCHECKED);

        memcpy(k.c, k.copy, sizeof(*k.c));
        k.c->stack_bytes = 0;
        ck_assert_int_eq(compare(&k).outcome, UNWIND_CHECK_UNCHECKED);

        memcpy(k.c, k.copy, sizeof(*k.c));
        k.c->user_depth = 1;
        k.c->walk_end = VPROF_WALK_END_FP;
        ck_assert_int_eq(compare(&k).outcome, UNWIND_CHECK_UNCHECKED);

        /* Sampled in the library, which keeps no frame pointer: rbp at no word's address in the copy, read as a frame
         * record, gave the walk's frame 1. */
        sampled_in_library(&k);
        k.c->user_bp = k.c->user_sp + 13;
        memcpy(&junk, k.c->stack + 13 + 8, sizeof(junk));
        ck_assert_uint_ne(junk, k.c->frames[1]);
        k.c->frames[1] = junk;
        k.c->user_depth = 2;
        k.c->walk_end = VPROF_WALK_FAULT;
        k.c->walk_flags = VPROF_WALK_NO_MAPPINGS | VPROF_WALK_LEAF_FP;
        ck_assert_int_eq(compare(&k).outcome, UNWIND_CHECK_UNCHECKED);
        /* Without the flags that say the walk took such a step, the interpreter's caller is another. */
        k.c->walk_flags = 0;
        ck_assert_int_eq(compare(&k).outcome, UNWIND_CHECK_DISAGREED);

        /* rbp 8 bytes below the stack pointer, where the walk still reads a frame record: half of it is not in the
         * copy, so the step cannot be told from a wrong one. */
        k.c->user_bp = k.c->user_sp - 8;
        memcpy(&junk, k.c->stack, sizeof(junk));
        ck_assert_uint_ne(junk, k.copy->frames[2]);
        k.c->frames[1] = junk;
        k.c->walk_flags = VPROF_WALK_NO_MAPPINGS | VPROF_WALK_LEAF_FP;
        ck_assert_int_eq(compare(&k).outcome, UNWIND_CHECK_UNCHECKED);
}
END_TEST

/* Through the drain, as the ring buffer hands the copies over: counted by outcome, never as samples; a copy of a
 * process that is no target, of the image before an exec(), or cut short is not compared. */
START_TEST(test_drain)
{
        _cleanup_(check_done) Check k = {};
        Hashmap *targets = hashmap_new(&uint64_hash_ops);
        const UnwindSelfCheckStats *st;
        Drain d;

        check_init(&k);
        ck_assert_ptr_nonnull(targets);
        ck_assert_int_ge(hashmap_put(targets, UINT64_TO_PTR((uint64_t)getpid()), k.target), 0);
        d = (Drain){ .targets = targets, .symbolizer = k.symbolizer };
        st = &d.self_check.stats;

        drain_record(&d, k.c, sizeof(*k.c));
        k.c->frames[2] = k.copy->frames[0];
        drain_record(&d, k.c, sizeof(*k.c));
        memcpy(k.c, k.copy, sizeof(*k.c));
        k.c->exec_count = 1;
        drain_record(&d, k.c, sizeof(*k.c));
        k.c->exec_count = 0;
        drain_record(&d, k.c, sizeof(*k.c) - 8);
        k.c->tgid = 1;
        drain_record(&d, k.c, sizeof(*k.c));

        ck_assert_uint_eq(st->checked, 4);
        ck_assert_uint_eq(st->agreed, 1);
        ck_assert_uint_eq(st->disagreed, 1);
        ck_assert_uint_eq(st->unchecked, 2);
        ck_assert_uint_ge(st->steps, 3);
        ck_assert_uint_eq(st->lost, 0);
        ck_assert_uint_eq(profile_total(k.target->profile), 0);
        ck_assert_uint_eq(d.stats.malformed, 0);
        ck_assert_uint_eq(d.stats.samples_unclaimed, 0);
        hashmap_free(targets);
}
END_TEST

static Suite *self_check_suite(void)
{
        Suite *s = suite_create("unwind-self-check");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_agree);
        tcase_add_test(tc, test_callers_differ);
        tcase_add_test(tc, test_ends_differ);
        tcase_add_test(tc, test_frame_pointer_step);
        tcase_add_test(tc, test_unchecked);
        tcase_add_test(tc, test_drain);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char *argv[])
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s LIBVPROF-UNWIND-FIXTURE\n", argv[0]);
                return 2;
        }
        arg_lib = argv[1];
        return run_suite(self_check_suite());
}
