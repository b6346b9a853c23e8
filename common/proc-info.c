/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "macros.h"
#include "proc-info.h"

#define PF_KTHREAD 0x00200000u
#define PF_EXITING 0x00000004u /* include/linux/sched.h: in do_exit(), set before the memory is dropped */

int proc_stat_parse(const char *text, unsigned *ret_flags, uint64_t *ret_start_time)
{
        unsigned long long start_time;
        unsigned flags;
        const char *p;

        assert(text);
        assert(ret_flags);
        assert(ret_start_time);

        /* The command may hold spaces and parentheses: the fields start after the last ')'. */
        p = strrchr(text, ')');
        if (!p)
                return -EINVAL;
        /* Fields 3..22 of proc(5): state ppid pgrp session tty_nr tpgid flags ... starttime. */
        if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                   &flags, &start_time) != 2)
                return -EINVAL;
        *ret_flags = flags;
        *ret_start_time = start_time;
        return 0;
}

int proc_status_parse(const char *text, pid_t *ret_tgid, pid_t *ret_ns_tgid, uid_t ret_uid[3], gid_t ret_gid[3])
{
        const char *tgid, *uid, *gid;
        unsigned long u[3], g[3];
        long t;

        assert(text);
        assert(ret_tgid);
        assert(ret_uid);
        assert(ret_gid);

        tgid = strstr(text, "\nTgid:");
        uid = strstr(text, "\nUid:");
        gid = strstr(text, "\nGid:");
        if (!tgid || !uid || !gid)
                return -EINVAL;
        if (sscanf(tgid + 6, "%ld", &t) != 1)
                return -EINVAL;
        if (sscanf(uid + 5, "%lu %lu %lu", &u[0], &u[1], &u[2]) != 3)
                return -EINVAL;
        if (sscanf(gid + 5, "%lu %lu %lu", &g[0], &g[1], &g[2]) != 3)
                return -EINVAL;
        *ret_tgid = (pid_t)t;
        if (ret_ns_tgid && proc_status_nstgid(text, ret_ns_tgid) < 0)
                *ret_ns_tgid = (pid_t)t;
        for (int i = 0; i < 3; i++) {
                ret_uid[i] = (uid_t)u[i];
                ret_gid[i] = (gid_t)g[i];
        }
        return 0;
}

int proc_status_nstgid(const char *text, pid_t *ret)
{
        const char *line, *end;
        long last = -1;

        assert(text);
        assert(ret);

        line = strstr(text, "\nNStgid:");
        /* Without the line (before Linux 4.1) the process is in our namespace: its PID is the one to use. */
        if (!line)
                return -ENOENT;
        line += strlen("\nNStgid:");
        end = line + strcspn(line, "\n");
        while (line < end) {
                char *e;
                long v = strtol(line, &e, 10);

                if (e == line)
                        break;
                last = v;
                line = e;
        }
        if (last <= 0)
                return -EINVAL;
        *ret = (pid_t)last;
        return 0;
}

/* A file of the process's /proc directory, dir (or /proc/PID/NAME when dir is -1), into buf. */
static int read_proc_file_at(int dir, pid_t pid, const char *name, char *buf, size_t size)
{
        char path[64];
        _cleanup_close_ int fd = -1;
        ssize_t n;

        if (dir >= 0)
                fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
        else {
                snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
        }
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        n = read(fd, buf, size - 1);
        if (n < 0)
                return errno == ESRCH ? -ESRCH : negative_errno();
        buf[n] = '\0';
        return 0;
}

static int read_proc_file(pid_t pid, const char *name, char *buf, size_t size)
{
        return read_proc_file_at(-1, pid, name, buf, size);
}

int proc_read_nstgid(pid_t pid, pid_t *ret)
{
        char buf[4096];
        int r;

        assert(ret);

        r = read_proc_file(pid, "status", buf, sizeof(buf));
        if (r < 0)
                return r;
        r = proc_status_nstgid(buf, ret);
        if (r == -ENOENT) {
                *ret = pid;
                return 0;
        }
        return r;
}

void proc_comm_parse(const char *text, char ret[static PROC_COMM_ESCAPED_SIZE])
{
        /* At most 15 bytes and the kernel's newline. The name is the process's to choose (prctl(PR_SET_NAME),
         * the file name it was executed from): any byte but NUL, newlines of its own too, which the escape
         * keeps visible. */
        size_t n = strlen(text);

        if (n > 0 && text[n - 1] == '\n')
                n--;
        n = MIN(n, (size_t)PROC_COMM_LEN);

        utf8_escape_buf(text, n, ret, PROC_COMM_ESCAPED_SIZE);
}

int proc_stat_comm(const char *text, char ret[static PROC_COMM_ESCAPED_SIZE])
{
        const char *open = strchr(text, '('), *close = strrchr(text, ')');

        /* "PID (COMM) STATE ...": the name is what lies between the first '(' and the last ')'. */
        if (!open || !close || close < open)
                return -EINVAL;
        utf8_escape_buf(open + 1, MIN((size_t)(close - open - 1), (size_t)PROC_COMM_LEN), ret,
                        PROC_COMM_ESCAPED_SIZE);
        return 0;
}

int proc_info_read(pid_t pid, ProcInfo *ret)
{
        char buf[4096], path[32];
        _cleanup_close_ int dir = -1;
        struct stat st;
        ProcInfo info = {};
        unsigned flags;
        int r;

        assert(ret);

        /* The directory once, its files by name in it: the kernel looks the PID up once, not at each file (a
         * group's storm reads this for hundreds of new processes a second). */
        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        r = read_proc_file_at(dir, pid, "stat", buf, sizeof(buf));
        if (r < 0)
                return r;
        r = proc_stat_parse(buf, &flags, &info.start_time);
        if (r < 0)
                return r;
        info.kernel_thread = flags & PF_KTHREAD;
        if (flags & PF_EXITING)
                return -ESRCH;

        r = read_proc_file_at(dir, pid, "status", buf, sizeof(buf));
        if (r < 0)
                return r;
        r = proc_status_parse(buf, &info.tgid, &info.ns_tgid, info.uid, info.gid);
        if (r < 0)
                return r;

        /* The kernel hands the files in a process's /proc directory (not the directory itself) to root when
         * the process is not dumpable (set-ID, or prctl(PR_SET_DUMPABLE, 0)), and to its effective user and
         * group otherwise: ptrace's second rule, readable without ptrace. */
        if (fstatat(dir, "status", &st, 0) < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        info.dumpable = st.st_uid == info.uid[1] && st.st_gid == info.gid[1];

        /* A process that is exiting has dropped its memory, and the kernel then hands its files to root: the
         * owner read above is only the process's own if it was not exiting yet. PF_EXITING is set before the
         * memory goes, so reading it after the owner tells. The name is this read's too (as /proc/PID/comm has
         * it, without a file of its own to open). */
        r = read_proc_file_at(dir, pid, "stat", buf, sizeof(buf));
        if (r < 0)
                return r;
        r = proc_stat_parse(buf, &flags, &(uint64_t){ 0 });
        if (r < 0)
                return r;
        if (flags & PF_EXITING)
                return -ESRCH;
        r = proc_stat_comm(buf, info.comm);
        if (r < 0)
                return r;

        *ret = info;
        return 0;
}
