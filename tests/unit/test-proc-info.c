/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check-main.h"
#include "cpu-list.h"
#include "macros.h"
#include "parse-util.h"
#include "proc-info.h"

START_TEST(test_parse_pid)
{
        uint32_t v = 7;

        ck_assert_int_eq(parse_pid("1", &v), 0);
        ck_assert_uint_eq(v, 1);
        ck_assert_int_eq(parse_pid("4194304", &v), 0);
        ck_assert_uint_eq(v, 4194304);
        static const char *const bad[] = { "0", "-1", "+1", " 1", "1 ", "1a", "", "0x10", "4194305",
                                            "99999999999999999999999" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                v = 7;
                ck_assert_msg(parse_pid(bad[i], &v) < 0, "accepted '%s'", bad[i]);
                ck_assert_uint_eq(v, 7); /* untouched on failure */
        }
        ck_assert_int_eq(parse_pid("", &v), -EINVAL);
        ck_assert_int_eq(parse_u32("10001", 1, 10000, &v), -ERANGE);
        ck_assert_int_eq(parse_u32("10000", 1, 10000, &v), 0);
}
END_TEST

START_TEST(test_cpu_list)
{
        bool cpus[16];

        ck_assert_int_eq(cpu_list_parse("0-3,8,10-11\n", cpus, 16), 7);
        ck_assert(cpus[0] && cpus[3] && !cpus[4] && cpus[8] && !cpus[9] && cpus[11] && !cpus[12]);
        ck_assert_int_eq(cpu_list_parse("0\n", cpus, 16), 1);
        ck_assert_int_eq(cpu_list_parse("0-31", cpus, 16), 16); /* clipped to the bitmap */
        ck_assert_int_eq(cpu_list_parse("3-1", cpus, 16), -EINVAL);
        ck_assert_int_eq(cpu_list_parse("a", cpus, 16), -EINVAL);
        ck_assert_int_eq(cpu_list_parse("1,,2", cpus, 16), -EINVAL);
        ck_assert_int_eq(cpu_list_parse("1-", cpus, 16), -EINVAL);
        /* The real file agrees with sysconf. */
        bool online[4096];
        ck_assert_int_eq(cpu_list_read_online(online, 4096), (int)sysconf(_SC_NPROCESSORS_ONLN));
}
END_TEST

START_TEST(test_stat_and_status_parsers)
{
        unsigned flags;
        uint64_t start;
        pid_t tgid;
        pid_t ns_tgid;
        uid_t uid[3];
        gid_t gid[3];

        /* A command with spaces and parentheses must not shift the fields. */
        const char *stat = "1234 (we ird) (x)) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 987654 "
                           "1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        ck_assert_int_eq(proc_stat_parse(stat, &flags, &start), 0);
        ck_assert_uint_eq(flags, 4194560);
        ck_assert_uint_eq(start, 987654);
        ck_assert_int_eq(proc_stat_parse("garbage", &flags, &start), -EINVAL);
        ck_assert_int_eq(proc_stat_parse("1 (x) S 1", &flags, &start), -EINVAL);

        const char *status = "Name:\tdemo\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4321\nNgid:\t0\n"
                             "Pid:\t4322\nPPid:\t1\nTracerPid:\t0\nUid:\t1000\t1001\t1002\t1003\nGid:\t10\t20\t30\t40\n";
        ck_assert_int_eq(proc_status_parse(status, &tgid, &ns_tgid, uid, gid), 0);
        ck_assert_int_eq(tgid, 4321);
        ck_assert_int_eq(ns_tgid, 4321); /* no NStgid line: the same */
        ck_assert_uint_eq(uid[0], 1000);
        ck_assert_uint_eq(uid[1], 1001);
        ck_assert_uint_eq(uid[2], 1002);
        ck_assert_uint_eq(gid[0], 10);
        ck_assert_uint_eq(gid[1], 20);
        ck_assert_uint_eq(gid[2], 30);
        ck_assert_int_eq(proc_status_parse("Name:\tx\n", &tgid, NULL, uid, gid), -EINVAL);
        ck_assert_int_eq(proc_status_parse("Name:\tx\nTgid:\t1\nUid:\t1 1 1 1\n", &tgid, NULL, uid, gid), -EINVAL);

        /* In a container two levels down: the last NStgid is the process's own view. */
        const char *nested = "Name:\tdemo\nTgid:\t4321\nUid:\t0 0 0 0\nGid:\t0 0 0 0\nNStgid:\t4321\t57\t2\n"
                             "NSpid:\t4321\t57\t2\n";
        ck_assert_int_eq(proc_status_parse(nested, &tgid, &ns_tgid, uid, gid), 0);
        ck_assert_int_eq(tgid, 4321);
        ck_assert_int_eq(ns_tgid, 2);
}
END_TEST

