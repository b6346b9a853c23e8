/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The drain (daemon/drain.h) on records made here, as the BPF program writes them: real addresses of the fixture
 * library and programs in real processes (this one, a child), kernel addresses of a kallsyms file of our own.
 * No root, no BPF: the targets are our own processes, attached as the daemon attaches them. */
#include <check.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "address-space.h"
#include "check-main.h"
#include "drain.h"
#include "fixture-util.h"
#include "hashmap.h"
#include "macros.h"
#include "profile.h"
#include "python-versions.h"
#include "target.h"
#include "target-python.h"
#include "test-util.h"
#include "vprof-abi.h"

/* From the command line: the fixture library and the PIE built in tests/fixtures. */
static const char *arg_lib, *arg_pie;

/* The kernel as the tests see it: the core image and a module. */
#define K_READ UINT64_C(0xffffffff81000100)
#define K_ENTRY UINT64_C(0xffffffff81000200)
#define K_MOD_READ UINT64_C(0xffffffffc0a01000)
static const char kallsyms_text[] =
        "ffffffff81000000 T _stext\n"
        "ffffffff81000100 T vprof_k_read\n"
        "ffffffff81000200 T vprof_k_entry\n"
        "ffffffff81000300 T _etext\n"
        "ffffffffc0a01000 t vprof_mod_read\t[vprofmod]\n"
        "ffffffffc0a01100 t vprof_mod_end\t[vprofmod]\n";

/* A drain as the manager sets it up, with its own targets. */
typedef struct TestDrain {
        Symbolizer *symbolizer;
        Hashmap *targets;
        TargetContext context;
        Drain drain;
        char *kallsyms;
        unsigned member_calls; /* on_member's, by test_member() */
} TestDrain;

static void test_drain_init(TestDrain *td)
{
        *td = (TestDrain){};
        ck_assert_int_eq(symbolizer_new(&td->symbolizer), 0);
        td->kallsyms = test_write_temp(kallsyms_text);
        ck_assert_int_eq(symbolizer_set_kallsyms(td->symbolizer, td->kallsyms, UINT64_C(3600) * 1000 * 1000), 0);
        td->targets = hashmap_new(&uint64_hash_ops);
        ck_assert_ptr_nonnull(td->targets);
        td->context = (TargetContext){
                .symbolizer = td->symbolizer,
                .frequency = 99,
                .max_functions = 1000,
                .max_stacks = 1000,
                .keep_deltas = true,
        };
        td->drain = (Drain){ .targets = td->targets, .symbolizer = td->symbolizer };
}

static void test_drain_done(TestDrain *td)
{
        Target *t;

        drain_done(&td->drain);
        if (td->targets) {
                HASHMAP_FOREACH(t, td->targets)
                        target_free(t);
                hashmap_free(td->targets);
        }
        symbolizer_free(td->symbolizer);
        if (td->kallsyms)
                unlink(td->kallsyms);
        free(td->kallsyms);
}

static Target *test_attach(TestDrain *td, pid_t pid)
{
        Target *t = NULL;
        pid_t tgid = 0;

        ck_assert_int_eq(target_new(&td->context, pid, getuid(), 0, &t, &tgid), 0);
        ck_assert_int_ge(hashmap_put(td->targets, UINT64_TO_PTR((uint64_t)pid), t), 0);
        return t;
}

static void test_detach(TestDrain *td, Target *t)
{
        hashmap_remove(td->targets, UINT64_TO_PTR((uint64_t)t->pid));
        target_free(t);
}

/* A record of pid: n_kernel kernel frames then n_user user frames, innermost first; no stack window, so the
 * user stack is the frames as given. */
static struct vprof_sample record(pid_t pid, pid_t tid, const uint64_t *kernel, size_t n_kernel, const uint64_t *user,
                                  size_t n_user)
{
        struct vprof_sample s = {
                .tgid = (uint32_t)pid,
                .tid = (uint32_t)tid,
                .flags = n_kernel > 0 ? VPROF_SAMPLE_KERNEL_MODE : 0,
                .period = 1000000,
                .kernel_depth = (uint16_t)n_kernel,
                .user_depth = (uint16_t)n_user,
        };

        ck_assert_uint_le(n_kernel, VPROF_MAX_KERNEL_FRAMES);
        ck_assert_uint_le(n_user, VPROF_MAX_USER_FRAMES);
        memcpy(s.comm, "drain-worker", sizeof("drain-worker"));
        if (n_kernel > 0)
                memcpy(s.frames, kernel, n_kernel * sizeof(uint64_t));
        if (n_user > 0)
                memcpy(s.frames + n_kernel, user, n_user * sizeof(uint64_t));
        return s;
}

