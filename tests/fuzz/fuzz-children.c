/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz-children.h"
#include "macros.h"

static uint64_t now_msec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 2 ms on the CPU, 3 ms asleep, until deadline (0: forever). */
static void busy_and_sleep(uint64_t deadline)
{
        volatile uint64_t sink = 0;

        while (deadline == 0 || now_msec() < deadline) {
                uint64_t until = now_msec() + 2;

                while (now_msec() < until)
                        sink++;
                nanosleep(&(struct timespec){ .tv_nsec = 3 * 1000 * 1000 }, NULL);
        }
}

static void *worker_thread(void *userdata)
{
        int fd = *(int *)userdata;
        pid_t tid = gettid();

        (void)!write(fd, &tid, sizeof(tid));
        busy_and_sleep(0);
        return NULL;
}

/* In the child: die with the driver, even when it crashes. */
static void child_setup(pid_t parent)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(1);
}

int children_start(Children *c)
{
        pid_t parent = getpid(), tid;
        int fds[2];

        *c = (Children){};
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        c->worker = fork();
        if (c->worker < 0) {
                int r = -errno;

                safe_close(fds[0]);
                safe_close(fds[1]);
                return r;
        }
        if (c->worker == 0) {
                pthread_t thread;

                child_setup(parent);
                safe_close(fds[0]);
                if (pthread_create(&thread, NULL, worker_thread, &fds[1]) != 0)
                        _exit(1);
                busy_and_sleep(0);
                _exit(0);
        }
        c->worker_alive = true;
        safe_close(fds[1]);
        if (read(fds[0], &tid, sizeof(tid)) != sizeof(tid)) {
                safe_close(fds[0]);
                return -EIO;
        }
        safe_close(fds[0]);
        c->worker_thread = tid;
        return 0;
}

int children_spawn_short(Children *c, Rng *r, unsigned max_alive, unsigned max_msec)
{
        uint64_t lifetime = 1 + rng_below(r, max_msec);
        pid_t parent = getpid(), pid;
        Child *slot;

        if (c->n_alive >= max_alive)
                return 0;
        /* The slots are taken in turn; one whose child still lives is not taken over. */
        slot = &c->recent[c->n_recent % CHILDREN_RECENT];
        if (slot->alive)
                return 0;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                child_setup(parent);
                busy_and_sleep(now_msec() + lifetime);
                _exit(0);
        }
        *slot = (Child){ .pid = pid, .alive = true };
        c->n_recent++;
        c->n_alive++;
        return 1;
}

static void child_reaped(Children *c, pid_t pid)
{
        for (unsigned i = 0; i < CHILDREN_RECENT; i++)
                if (c->recent[i].alive && c->recent[i].pid == pid) {
                        c->recent[i].alive = false;
                        c->n_alive--;
                }
}

void children_reap(Children *c)
{
        pid_t pid;

        while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
                if (pid == c->worker)
                        c->worker_alive = false;
                child_reaped(c, pid);
        }
}

void children_stop(Children *c)
{
        if (c->worker_alive) {
                (void)kill(c->worker, SIGKILL);
                (void)waitpid(c->worker, NULL, 0);
                c->worker_alive = false;
        }
        for (unsigned i = 0; i < CHILDREN_RECENT; i++)
                if (c->recent[i].alive) {
                        (void)kill(c->recent[i].pid, SIGKILL);
                        (void)waitpid(c->recent[i].pid, NULL, 0);
                        child_reaped(c, c->recent[i].pid);
                }
}
