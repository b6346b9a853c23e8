/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The BPF program's groups, through the sampler's calls (daemon/sampler.h) without the daemon:
 *   1. a cgroup attached for group 7: a busy process moved into a child cgroup of it after the attach, no target,
 *      has its samples kept with group 7 (descendants count); a busy process outside has none;
 *   2. a target that follows its children (group 9) forks a busy child: the fork record comes first, with the
 *      child, the parent and the group, and then the child's samples, group 9, from its first;
 *   3. a process that exec()s in the cgroup is told of (VPROF_FORK_EXEC); the cgroup detached: no more of its
 *      samples; the program's counters agree with the records;
 *   4. in a cgroup namespace whose root is the test's child cgroup, a sampler finds that root's level.
 * It makes a cgroup below the cgroup2 mount and removes it. Root only, and a cgroup2 hierarchy (exit 77
 * otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-util.h"
#include "log.h"
#include "sampler.h"

#define GROUP_CGROUP 7
#define GROUP_CHILDREN 9

static int failures;

#define CHECK(cond, ...)                                                                                       \
        do {                                                                                                   \
                if (!(cond)) {                                                                                 \
                        failures++;                                                                            \
                        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
                        fprintf(stderr, __VA_ARGS__);                                                          \
                        fputc('\n', stderr);                                                                   \
                }                                                                                              \
        } while (0)

typedef struct Seen {
        pid_t in_cgroup, outside, parent, child, execer;
        uint64_t execs;
        uint32_t exec_group;
        uint64_t in_cgroup_samples, outside_samples, parent_samples, child_samples, other_samples;
        uint64_t bad_group, forks, child_samples_before_fork;
        struct vprof_fork fork;
} Seen;

static int on_record(void *userdata, void *data, size_t size)
{
        const struct vprof_sample *s = data;
        Seen *seen = userdata;

        if (size >= sizeof(struct vprof_fork) && (s->flags & VPROF_SAMPLE_FORK)) {
                if (s->flags & VPROF_FORK_EXEC) {
                        if (seen->execer && s->tgid == (uint32_t)seen->execer) {
                                seen->execs++;
                                seen->exec_group = ((const struct vprof_fork *)data)->group;
                        }
                        return 0;
                }
                seen->forks++;
                memcpy(&seen->fork, data, sizeof(seen->fork));
                return 0;
        }
        if (size < VPROF_SAMPLE_HEADER_SIZE || (s->flags & (VPROF_SAMPLE_OFF_CPU | VPROF_SAMPLE_STACK_COPY)))
                return 0;
        if (s->tgid == (uint32_t)seen->in_cgroup) {
                seen->in_cgroup_samples++;
                seen->bad_group += s->group != GROUP_CGROUP;
        } else if (s->tgid == (uint32_t)seen->outside)
                seen->outside_samples++;
        else if (s->tgid == (uint32_t)seen->parent) {
                seen->parent_samples++;
                seen->bad_group += s->group != GROUP_CHILDREN;
        } else if (seen->child && s->tgid == (uint32_t)seen->child) {
                seen->child_samples++;
                seen->child_samples_before_fork += seen->forks == 0;
                seen->bad_group += s->group != GROUP_CHILDREN;
        } else
                seen->other_samples++;
        return 0;
}

static void burn(double seconds)
{
        struct timespec t0, t;
        volatile uint64_t x = 0;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                for (int i = 0; i < 100000; i++)
                        x += (uint64_t)i;
                clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
        (void)x; /* volatile: the loop is the work, its sum is not used */
}

/* A process that waits for a byte on a pipe, then runs fn. Returns its PID and the pipe's write end. */
static pid_t spawn(void (*fn)(void), int *ret_go)
{
        int p[2];
        pid_t pid;
        char c;

        if (pipe(p) < 0)
                exit(1);
        pid = fork();
        if (pid < 0)
                exit(1);
        if (pid == 0) {
                close(p[1]);
                if (read(p[0], &c, 1) != 1)
                        _exit(1);
                fn();
                _exit(0);
        }
        close(p[0]);
        *ret_go = p[1];
        return pid;
}

static void go(int fd)
{
        if (write(fd, "g", 1) != 1)
                exit(1);
        close(fd);
}

static void busy(void)
{
        burn(1.5);
}

/* Forks a child that burns 1 s, burns a little itself, waits for it. */
static void forker(void)
{
        pid_t c = fork();

        if (c == 0) {
                burn(1.0);
                _exit(0);
        }
        burn(0.2);
        (void)waitpid(c, NULL, 0);
}

static void move_to(const char *mount, const char *path, pid_t pid)
{
        char file[4096], text[32];
        int fd, n;

        snprintf(file, sizeof(file), "%s%s/cgroup.procs", mount, path);
        fd = open(file, O_WRONLY | O_CLOEXEC);
        n = snprintf(text, sizeof(text), "%d\n", (int)pid);
        if (fd < 0 || write(fd, text, (size_t)n) != n) {
                fprintf(stderr, "cannot move %d into %s: %m\n", (int)pid, path);
                exit(1);
        }
        close(fd);
}

static Sampler *new_sampler(Seen *seen)
{
        SamplerConfig config = {
                .frequency = 999,
                .event = SAMPLER_EVENT_CPU_CLOCK,
                .ring_size = 4u << 20,
                .max_targets = 16,
                .max_off_cpu_threads = 16,
        };
        Sampler *s = NULL;
        int r;

        r = sampler_new(&config, on_record, seen, &s);
        if (r < 0) {
                fprintf(stderr, "sampler_new: %s\n", strerror(-r));
                exit(1);
        }
        return s;
}

static void drain_for(Sampler *s, double seconds)
{
        struct timespec tick = { 0, 20 * 1000 * 1000 };

        for (int i = 0; i < (int)(seconds * 50); i++) {
                nanosleep(&tick, NULL);
                (void)sampler_drain(s);
        }
}

/* Phase 4, in a child: moved into path, in a new cgroup namespace, a new sampler knows path's level. */
static int cgroup_namespace_level(const char *mount, const char *path)
{
        Seen seen = {};
        pid_t pid;
        int status;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                Sampler *s;
                int level;

                move_to(mount, path, getpid());
                if (unshare(CLONE_NEWCGROUP) < 0)
                        _exit(77);
                s = new_sampler(&seen);
                level = sampler_cgroup_root_level(s);
                sampler_free(s);
                _exit(level < 0 ? 100 : level);
        }
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
                return -EIO;
        return WEXITSTATUS(status);
}