/* Through the drain as the ring buffer hands it over: cut after its last frame, in a buffer of exactly that size
 * (so that the sanitizer sees any read past it). */
static void feed_size(Drain *d, const struct vprof_sample *s, size_t size)
{
        _cleanup_free_ void *buf = malloc(MAX(size, (size_t)1));

        ck_assert_ptr_nonnull(buf);
        memcpy(buf, s, MIN(size, sizeof(*s)));
        drain_record(d, buf, size);
}

static void feed(Drain *d, const struct vprof_sample *s)
{
        feed_size(d, s, VPROF_SAMPLE_SIZE((size_t)s->kernel_depth + s->user_depth));
}

typedef struct Row {
        const char *module; /* NULL for a module row */
        const char *name;
        uint64_t inclusive, exclusive;
} Row;

/* The table has exactly these rows, in any order. */
static void check_rows(const ProfileRow *rows, size_t n, const Row *expected, size_t n_expected)
{
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(i < n_expected, "unexpected row %s:%s", rows[i].module ?: "", rows[i].name);
        ck_assert_uint_eq(n, n_expected);
        for (size_t k = 0; k < n_expected; k++) {
                const Row *e = &expected[k];
                const ProfileRow *found = NULL;

                for (size_t i = 0; i < n; i++)
                        if (strcmp(rows[i].name, e->name) == 0 &&
                            (!e->module || (rows[i].module && strcmp(rows[i].module, e->module) == 0)))
                                found = &rows[i];
                ck_assert_msg(found, "no row %s:%s", e->module ?: "", e->name);
                ck_assert_msg(found->inclusive == e->inclusive && found->exclusive == e->exclusive,
                              "%s:%s: inclusive %llu, exclusive %llu; expected %llu, %llu", e->module ?: "", e->name,
                              (unsigned long long)found->inclusive, (unsigned long long)found->exclusive,
                              (unsigned long long)e->inclusive, (unsigned long long)e->exclusive);
        }
}

static void check_functions(const Profile *p, const Row *expected, size_t n_expected)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;

        ck_assert_int_eq(profile_functions(p, PROFILE_SORT_INCLUSIVE, 0, &rows, &n), 0);
        check_rows(rows, n, expected, n_expected);
}

static void check_modules(const Profile *p, const Row *expected, size_t n_expected)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;

        ck_assert_int_eq(profile_modules(p, PROFILE_SORT_INCLUSIVE, &rows, &n), 0);
        check_rows(rows, n, expected, n_expected);
}

static void *fixture_function(void *handle, const char *name)
{
        void *fn = dlsym(handle, name);

        ck_assert_msg(fn, "dlsym %s: %s", name, dlerror());
        return fn;
}

#define LIB "libvprof-fixture.so"

/* User frames of the fixture library, kernel frames of the core image and of a module, a return address that is
 * no code (a frame-pointer walk gone astray), a sample without a stack: every frame named, and counted by the
 * rules of profile.h. */
