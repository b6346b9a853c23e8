/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vprofd's settings: the defaults, /etc/vprofd.conf (config-file.c) and the options over it (settings.c), and
 * the one-line errors a bad file or option gets. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "settings.h"
#include "test-util.h"
#include "vprof-abi.h"

/* What the code under test logs, from stderr_begin() to stderr_end(), which returns it. */
static int stderr_saved = -1;
static FILE *stderr_file;

static void stderr_begin(void)
{
        fflush(stderr);
        stderr_file = tmpfile();
        ck_assert_ptr_nonnull(stderr_file);
        stderr_saved = dup(STDERR_FILENO);
        ck_assert_int_ge(stderr_saved, 0);
        ck_assert_int_eq(dup2(fileno(stderr_file), STDERR_FILENO), STDERR_FILENO);
}

static char *stderr_end(void)
{
        char *text = NULL;
        size_t size = 0;

        fflush(stderr);
        ck_assert_int_eq(dup2(stderr_saved, STDERR_FILENO), STDERR_FILENO);
        close(stderr_saved);
        rewind(stderr_file);
        if (getdelim(&text, &size, '\0', stderr_file) < 0) {
                free(text);
                text = strdup("");
        }
        fclose(stderr_file);
        ck_assert_ptr_nonnull(text);
        return text;
}

/* Loads text as a configuration file into s; returns the result and, in *ret_log, what was logged, with the
 * file's path replaced by "PATH". */
static int load(Settings *s, const char *text, char **ret_log)
{
        _cleanup_free_ char *path = test_write_temp(text), *log = NULL;
        char *p;
        int r;

        stderr_begin();
        r = settings_load_file(s, path, true);
        log = stderr_end();
        ck_assert_int_eq(unlink(path), 0);
        /* "vprof: /tmp/vprof-unit-XXXXXX:2: ..." -> "PATH:2: ..." */
        p = strstr(log, path);
        if (p) {
                memcpy(p, "PATH", 4);
                memmove(p + 4, p + strlen(path), strlen(p + strlen(path)) + 1);
        }
        *ret_log = TAKE_PTR(log);
        return r;
}

START_TEST(test_defaults)
{
        Settings s;

        settings_init(&s);
        ck_assert_uint_eq(s.frequency, 99);
        ck_assert_int_eq(s.event, SAMPLER_EVENT_AUTO);
        ck_assert_uint_eq(s.ring_mib, 0);
        ck_assert_uint_eq(s.max_targets, VPROF_MAX_TARGETS_DEFAULT);
        ck_assert_uint_eq(s.exited_target_retention_sec, VPROF_EXITED_TARGET_RETENTION_SEC_DEFAULT);
        ck_assert_uint_eq(s.max_off_cpu_threads, VPROF_MAX_OFF_CPU_THREADS_DEFAULT);
        ck_assert(!s.off_cpu);
        ck_assert_uint_eq(s.exit_idle_sec, 0);
        ck_assert_uint_eq(s.max_functions, VPROF_MAX_FUNCTIONS_DEFAULT);
        ck_assert_uint_eq(s.max_stacks, VPROF_MAX_STACKS_DEFAULT);
        ck_assert_uint_eq(s.symbol_cache_mib, VPROF_SYMBOL_CACHE_MIB_DEFAULT);
        ck_assert_uint_eq(s.unwind_table_mib, VPROF_UNWIND_TABLE_MIB_DEFAULT);
        ck_assert_ptr_null(s.state_directory);
        ck_assert_uint_eq(s.snapshot_interval_sec, 30);
        ck_assert_uint_eq(s.journal_interval_sec, 1);
        ck_assert_ptr_null(s.debug_directory);
        ck_assert_ptr_null(s.debuginfod_urls);
        ck_assert_uint_eq(s.debuginfod_timeout_sec, VPROF_DEBUGINFOD_TIMEOUT_SEC_DEFAULT);
        /* 64 per user, or half of MaxTargets= when that is less. */
        ck_assert_uint_eq(settings_max_targets_per_user(&s), VPROF_MAX_TARGETS_PER_USER_DEFAULT);
        settings_done(&s);
}
END_TEST

