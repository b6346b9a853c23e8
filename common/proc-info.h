/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "utf8.h"

/* The kernel's command names: at most 15 bytes, any but NUL (TASK_COMM_LEN). */
#define PROC_COMM_LEN 15
/* A command name as vprofd keeps and shows it: escaped (utf8.h), at most 4 bytes for each of the kernel's. */
#define PROC_COMM_ESCAPED_SIZE (UTF8_ESCAPED_MAX(PROC_COMM_LEN) + 1)

/* What the daemon needs to know of a process before attaching to it, from /proc/PID/{stat,status,comm}. */
typedef struct ProcInfo {
        pid_t tgid;
        pid_t ns_tgid;          /* the PID as the process's own PID namespace sees it (NStgid), else tgid */
        uid_t uid[3];           /* real, effective, saved */
        gid_t gid[3];
        bool dumpable;          /* its /proc files belong to its effective user: not set-ID, not PR_SET_DUMPABLE 0 */
        bool kernel_thread;
        uint64_t start_time;    /* clock ticks since boot: with the PID, identifies the process */
        char comm[PROC_COMM_ESCAPED_SIZE]; /* escaped (utf8.h): valid UTF-8, one line */
} ProcInfo;

/* Parsers of the file texts (pure, for tests). */
int proc_stat_parse(const char *text, unsigned *ret_flags, uint64_t *ret_start_time);
/* ret_ns_tgid may be NULL. */
int proc_status_parse(const char *text, pid_t *ret_tgid, pid_t *ret_ns_tgid, uid_t ret_uid[3], gid_t ret_gid[3]);

/* The PID of the process as its own PID namespace sees it: the last field of NStgid. */
int proc_status_nstgid(const char *text, pid_t *ret);
int proc_read_nstgid(pid_t pid, pid_t *ret);

/* The escape (utf8.h) of the process's name in the text of /proc/PID/stat, as proc_comm_parse() gives it from
 * /proc/PID/comm; -EINVAL when the text has no "(NAME)". */
int proc_stat_comm(const char *text, char ret[static PROC_COMM_ESCAPED_SIZE]);

/* The escape (utf8.h) of the text of /proc/PID/comm (a newline ends it) in ret. */
void proc_comm_parse(const char *text, char ret[static PROC_COMM_ESCAPED_SIZE]);

/* -ESRCH when the process does not exist. */
int proc_info_read(pid_t pid, ProcInfo *ret);