START_TEST(test_kernel_and_user)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        void *handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        uint64_t alpha, beta, caller;
        pid_t pid = getpid();
        int not_code = 0;
        Target *t;

        ck_assert_msg(handle, "dlopen: %s", dlerror());
        alpha = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_alpha");
        beta = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_beta");
        caller = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_leaf_caller");
        test_drain_init(&td);
        t = test_attach(&td, pid);

        {
                /* Frame 0 is the interrupted instruction, the others return addresses (looked up at - 1). */
                const uint64_t user[] = { alpha + 1, beta + 4, caller + 4 };
                struct vprof_sample s = record(pid, pid, NULL, 0, user, ELEMENTSOF(user));

                memcpy(s.comm, "drain-main", sizeof("drain-main"));
                feed(&td.drain, &s);
                feed(&td.drain, &s);
        }
        {
                const uint64_t user[] = { beta + 2 };
                struct vprof_sample s = record(pid, pid + 1, NULL, 0, user, ELEMENTSOF(user));
                feed(&td.drain, &s);
        }
        {
                /* In a system call: the kernel's frames, then the user frames that entered it. */
                const uint64_t kernel[] = { K_READ + 0x10, K_ENTRY + 0x8 };
                const uint64_t user[] = { alpha + 3, beta + 4 };
                struct vprof_sample s = record(pid, pid + 1, kernel, ELEMENTSOF(kernel), user, ELEMENTSOF(user));
                feed(&td.drain, &s);
        }
        {
                const uint64_t kernel[] = { K_MOD_READ + 0x4, K_ENTRY + 0x8 };
                const uint64_t user[] = { alpha + 3 };
                struct vprof_sample s = record(pid, pid + 1, kernel, ELEMENTSOF(kernel), user, ELEMENTSOF(user));
                feed(&td.drain, &s);
        }
        {
                /* A return address on the stack: the walk went wrong there, and what follows is not counted. */
                const uint64_t user[] = { beta + 2, (uintptr_t)&not_code, alpha + 4 };
                struct vprof_sample s = record(pid, pid + 1, NULL, 0, user, ELEMENTSOF(user));
                feed(&td.drain, &s);
        }
        {
                /* No stack could be read: it still counts. */
                struct vprof_sample s = record(pid, pid + 1, NULL, 0, NULL, 0);
                feed(&td.drain, &s);
        }

        ck_assert_uint_eq(profile_total(t->profile), 7);
        check_functions(t->profile,
                        (const Row[]){
                                { LIB, "vprof_fixture_lib_alpha", 4, 2 },
                                { LIB, "vprof_fixture_lib_beta", 5, 2 },
                                { LIB, "vprof_fixture_lib_leaf_caller", 2, 0 },
                                { "[kernel]", "vprof_k_read", 1, 1 },
                                { "[kernel]", "vprof_k_entry", 2, 0 },
                                { "[vprofmod]", "vprof_mod_read", 1, 1 },
                                { "[unknown]", "[unknown]", 1, 1 },
                        },
                        7);
        check_modules(t->profile,
                      (const Row[]){
                              { NULL, LIB, 6, 4 },
                              { NULL, "[kernel]", 2, 1 },
                              { NULL, "[vprofmod]", 1, 1 },
                              { NULL, "[unknown]", 1, 1 },
                      },
                      4);
        /* The process is named after its main thread's latest name. */
        ck_assert_str_eq(t->info.comm, "drain-main");
        /* Every sample is in the journal's delta too. */
        ck_assert(!profile_delta_empty(t->delta));
        ck_assert_uint_eq(td.drain.stats.malformed + td.drain.stats.samples_unclaimed + td.drain.stats.samples_failed,
                          0);
        dlclose(handle);
}
END_TEST

/* Off-CPU intervals: on the user stack only, by kind, from the attach on. */
START_TEST(test_off_cpu)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        void *handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        uint64_t alpha, beta;
        _cleanup_free_ ProfileRow *rows = NULL;
        pid_t pid = getpid();
        const ProfileValues *total;
        size_t n;
        Target *t;

        ck_assert_msg(handle, "dlopen: %s", dlerror());
        alpha = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_alpha");
        beta = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_beta");
        test_drain_init(&td);
        t = test_attach(&td, pid);

        {
                const uint64_t user[] = { beta + 1, alpha + 4 };
                struct vprof_sample s = record(pid, pid, NULL, 0, user, ELEMENTSOF(user));

                s.flags = VPROF_SAMPLE_OFF_CPU;
                s.time_ns = t->epoch_ns + 1000;
                s.period = 3000000;
                feed(&td.drain, &s);
                s.flags = VPROF_SAMPLE_OFF_CPU | VPROF_SAMPLE_PREEMPTED;
                s.user_depth = 1;
                s.period = 2000000;
                feed(&td.drain, &s);
                /* Left the CPU before the attach: counted from the attach on. */
                s.flags = VPROF_SAMPLE_OFF_CPU;
                s.time_ns = t->epoch_ns - 1000000;
                s.period = 1500000;
                feed(&td.drain, &s);
                /* Over before the attach: nothing to count. */
                s.time_ns = t->epoch_ns - 2000000;
                s.period = 1000000;
                feed(&td.drain, &s);
        }

        /* No on-CPU sample: the sampling values are empty, the elapsed ones exact. */
        ck_assert_uint_eq(profile_total(t->profile), 0);
        total = profile_total_values(t->profile);
        ck_assert_uint_eq(total->blocked_ns, 3500000);
        ck_assert_uint_eq(total->preempted_ns, 2000000);
        ck_assert_uint_eq(total->user_samples + total->kernel_samples, 0);
        ck_assert_int_eq(profile_functions(t->profile, PROFILE_SORT_ELAPSED_INCLUSIVE, 0, &rows, &n), 0);
        ck_assert_uint_eq(n, 2);
        for (size_t i = 0; i < n; i++) {
                ck_assert_str_eq(rows[i].module, LIB);
                if (strcmp(rows[i].name, "vprof_fixture_lib_beta") == 0) {
                        ck_assert_uint_eq(rows[i].inclusive_values.blocked_ns, 3500000);
                        ck_assert_uint_eq(rows[i].exclusive_values.blocked_ns, 3500000);
                        ck_assert_uint_eq(rows[i].inclusive_values.preempted_ns, 2000000);
                        ck_assert_uint_eq(rows[i].exclusive_values.preempted_ns, 2000000);
                } else {
                        ck_assert_str_eq(rows[i].name, "vprof_fixture_lib_alpha");
                        ck_assert_uint_eq(rows[i].inclusive_values.blocked_ns, 3000000);
                        ck_assert_uint_eq(rows[i].exclusive_values.blocked_ns, 0);
                        ck_assert_uint_eq(rows[i].inclusive_values.preempted_ns, 0);
                }
                ck_assert_uint_eq(rows[i].inclusive, 0);
        }
        ck_assert_uint_eq(td.drain.stats.off_cpu_failed_blocked + td.drain.stats.off_cpu_failed_preempted, 0);
        dlclose(handle);
}
END_TEST