START_TEST(test_file)
{
        _cleanup_free_ char *log = NULL;
        Settings s;

        settings_init(&s);
        ck_assert_int_eq(load(&s,
                              "# vprofd.conf\n"
                              "; another comment\n"
                              "\n"
                              "[Daemon]\n"
                              "  Frequency = 250  \n"
                              "Event=cpu-clock\r\n"
                              "RingSizeMiB=4\n"
                              "MaxTargets=10\n"
                              "ExitedTargetRetentionSec=0\n"
                              "OffCpu=yes\n"
                              "MaxOffCpuThreads=100\n"
                              "ExitIdleSec=60\n"
                              "MaxFunctionsPerTarget=5000\n"
                              "MaxStacksPerTarget=6000\n"
                              "SymbolCacheMiB=32\n"
                              "UnwindTableMiB=0\n"
                              "StateDirectory=/var/lib/vprof-test\n"
                              "SnapshotIntervalSec=0\n"
                              "JournalIntervalSec=5\n"
                              "DebugDirectory=/opt/debug\n"
                              "DebuginfodURLs=https://a.example  http://b.example:8002/x\n"
                              "DebuginfodTimeoutSec=3600\n",
                              &log),
                         0);
        ck_assert_str_eq(log, "");
        ck_assert_uint_eq(s.frequency, 250);
        ck_assert_int_eq(s.event, SAMPLER_EVENT_CPU_CLOCK);
        ck_assert_uint_eq(s.ring_mib, 4);
        ck_assert_uint_eq(s.max_targets, 10);
        ck_assert_uint_eq(s.exited_target_retention_sec, 0);
        ck_assert(s.off_cpu);
        ck_assert_uint_eq(s.max_off_cpu_threads, 100);
        ck_assert_uint_eq(s.exit_idle_sec, 60);
        ck_assert_uint_eq(s.max_functions, 5000);
        ck_assert_uint_eq(s.max_stacks, 6000);
        ck_assert_uint_eq(s.symbol_cache_mib, 32);
        ck_assert_uint_eq(s.unwind_table_mib, 0);
        ck_assert_str_eq(s.state_directory, "/var/lib/vprof-test");
        ck_assert_uint_eq(s.snapshot_interval_sec, 0);
        ck_assert_uint_eq(s.journal_interval_sec, 5);
        ck_assert_str_eq(s.debug_directory, "/opt/debug");
        ck_assert_str_eq(s.debuginfod_urls, "https://a.example  http://b.example:8002/x");
        ck_assert_uint_eq(s.debuginfod_timeout_sec, 3600);
        /* Half of MaxTargets=10. */
        ck_assert_uint_eq(settings_max_targets_per_user(&s), 5);
        settings_done(&s);

        /* The section header is optional; a later assignment wins; booleans in their usual spellings. */
        settings_init(&s);
        free(log);
        ck_assert_int_eq(load(&s, "OffCpu=on\nOffCpu=FALSE\nFrequency=1\nFrequency=10000\n", &log), 0);
        ck_assert(!s.off_cpu);
        ck_assert_uint_eq(s.frequency, 10000);
        settings_done(&s);
}
END_TEST

START_TEST(test_missing_file)
{
        _cleanup_free_ char *log = NULL;
        Settings s;

        settings_init(&s);
        /* The default path may be missing; a path given on the command line may not. */
        ck_assert_int_eq(settings_load_file(&s, "/nonexistent/vprofd.conf", false), 0);
        ck_assert_uint_eq(s.frequency, 99);
        stderr_begin();
        ck_assert_int_eq(settings_load_file(&s, "/nonexistent/vprofd.conf", true), -ENOENT);
        log = stderr_end();
        ck_assert_ptr_nonnull(strstr(log, "Failed to open the configuration file /nonexistent/vprofd.conf: "));
        settings_done(&s);
}
END_TEST

/* Each bad line is refused, at its line, with a message that names the key and what it takes, and the setting
 * keeps its value. */