START_TEST(test_nstgid)
{
        pid_t pid = 0;

        /* In a container two levels down: the last field is the PID as the process sees it. */
        ck_assert_int_eq(proc_status_nstgid("Name:\tjava\nTgid:\t4242\nNStgid:\t4242\t77\t1\nPid:\t4242\n", &pid),
                         0);
        ck_assert_int_eq(pid, 1);
        ck_assert_int_eq(proc_status_nstgid("Tgid:\t9\nNStgid:\t9\n", &pid), 0);
        ck_assert_int_eq(pid, 9);
        ck_assert_int_eq(proc_status_nstgid("Tgid:\t9\n", &pid), -ENOENT);
        ck_assert_int_eq(proc_status_nstgid("Tgid:\t9\nNStgid:\t\n", &pid), -EINVAL);
        ck_assert_int_eq(pid, 9);
        ck_assert_int_eq(proc_read_nstgid(getpid(), &pid), 0);
        ck_assert_int_gt(pid, 0);
}
END_TEST

START_TEST(test_read_real_processes)
{
        ProcInfo info;
        char comm[64] = "";
        FILE *f;

        ck_assert_int_eq(proc_info_read(getpid(), &info), 0);
        ck_assert_int_eq(info.tgid, getpid());
        ck_assert_uint_eq(info.uid[0], getuid());
        ck_assert_uint_eq(info.uid[1], geteuid());
        ck_assert(!info.kernel_thread);
        ck_assert_uint_gt(info.start_time, 0);
        ck_assert_str_eq(info.comm, "test-proc-info");

        /* kthreadd is PID 2 on every kernel booted normally; skip the check inside a PID namespace. */
        f = fopen("/proc/2/comm", "re");
        if (f) {
                ck_assert_ptr_nonnull(fgets(comm, sizeof(comm), f));
                fclose(f);
        }
        if (strcmp(comm, "kthreadd\n") == 0) {
                ck_assert_int_eq(proc_info_read(2, &info), 0);
                ck_assert(info.kernel_thread);
        }
        ck_assert_int_eq(proc_info_read(4194304 + 1, &info), -ESRCH);
}
END_TEST