/* An address of this program, as a child forked from it has it too. */
__attribute__((noinline)) void drain_test_marker(void);
__attribute__((noinline)) void drain_test_marker(void)
{
        __asm__ volatile("");
}

/* A target that exec()s: the records after it carry the new exec count and are the new image's; the tables
 * stay, with the old image's functions and the new one's. */
START_TEST(test_exec)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        int go[2], in[2], out[2];
        unsigned long long fixture_target, fixture_local;
        char line[128] = "";
        ssize_t n;
        size_t len = 0;
        Target *t;
        pid_t pid;

        ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                char c;

                /* This program until told, then the fixture, which prints its addresses and waits for stdin. */
                if (read(go[0], &c, 1) != 1)
                        _exit(1);
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                execl(arg_pie, arg_pie, (char *)NULL);
                _exit(127);
        }
        close(go[0]);
        close(in[0]);
        close(out[1]);
        test_drain_init(&td);
        t = test_attach(&td, pid);

        {
                const uint64_t user[] = { (uintptr_t)drain_test_marker };
                struct vprof_sample s = record(pid, pid, NULL, 0, user, ELEMENTSOF(user));
                feed(&td.drain, &s);
        }

        ck_assert_int_eq(write(go[1], "x", 1), 1);
        close(go[1]);
        while (len < sizeof(line) - 1 && (len == 0 || line[len - 1] != '\n')) {
                n = read(out[0], line + len, sizeof(line) - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        line[len] = '\0';
        close(out[0]);
        ck_assert_msg(sscanf(line, "%llx %llx", &fixture_target, &fixture_local) == 2, "printed '%s'", line);

        {
                const uint64_t user[] = { fixture_target + 2 };
                struct vprof_sample s = record(pid, pid, NULL, 0, user, ELEMENTSOF(user));

                s.exec_count = 1;
                memcpy(s.comm, "fixture-pie", sizeof("fixture-pie"));
                feed(&td.drain, &s);
        }
        close(in[1]);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);

        ck_assert_uint_eq(t->exec_count, 1);
        ck_assert_str_eq(t->info.comm, "fixture-pie");
        check_functions(t->profile,
                        (const Row[]){
                                { "test-drain", "drain_test_marker", 1, 1 },
                                { "fixture-pie", "vprof_fixture_prog_target", 1, 1 },
                        },
                        2);
        check_modules(t->profile,
                      (const Row[]){
                              { NULL, "test-drain", 1, 1 },
                              { NULL, "fixture-pie", 1, 1 },
                      },
                      2);
}
END_TEST

/* Records of no target (never attached, or detached since) count as unclaimed, by kind; the tables of the
 * others do not move. */
START_TEST(test_unclaimed)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        const uint64_t user[] = { (uintptr_t)drain_test_marker };
        pid_t pid = getpid();
        struct vprof_sample s;
        Fixture f;
        Target *t, *gone;

        test_drain_init(&td);
        t = test_attach(&td, pid);
        fixture_start(arg_pie, &f);
        gone = test_attach(&td, f.pid);
        test_detach(&td, gone);
        ck_assert_int_eq(fixture_stop(&f), 0);

        s = record(f.pid, f.pid, NULL, 0, user, ELEMENTSOF(user));
        feed(&td.drain, &s);
        feed(&td.drain, &s);
        s.flags = VPROF_SAMPLE_OFF_CPU;
        s.time_ns = t->epoch_ns + 1;
        feed(&td.drain, &s);
        /* PID 0 is never a target. */
        s = record(0, 0, NULL, 0, user, ELEMENTSOF(user));
        feed(&td.drain, &s);

        ck_assert_uint_eq(td.drain.stats.samples_unclaimed, 3);
        ck_assert_uint_eq(td.drain.stats.off_cpu_unclaimed, 1);
        ck_assert_uint_eq(td.drain.stats.malformed, 0);
        ck_assert_uint_eq(profile_total(t->profile), 0);
        ck_assert_uint_eq(profile_n_functions(t->profile), 0);
}
END_TEST