START_TEST(test_bad_values)
{
        static const struct {
                const char *line;
                int error;
                const char *message;
        } cases[] = {
                { "Frequency=0", -EINVAL, "PATH:2: invalid frequency '0' for Frequency=: expected 1..10000 Hz.\n" },
                { "Frequency=10001", -EINVAL, "for Frequency=: expected 1..10000 Hz.\n" },
                { "Frequency=9x", -EINVAL, "invalid frequency '9x'" },
                { "Frequency=-5", -EINVAL, "invalid frequency '-5'" },
                { "Frequency=", -EINVAL, "invalid frequency ''" },
                { "Event=gpu", -EINVAL, "PATH:2: invalid event 'gpu' for Event=: expected auto, cycles or cpu-clock.\n" },
                { "OffCpu=maybe", -EINVAL, "invalid off-CPU setting 'maybe' for OffCpu=: expected yes or no." },
                { "MaxTargets=65537", -EINVAL, "expected 1..65536." },
                { "MaxTargetsPerUser=65537", -EINVAL, "expected 0..65536, 0 for none but MaxTargets=." },
                { "RingSizeMiB=0", -EINVAL, "expected 1..1024 MiB." },
                { "JournalIntervalSec=3601", -EINVAL, "expected 0..3600 seconds." },
                { "StateDirectory=var/lib/vprof", -EINVAL, "expected an absolute path, or nothing." },
                { "DebuginfodURLs=ftp://example.org", -EINVAL, "expected http:// or https:// URLs" },
                { "DebuginfodURLs=https://", -EINVAL, "invalid debuginfod URL list 'https://'" },
                { "Bogus=1", -ENOENT, "PATH:2: unknown setting 'Bogus'.\n" },
                { "[Sampler]", -EINVAL, "PATH:2: unknown section '[Sampler]': expected [Daemon].\n" },
                { "Frequency 100", -EINVAL, "PATH:2: expected Key=Value, got 'Frequency 100'.\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = NULL, *log = NULL;
                Settings s;

                settings_init(&s);
                ck_assert_int_ge(asprintf(&text, "[Daemon]\n%s\nExitIdleSec=5\n", cases[i].line), 0);
                ck_assert_msg(load(&s, text, &log) == cases[i].error, "%s", cases[i].line);
                ck_assert_msg(strstr(log, cases[i].message), "%s: logged '%s'", cases[i].line, log);
                /* One line, and the file is not read past it. */
                ck_assert_msg(strchr(log, '\n') == log + strlen(log) - 1, "%s: '%s'", cases[i].line, log);
                ck_assert_uint_eq(s.exit_idle_sec, 0);
                ck_assert_uint_eq(s.frequency, 99);
                ck_assert_int_eq(s.event, SAMPLER_EVENT_AUTO);
                ck_assert_ptr_null(s.state_directory);
                ck_assert_ptr_null(s.debuginfod_urls);
                settings_done(&s);
        }
}
END_TEST

/* The options go through settings_set() after the file, without a place in a file to name. */
START_TEST(test_options_override_the_file)
{
        _cleanup_free_ char *log = NULL;
        Settings s;

        settings_init(&s);
        ck_assert_int_eq(load(&s, "Frequency=250\nEvent=cycles\nStateDirectory=/var/lib/a\n", &log), 0);
        ck_assert_int_eq(settings_set(&s, "Frequency", "300", NULL), 0);
        ck_assert_int_eq(settings_set(&s, "StateDirectory", "", NULL), 0);
        ck_assert_int_eq(settings_set(&s, "OffCpu", "yes", NULL), 0);
        ck_assert_uint_eq(s.frequency, 300);
        ck_assert_int_eq(s.event, SAMPLER_EVENT_CYCLES);
        ck_assert_str_eq(s.state_directory, "");
        ck_assert(s.off_cpu);

        free(log);
        stderr_begin();
        ck_assert_int_eq(settings_set(&s, "Frequency", "0", NULL), -EINVAL);
        ck_assert_int_eq(settings_set(&s, "Nope", "1", NULL), -ENOENT);
        log = stderr_end();
        ck_assert_str_eq(log, "vprof: Invalid frequency '0': expected 1..10000 Hz.\n"
                              "vprof: command line: unknown setting 'Nope'.\n");
        ck_assert_uint_eq(s.frequency, 300);
        settings_done(&s);
}
END_TEST

START_TEST(test_max_targets_per_user)
{
        Settings s;

        settings_init(&s);
        s.max_targets = 1;
        ck_assert_uint_eq(settings_max_targets_per_user(&s), 1);
        s.max_targets = 10;
        ck_assert_int_eq(settings_set(&s, "MaxTargetsPerUser", "0", NULL), 0);
        ck_assert_uint_eq(settings_max_targets_per_user(&s), 0);
        /* Never above MaxTargets=. */
        ck_assert_int_eq(settings_set(&s, "MaxTargetsPerUser", "100", NULL), 0);
        ck_assert_uint_eq(settings_max_targets_per_user(&s), 10);
        settings_done(&s);
}
END_TEST

static Suite *settings_suite(void)
{
        Suite *s = suite_create("settings");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_file);
        tcase_add_test(tc, test_missing_file);
        tcase_add_test(tc, test_bad_values);
        tcase_add_test(tc, test_options_override_the_file);
        tcase_add_test(tc, test_max_targets_per_user);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(settings_suite());
}