/* A child that turns into another user, then makes itself not dumpable, each step acknowledged on a pipe. */
START_TEST(test_dumpable)
{
        int to_child[2], from_child[2];
        ProcInfo info;
        char c;
        pid_t pid;

        if (geteuid() != 0)
                return; /* only root can switch users; the parser part is tested above */
        ck_assert_int_eq(pipe(to_child), 0);
        ck_assert_int_eq(pipe(from_child), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(1);
                /* Changing credentials clears the dumpable flag; a process that wants to be traced sets it. */
                prctl(PR_SET_DUMPABLE, 1);
                if (write(from_child[1], "1", 1) != 1 || read(to_child[0], &c, 1) != 1)
                        _exit(1);
                prctl(PR_SET_DUMPABLE, 0);
                if (write(from_child[1], "2", 1) != 1 || read(to_child[0], &c, 1) != 1)
                        _exit(1);
                _exit(0);
        }
        ck_assert_int_eq(read(from_child[0], &c, 1), 1);
        ck_assert_int_eq(proc_info_read(pid, &info), 0);
        ck_assert_uint_eq(info.uid[1], 65534);
        ck_assert_uint_eq(info.gid[2], 65534);
        ck_assert(info.dumpable);
        ck_assert_int_eq(write(to_child[1], "x", 1), 1);
        ck_assert_int_eq(read(from_child[0], &c, 1), 1);
        ck_assert_int_eq(proc_info_read(pid, &info), 0);
        ck_assert(!info.dumpable);
        ck_assert_int_eq(write(to_child[1], "x", 1), 1);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
END_TEST

/* The name in /proc/PID/stat, as proc_info_read() takes it: between the first '(' and the last ')', whatever
 * parentheses, spaces and newlines the name has, and as /proc/PID/comm gives it. */
START_TEST(test_stat_comm)
{
        char comm[PROC_COMM_ESCAPED_SIZE], expected[PROC_COMM_ESCAPED_SIZE], line[64] = "";
        FILE *f;

        ck_assert_int_eq(proc_stat_comm("12 (sleep) S 1 12 12 0 -1", comm), 0);
        ck_assert_str_eq(comm, "sleep");
        ck_assert_int_eq(proc_stat_comm("12 (a) b) (c) S 1 12", comm), 0);
        ck_assert_str_eq(comm, "a) b) (c");
        ck_assert_int_eq(proc_stat_comm("12 (x\ny\n) R 1", comm), 0);
        ck_assert_str_eq(comm, "x\\ny\\n");
        ck_assert_int_eq(proc_stat_comm("12 () R 1", comm), 0);
        ck_assert_str_eq(comm, "");
        /* Longer than a name can be: cut at its 15 bytes, never read past the ')'. */
        ck_assert_int_eq(proc_stat_comm("12 (0123456789abcdefXYZ) R 1", comm), 0);
        ck_assert_str_eq(comm, "0123456789abcde");
        ck_assert_int_eq(proc_stat_comm("12 sleep S 1", comm), -EINVAL);
        ck_assert_int_eq(proc_stat_comm("12 )sleep( S 1", comm), -EINVAL);
        ck_assert_int_eq(proc_stat_comm("", comm), -EINVAL);

        f = fopen("/proc/self/comm", "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        fclose(f);
        proc_comm_parse(line, expected);
        f = fopen("/proc/self/stat", "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        fclose(f);
        ck_assert_int_eq(proc_stat_comm(line, comm), 0);
        ck_assert_str_eq(comm, expected);
}
END_TEST

/* A process names itself with any bytes: what vprofd keeps is their escape, valid UTF-8 of one line. */
START_TEST(test_comm_escaped)
{
        char comm[PROC_COMM_ESCAPED_SIZE];
        ProcInfo info;
        int fds[2];
        pid_t pid;
        char c;

        proc_comm_parse("sleep\n", comm);
        ck_assert_str_eq(comm, "sleep");
        proc_comm_parse("x\xff\xfey\n", comm);
        ck_assert_str_eq(comm, "x\\xff\\xfey");
        proc_comm_parse("a\r\nb\n", comm);
        ck_assert_str_eq(comm, "a\\r\\nb");
        proc_comm_parse("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\n", comm);
        ck_assert_uint_eq(strlen(comm), 60);

        /* The same from a real process renamed by prctl(PR_SET_NAME). */
        ck_assert_int_eq(pipe(fds), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(fds[1]);
                prctl(PR_SET_NAME, "x\xff\xfe\r\ny");
                (void)!read(fds[0], &c, 1);
                _exit(0);
        }
        close(fds[0]);
        /* Wait for the rename: the child's comm changes once. */
        for (int i = 0; i < 1000; i++) {
                ck_assert_int_eq(proc_info_read(pid, &info), 0);
                if (strcmp(info.comm, "test-proc-info") != 0)
                        break;
                usleep(1000);
        }
        ck_assert_str_eq(info.comm, "x\\xff\\xfe\\r\\ny");
        close(fds[1]);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("proc-info");
        TCase *tc = tcase_create("parsers");

        tcase_add_test(tc, test_parse_pid);
        tcase_add_test(tc, test_cpu_list);
        tcase_add_test(tc, test_stat_and_status_parsers);
        tcase_add_test(tc, test_read_real_processes);
        tcase_add_test(tc, test_dumpable);
        tcase_add_test(tc, test_nstgid);
        tcase_add_test(tc, test_comm_escaped);
        tcase_add_test(tc, test_stat_comm);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