/* The drain's on_member as the manager's groups do it: this process (group 7) is made a target; any other none. */
static Target *test_member(void *userdata, uint32_t group, uint32_t tgid, const struct vprof_fork *fork)
{
        TestDrain *td = userdata;

        td->member_calls++;
        if (group != 7 || tgid != (uint32_t)getpid())
                return NULL;
        ck_assert_ptr_nonnull(fork);
        ck_assert_uint_eq(fork->parent_tgid, 1);
        return test_attach(td, getpid());
}

/* A group's new process is made a target after the ring buffer's read, not inside it; its records, which came
 * during the read, wait and are counted then, in order; those of a process that is made none count as unclaimed. */
START_TEST(test_members_after_read)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        const uint64_t user[] = { (uintptr_t)drain_test_marker };
        struct vprof_fork fork = {
                .tgid = (uint32_t)getpid(),
                .flags = VPROF_SAMPLE_FORK,
                .parent_tgid = 1,
                .group = 7,
        };
        struct vprof_sample s;
        Target *t;

        test_drain_init(&td);
        td.drain.on_member = test_member;
        td.drain.member_userdata = &td;
        drain_record(&td.drain, &fork, sizeof(fork));
        s = record(getpid(), getpid(), NULL, 0, user, ELEMENTSOF(user));
        s.group = 7;
        feed(&td.drain, &s);
        feed(&td.drain, &s);
        /* Of a group's process that is made none (group 9), and of no group: the latter unclaimed at once. */
        s = record(getpid() + 1, getpid() + 1, NULL, 0, user, ELEMENTSOF(user));
        s.group = 9;
        feed(&td.drain, &s);
        s = record(getpid() + 2, getpid() + 2, NULL, 0, user, ELEMENTSOF(user));
        feed(&td.drain, &s);

        /* The read: nothing made, nothing counted but the unclaimed. */
        ck_assert_uint_eq(td.member_calls, 0);
        ck_assert_ptr_null(hashmap_get(td.targets, UINT64_TO_PTR((uint64_t)getpid())));
        ck_assert_uint_eq(td.drain.stats.samples_unclaimed, 1);

        drain_members(&td.drain);
        /* The fork made the target, the two samples after it found it; the process of group 9 was asked once. */
        ck_assert_uint_eq(td.member_calls, 2);
        t = hashmap_get(td.targets, UINT64_TO_PTR((uint64_t)getpid()));
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(profile_total(t->profile), 2);
        ck_assert_uint_eq(td.drain.stats.samples_unclaimed, 2);
        ck_assert_uint_eq(td.drain.stats.forks_lost, 0);

        /* Its next records count at once; nothing waits any more. */
        s = record(getpid(), getpid(), NULL, 0, user, ELEMENTSOF(user));
        s.group = 7;
        feed(&td.drain, &s);
        ck_assert_uint_eq(profile_total(t->profile), 3);
        drain_members(&td.drain);
        ck_assert_uint_eq(td.member_calls, 2);
}
END_TEST

/* Records that the BPF program cannot have written are counted, and nothing of them is read past their end. */
START_TEST(test_malformed)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        const uint64_t user[] = { (uintptr_t)drain_test_marker, (uintptr_t)drain_test_marker };
        pid_t pid = getpid();
        struct vprof_sample s;
        Target *t;

        test_drain_init(&td);
        t = test_attach(&td, pid);
        s = record(pid, pid, NULL, 0, user, ELEMENTSOF(user));

        /* Shorter than the header. */
        feed_size(&td.drain, &s, 8);
        feed_size(&td.drain, &s, VPROF_SAMPLE_HEADER_SIZE - 1);
        /* Shorter than its depths say. */
        feed_size(&td.drain, &s, VPROF_SAMPLE_SIZE(1));
        /* Deeper than the ABI allows. */
        s.kernel_depth = VPROF_MAX_KERNEL_FRAMES + 1;
        feed_size(&td.drain, &s, sizeof(s));
        s.kernel_depth = 0;
        s.user_depth = VPROF_MAX_USER_FRAMES + 1;
        feed_size(&td.drain, &s, sizeof(s));
        ck_assert_uint_eq(td.drain.stats.malformed, 5);
        ck_assert_uint_eq(profile_total(t->profile), 0);

        /* Padded to 8 bytes by the ring buffer, or whole: fine. */
        s.user_depth = 2;
        feed_size(&td.drain, &s, VPROF_SAMPLE_SIZE(2) + 8);
        feed_size(&td.drain, &s, sizeof(s));
        ck_assert_uint_eq(td.drain.stats.malformed, 5);
        ck_assert_uint_eq(profile_total(t->profile), 2);
        ck_assert_uint_eq(td.drain.stats.samples_unclaimed + td.drain.stats.samples_failed, 0);
}
END_TEST

