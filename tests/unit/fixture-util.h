/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Runs the fixture-prog executables: each prints the runtime addresses of its functions and waits for its
 * stdin to close. */

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Fixture {
        pid_t pid;
        int stdin_fd;      /* closing it lets the fixture exit */
        uint64_t target;   /* vprof_fixture_prog_target() */
        uint64_t local;    /* fixture_prog_local() */
} Fixture;

static inline void fixture_start(const char *path, Fixture *ret)
{
        int in[2], out[2];
        char line[128];
        unsigned long long target, local;
        ssize_t n;
        size_t len = 0;
        pid_t pid;

        /* Close-on-exec, so that a second fixture does not hold the first one's stdin open. */
        ck_assert_int_eq(pipe(in), 0);
        ck_assert_int_eq(pipe(out), 0);
        for (size_t i = 0; i < 2; i++) {
                ck_assert_int_eq(fcntl(in[i], F_SETFD, FD_CLOEXEC), 0);
                ck_assert_int_eq(fcntl(out[i], F_SETFD, FD_CLOEXEC), 0);
        }
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                execl(path, path, (char *)NULL);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);

        /* One line: "0x... 0x...\n". */
        while (len < sizeof(line) - 1 && (len == 0 || line[len - 1] != '\n')) {
                n = read(out[0], line + len, sizeof(line) - 1 - len);
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        line[len] = '\0';
        close(out[0]);
        ck_assert_msg(sscanf(line, "%llx %llx", &target, &local) == 2, "%s printed '%s'", path, line);

        *ret = (Fixture) { .pid = pid, .stdin_fd = in[1], .target = target, .local = local };
}

/* Let the fixture exit and reap it; returns its exit status as waitpid() gives it. */
static inline int fixture_stop(Fixture *f)
{
        int status = -1;

        if (f->pid <= 0)
                return -1;
        if (f->stdin_fd >= 0)
                close(f->stdin_fd);
        f->stdin_fd = -1;
        ck_assert_int_eq(waitpid(f->pid, &status, 0), f->pid);
        f->pid = 0;
        return status;
}

static inline const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}