int main(void)
{
        _cleanup_free_ char *mount = NULL, *self = NULL;
        char top[256], sub[300], dir[4096];
        uint64_t stats[_VPROF_STAT_MAX], id = 0;
        int go_in, go_out, go_parent, fd, r, level;
        Seen seen = {};
        Sampler *s;

        if (geteuid() != 0) {
                printf("SKIP: needs root for BPF\n");
                return 77;
        }
        if (cgroup2_mount_find(&mount) < 0 || proc_cgroup_read(0, &self) < 0) {
                printf("SKIP: no cgroup2 hierarchy\n");
                return 77;
        }
        log_set_max_level(LOG_WARNING);
        snprintf(top, sizeof(top), "/vprof-test-sampler-%d", (int)getpid());
        snprintf(sub, sizeof(sub), "%s/child", top);
        snprintf(dir, sizeof(dir), "%s%s", mount, top);
        if (mkdir(dir, 0755) < 0 || snprintf(dir, sizeof(dir), "%s%s", mount, sub) < 0 || mkdir(dir, 0755) < 0) {
                fprintf(stderr, "mkdir %s: %m\n", dir);
                return 1;
        }

        s = new_sampler(&seen);
        CHECK(sampler_cgroup_root_level(s) == 0, "outside a cgroup namespace: %d", sampler_cgroup_root_level(s));
        fd = cgroup_open(mount, top);
        CHECK(fd >= 0 && cgroup_fd_id(fd, &id) == 0, "cgroup_open(%s): %s", top, strerror(-fd));
        close(fd);
        r = sampler_add_cgroup(s, id, cgroup_path_level(top), GROUP_CGROUP);
        CHECK(r == 0, "sampler_add_cgroup: %s", strerror(-r));
        CHECK(sampler_add_cgroup(s, id, cgroup_path_level(top), GROUP_CGROUP) == -EEXIST, "added twice");

        /* 1 and 2 at once. */
        seen.in_cgroup = spawn(busy, &go_in);
        seen.outside = spawn(busy, &go_out);
        seen.parent = spawn(forker, &go_parent);
        move_to(mount, sub, seen.in_cgroup); /* a child cgroup of the attached one, after the attach */
        r = sampler_add_member(s, (uint32_t)seen.parent, VPROF_TARGET_CHILDREN, GROUP_CHILDREN);
        CHECK(r == 0, "sampler_add_member: %s", strerror(-r));
        r = sampler_follow_forks(s, true);
        CHECK(r == 0, "sampler_follow_forks: %s", strerror(-r));
        go(go_in);
        go(go_out);
        go(go_parent);
        for (int i = 0; i < 100 && !seen.forks; i++)
                drain_for(s, 0.02);
        seen.child = (pid_t)seen.fork.tgid;
        drain_for(s, 1.6);
        (void)waitpid(seen.in_cgroup, NULL, 0);
        (void)waitpid(seen.outside, NULL, 0);
        (void)waitpid(seen.parent, NULL, 0);
        drain_for(s, 0.1);

        printf("cgroup %s (id %" PRIu64 ", level %u): PID %d inside %" PRIu64 " samples, PID %d outside %" PRIu64
               "\n", top, id, cgroup_path_level(top), (int)seen.in_cgroup, seen.in_cgroup_samples, (int)seen.outside,
               seen.outside_samples);
        printf("children: PID %d forked PID %d (%" PRIu64 " fork records): %" PRIu64 " and %" PRIu64 " samples\n",
               (int)seen.parent, (int)seen.child, seen.forks, seen.parent_samples, seen.child_samples);
        CHECK(seen.in_cgroup_samples > 20, "the process in the cgroup: %" PRIu64 " samples", seen.in_cgroup_samples);
        CHECK(seen.outside_samples == 0, "the process outside: %" PRIu64 " samples", seen.outside_samples);
        CHECK(seen.forks == 1, "%" PRIu64 " fork records", seen.forks);
        CHECK(seen.fork.parent_tgid == (uint32_t)seen.parent && seen.fork.group == GROUP_CHILDREN &&
              !(seen.fork.flags & VPROF_FORK_NOT_FOLLOWED) && seen.fork.start_ns > 0,
              "fork record: parent %u group %u flags 0x%x", seen.fork.parent_tgid, seen.fork.group, seen.fork.flags);
        CHECK(seen.child_samples > 20, "the child: %" PRIu64 " samples", seen.child_samples);
        CHECK(seen.child_samples_before_fork == 0, "%" PRIu64 " child samples before its fork record",
              seen.child_samples_before_fork);
        CHECK(seen.bad_group == 0, "%" PRIu64 " samples with the wrong group", seen.bad_group);

        /* 3: the counters; then detached, a process in the cgroup is not sampled. */
        r = sampler_read_stats(s, stats);
        CHECK(r == 0, "sampler_read_stats: %s", strerror(-r));
        printf("counters: kept %" PRIu64 ", of which matched by cgroup %" PRIu64 "; forks followed %" PRIu64
               ", lost %" PRIu64 "\n", stats[VPROF_STAT_KEPT], stats[VPROF_STAT_CGROUP_MATCHED],
               stats[VPROF_STAT_FORKS_FOLLOWED], stats[VPROF_STAT_FORKS_LOST]);
        CHECK(stats[VPROF_STAT_CGROUP_MATCHED] == seen.in_cgroup_samples, "matched %" PRIu64 ", records %" PRIu64,
              stats[VPROF_STAT_CGROUP_MATCHED], seen.in_cgroup_samples);
        CHECK(stats[VPROF_STAT_FORKS_FOLLOWED] == 1 && stats[VPROF_STAT_FORKS_LOST] == 0, "forks counted");
        /* An exec() in the cgroup, by a process that is no target. */
        seen.execer = fork();
        if (seen.execer == 0) {
                move_to(mount, sub, getpid());
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
        }
        (void)waitpid(seen.execer, NULL, 0);
        drain_for(s, 0.2);
        printf("exec() in the cgroup by PID %d: %" PRIu64 " record(s), group %u\n", (int)seen.execer, seen.execs,
               seen.exec_group);
        CHECK(seen.execs == 1 && seen.exec_group == GROUP_CGROUP, "%" PRIu64 " exec records, group %u",
              seen.execs, seen.exec_group);
        r = sampler_remove_cgroup(s, id, cgroup_path_level(top));
        CHECK(r == 0, "sampler_remove_cgroup: %s", strerror(-r));
        seen.in_cgroup_samples = 0;
        seen.in_cgroup = spawn(busy, &go_in);
        move_to(mount, sub, seen.in_cgroup);
        go(go_in);
        drain_for(s, 1.0);
        CHECK(seen.in_cgroup_samples == 0, "after the detach: %" PRIu64 " samples", seen.in_cgroup_samples);
        kill(seen.in_cgroup, SIGKILL);
        (void)waitpid(seen.in_cgroup, NULL, 0);
        (void)sampler_remove_target(s, (uint32_t)seen.child);
        sampler_free(s);

        /* 4. */
        level = cgroup_namespace_level(mount, sub);
        printf("in a cgroup namespace rooted at %s: the sampler found level %d\n", sub, level);
        if (level != 77)
                CHECK(level == (int)cgroup_path_level(sub), "level %d, expected %u", level, cgroup_path_level(sub));

        snprintf(dir, sizeof(dir), "%s%s", mount, sub);
        (void)rmdir(dir);
        snprintf(dir, sizeof(dir), "%s%s", mount, top);
        (void)rmdir(dir);
        if (failures)
                fprintf(stderr, "%d checks failed\n", failures);
        return failures ? 1 : 0;
}