/* ---- A leaf's caller, put back from its CFI: a thread interrupted in a function without a frame ---- */

typedef struct Interrupted {
        uint64_t ip, sp, bp;
        uint64_t window[VPROF_STACK_WINDOW_WORDS];
        uint64_t fp_return_address; /* at [bp + 8]: the frame-pointer walk's next frame */
        bool taken;
} Interrupted;

static Interrupted interrupted;
static volatile int spin_stop;

/* Reads of other frames' stack, which the sanitizer would take for overflows. */
__attribute__((no_sanitize("address"))) static void copy_words(uint64_t *dst, uint64_t addr, size_t n)
{
        const volatile uint64_t *src = (const volatile uint64_t *)addr;

        for (size_t i = 0; i < n; i++)
                dst[i] = src[i];
}

static void on_signal(int sig _unused_, siginfo_t *si _unused_, void *data)
{
        const ucontext_t *uc = data;

        if (interrupted.taken)
                return;
        interrupted.ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
        interrupted.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
        interrupted.bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
        copy_words(interrupted.window, interrupted.sp, VPROF_STACK_WINDOW_WORDS);
        if (interrupted.bp != 0)
                copy_words(&interrupted.fp_return_address, interrupted.bp + 8, 1);
        interrupted.taken = true;
        spin_stop = 1;
}

/* The frame that calls the fixture's leaf_caller: where the frame-pointer walk goes from leaf_spin. */
__attribute__((noinline)) void drain_test_spin(int (*caller_fn)(volatile int *));
__attribute__((noinline)) void drain_test_spin(int (*caller_fn)(volatile int *))
{
        caller_fn(&spin_stop);
        __asm__ volatile("");
}

START_TEST(test_leaf_caller_recovered)
{
        _cleanup_(test_drain_done) TestDrain td = {};
        void *handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        int (*caller_fn)(volatile int *);
        struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO };
        struct itimerval on = { .it_value = { .tv_usec = 2000 }, .it_interval = { .tv_usec = 2000 } }, off = {};
        pid_t pid = getpid();
        struct vprof_sample s;
        bool walk_skipped_caller;
        unsigned attempt;
        Symbol sym;
        Target *t;

        ck_assert_msg(handle, "dlopen: %s", dlerror());
        caller_fn = fixture_function(handle, "vprof_fixture_lib_leaf_caller");
        test_drain_init(&td);
        t = test_attach(&td, pid);

        /* The signal may come before the spin starts: then it stops at once, and we try again. */
        sigemptyset(&sa.sa_mask);
        ck_assert_int_eq(sigaction(SIGPROF, &sa, NULL), 0);
        for (attempt = 0; attempt < 50; attempt++) {
                interrupted = (Interrupted){};
                spin_stop = 0;
                ck_assert_int_eq(setitimer(ITIMER_PROF, &on, NULL), 0);
                drain_test_spin(caller_fn);
                ck_assert_int_eq(setitimer(ITIMER_PROF, &off, NULL), 0);
                ck_assert(interrupted.taken);
                ck_assert_int_eq(address_space_resolve(t->address_space, interrupted.ip, false, &sym), 0);
                if (sym.function && strcmp(sym.function, "vprof_fixture_lib_leaf_spin") == 0)
                        break;
        }
        signal(SIGPROF, SIG_DFL);
        ck_assert_uint_lt(attempt, 50);

        /* As the BPF program records it: the frame-pointer walk. GCC sets up no frame in leaf_spin, so the walk
         * goes from it to drain_test_spin, skipping leaf_caller, which the drain puts back; clang keeps a frame in
         * every function, so the walk has leaf_caller already, and the drain must not add it twice. */
        ck_assert_int_eq(address_space_resolve(t->address_space, interrupted.fp_return_address, true, &sym), 0);
        ck_assert_ptr_nonnull(sym.function);
        walk_skipped_caller = strcmp(sym.function, "drain_test_spin") == 0;
        if (!walk_skipped_caller)
                ck_assert_str_eq(sym.function, "vprof_fixture_lib_leaf_caller");
        s = record(pid, pid, NULL, 0, (const uint64_t[]){ interrupted.ip, interrupted.fp_return_address }, 2);
        s.user_sp = interrupted.sp;
        s.user_bp = interrupted.bp;
        s.window_words = VPROF_STACK_WINDOW_WORDS;
        memcpy(s.user_window, interrupted.window, sizeof(s.user_window));
        feed(&td.drain, &s);

        check_functions(t->profile,
                        (const Row[]){
                                { LIB, "vprof_fixture_lib_leaf_spin", 1, 1 },
                                { LIB, "vprof_fixture_lib_leaf_caller", 1, 0 },
                                { "test-drain", "drain_test_spin", 1, 0 },
                        },
                        walk_skipped_caller ? 3 : 2);
        dlclose(handle);
}
END_TEST

/* The inlined functions' DWARF closed once no new address was looked up for DRAIN_INLINE_IDLE_USEC, not before. */
START_TEST(test_idle_dwarf_released)
{
        Drain d = {};

        ck_assert_int_eq(line_reader_new(&d.inline_reader), 0);
        d.inline_read_usec = 1000;
        drain_release_idle_dwarf(&d, 1000 + DRAIN_INLINE_IDLE_USEC - 1);
        ck_assert_ptr_nonnull(d.inline_reader);
        drain_release_idle_dwarf(&d, 1000 + DRAIN_INLINE_IDLE_USEC);
        ck_assert_ptr_null(d.inline_reader);
        drain_release_idle_dwarf(&d, 1000 + 2 * DRAIN_INLINE_IDLE_USEC);
        drain_done(&d);
}
END_TEST

/* Python code objects in this process's own memory, as CPython 3.11 lays them out (python-versions.h's table),
 * read by the drain through process_vm_readv() as a target's are: a code object, its names (compact ASCII str),
 * its line table (bytes). */
#define PY_CODE_TYPE UINT64_C(0xc0de0)

static void py_put(uint8_t *image, size_t offset, uint64_t value)
{
        memcpy(image + offset, &value, sizeof(value));
}

static void py_put_str(const PythonLayout *l, uint8_t *image, size_t offset, const char *s)
{
        uint32_t state = (1u << 2) | (1u << 5) | (1u << 6) | (1u << 7); /* compact ASCII, ready */

        py_put(image, offset + l->unicode_length, strlen(s));
        memcpy(image + offset + l->unicode_state, &state, sizeof(state));
        memcpy(image + offset + l->unicode_ascii_data, s, strlen(s));
}

/* A code object at image[0] named qualname in file, starting at line firstlineno: its 8 code units on it. */
static void py_code(const PythonLayout *l, uint8_t *image, const char *qualname, const char *file, int32_t firstlineno)
{
        /* One entry of 3.11's location table: kind 13 (no columns), 8 code units, the line + 0. */
        static const uint8_t table[] = { 0x80 | 13 << 3 | 7, 0x00 };
        uint64_t base = (uintptr_t)image;

        py_put(image, l->object_type, PY_CODE_TYPE);
        memcpy(image + l->code_firstlineno, &firstlineno, sizeof(firstlineno));
        py_put(image, l->code_qualname, base + 256);
        py_put(image, l->code_name, base + 256);
        py_put(image, l->code_filename, base + 384);
        py_put(image, l->code_linetable, base + 512);
        py_put_str(l, image, 256, qualname);
        py_put_str(l, image, 384, file);
        py_put(image, 512 + l->bytes_size, sizeof(table));
        memcpy(image + 512 + l->bytes_data, table, sizeof(table));
}

static uint64_t py_frame(size_t native, const void *code)
{
        return VPROF_PYTHON_FRAME_TAG | (uint64_t)native << VPROF_PYTHON_FRAME_NATIVE_SHIFT | (uintptr_t)code;
}

/* Python frames (the words after the user frames) named by their code objects in place of the evaluation loop's
 * frame that runs them, or below them with python_interpreter_frames; an unreadable code object
 * "[python: unknown]"; each function's source its file and first line. */
START_TEST(test_python_frames)
{
        static _Alignas(8) uint8_t inner_code[1024], outer_code[1024];
        void *handle = dlopen(arg_lib, RTLD_NOW | RTLD_LOCAL);
        const PythonVersionTable *v = python_versions_lookup(11);
        uint64_t alpha, beta, caller;
        pid_t pid = getpid();

        ck_assert_msg(handle, "dlopen: %s", dlerror());
        ck_assert_ptr_nonnull(v);
        alpha = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_alpha");
        beta = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_beta");
        caller = (uintptr_t)fixture_function(handle, "vprof_fixture_lib_leaf_caller");
        py_code(&v->layout, inner_code, "Outer.inner", "/srv/app.py", 10);
        py_code(&v->layout, outer_code, "<module>", "/srv/app.py", 1);

        for (int keep = 0; keep <= 1; keep++) {
                _cleanup_(test_drain_done) TestDrain td = {};
                /* alpha called by beta (the "evaluation loop"), which runs inner, outer and an unreadable one. */
                const uint64_t user[] = { alpha + 1, beta + 4, caller + 4 };
                struct vprof_sample s = record(pid, pid, NULL, 0, user, ELEMENTSOF(user));
                const uint64_t python[] = { py_frame(1, inner_code), 4, py_frame(1, outer_code), 0,
                                            py_frame(1, (void *)0x10), 0 };
                const char *source;
                uint32_t id;
                Target *t;

                test_drain_init(&td);
                td.drain.python_interpreter_frames = keep;
                t = test_attach(&td, pid);
                ck_assert_int_eq(target_python_set(&t->python, pid, &v->layout, PY_CODE_TYPE), 0);
                memcpy(s.frames + ELEMENTSOF(user), python, sizeof(python));
                s.python_depth = ELEMENTSOF(python);
                for (int i = 0; i < 2; i++)
                        feed_size(&td.drain, &s, VPROF_SAMPLE_SIZE(ELEMENTSOF(user) + ELEMENTSOF(python)));
                ck_assert_uint_eq(td.drain.stats.malformed, 0);
                ck_assert_uint_eq(td.drain.stats.python.frames, 6);
                ck_assert_uint_eq(td.drain.stats.python.unknown, 2);
                ck_assert_uint_eq(td.drain.stats.python.dropped, 0);
                if (keep)
                        check_functions(t->profile,
                                        (const Row[]){
                                                { LIB, "vprof_fixture_lib_alpha", 2, 2 },
                                                { "/srv/app.py", "Outer.inner", 2, 0 },
                                                { "/srv/app.py", "<module>", 2, 0 },
                                                { "[python]", "[python: unknown]", 2, 0 },
                                                { LIB, "vprof_fixture_lib_beta", 2, 0 },
                                                { LIB, "vprof_fixture_lib_leaf_caller", 2, 0 },
                                        },
                                        6);
                else
                        check_functions(t->profile,
                                        (const Row[]){
                                                { LIB, "vprof_fixture_lib_alpha", 2, 2 },
                                                { "/srv/app.py", "Outer.inner", 2, 0 },
                                                { "/srv/app.py", "<module>", 2, 0 },
                                                { "[python]", "[python: unknown]", 2, 0 },
                                                { LIB, "vprof_fixture_lib_leaf_caller", 2, 0 },
                                        },
                                        5);
                ck_assert_int_eq(profile_intern_function(t->profile, "/srv/app.py", "Outer.inner", &id), 0);
                source = profile_function_source(t->profile, id);
                ck_assert_ptr_nonnull(source);
                ck_assert_str_eq(source, "/srv/app.py:10");

                /* The interpreter gone from the target (no TargetPython): its frames are unknown, still counted. */
                t->python = target_python_free(t->python);
                feed_size(&td.drain, &s, VPROF_SAMPLE_SIZE(ELEMENTSOF(user) + ELEMENTSOF(python)));
                ck_assert_uint_eq(td.drain.stats.python.unknown, 5);
        }
        dlclose(handle);
}
END_TEST

static Suite *drain_suite(void)
{
        Suite *s = suite_create("drain");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_kernel_and_user);
        tcase_add_test(tc, test_off_cpu);
        tcase_add_test(tc, test_exec);
        tcase_add_test(tc, test_unclaimed);
        tcase_add_test(tc, test_members_after_read);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_leaf_caller_recovered);
        tcase_add_test(tc, test_idle_dwarf_released);
        tcase_add_test(tc, test_python_frames);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char *argv[])
{
        if (argc != 3) {
                fprintf(stderr, "usage: %s LIBRARY PIE\n", argv[0]);
                return 2;
        }
        arg_lib = argv[1];
        arg_pie = argv[2];
        return run_suite(drain_suite());
}
