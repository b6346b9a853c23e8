/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "bus.h"
#include "debug-file.h"
#include "fd-limit.h"
#include "log.h"
#include "manager.h"
#include "manager-debuginfod.h"
#include "manager-groups.h"
#include "settings.h"
#include "state-store.h"
#include "time-util.h"
#include "vprof-abi.h"

static Settings arg_settings;
static const char *arg_config = VPROFD_CONFIG_FILE;
static bool arg_config_given;

static void help(void)
{
        printf("Usage: vprofd [OPTIONS]\n\n"
               "System-wide sampling profiler daemon; serves org.vprof.Profiler1 on the system bus.\n"
               "Settings come from %s (see vprofd.conf(5)); options override them.\n\n"
               "  -F, --frequency=HZ     samples per second on each CPU, 1..10000 (default 99)\n"
               "  -e, --event=EVENT      auto, cycles or cpu-clock (default auto: cycles, else cpu-clock)\n"
               "      --ring-size=MIB    ring buffer size in MiB, 1..1024, rounded up to a power of two\n"
               "                         (default: a second of samples of every CPU, 1..256 MiB)\n"
               "      --max-targets=N    most processes attached at once, 1..65536 (default %u)\n"
               "      --max-targets-per-user=N\n"
               "                         most targets attached by one user other than root, running\n"
               "                         or exited, 0..65536 (default %u, or half of --max-targets if\n"
               "                         less; 0: no limit per user)\n"
               "      --exited-target-retention=SEC\n"
               "                         detach an exited target SEC seconds after it exited (default\n"
               "                         %u; 0: keep it until detached or its slot is needed)\n"
               "      --max-functions=N  most distinct functions per target, 1..16777216 (default %u);\n"
               "                         more are counted as [other]\n"
               "      --max-stacks=N     most distinct stacks per target, 1..16777216 (default %u);\n"
               "                         more are counted in the [other] stack\n"
               "      --symbol-cache-size=MIB\n"
               "                         memory for parsed symbol tables, 1..65536 MiB (default %u)\n"
               "      --unwind-table-size=MIB\n"
               "                         kernel memory for the unwind tables that the BPF program\n"
               "                         walks user stacks with, 0..4096 MiB (default %u; 0: frame\n"
               "                         pointers only)\n"
               "      --unwind-self-check=N\n"
               "                         also unwind 1 in N samples' user stacks with the daemon's own\n"
               "                         CFI interpreter and count whether they agree with the BPF\n"
               "                         walk, 0..1000000 (default 0: never; a check for tests)\n"
               "      --off-cpu          track off-CPU time of every target attached with Attach\n"
               "                         (default: only of targets attached with the off-CPU flag)\n"
               "      --python-interpreter-frames\n"
               "                         keep CPython's evaluation-loop frames below the Python\n"
               "                         functions they run (default: replaced by them)\n"
               "      --max-off-cpu-threads=N\n"
               "                         most target threads off the CPU at once whose wait is timed,\n"
               "                         1..1048576 (default %u; about 2.3 KiB of kernel memory each)\n"
               "      --exit-idle-time=SEC\n"
               "                         exit after SEC seconds with no target attached and no call\n"
               "                         (default 0: never; bus activation starts it again)\n"
               "      --state-directory=DIR\n"
               "                         save the targets' tables there and restore them at start\n"
               "                         (default $STATE_DIRECTORY, else " STATE_DIRECTORY_DEFAULT "; empty: none)\n"
               "      --snapshot-interval=SEC\n"
               "                         also save every SEC seconds (default 30; 0: only when stopping)\n"
               "      --journal-interval=SEC\n"
               "                         between saves, journal what the tables gained every SEC\n"
               "                         seconds, which a crash then loses at most (default 1; 0: no\n"
               "                         journal)\n"
               "      --window-seconds=N\n"
               "                         keep each target's counts of the last N seconds, second by\n"
               "                         second, for time windows over its tables, 0..86400 (default\n"
               "                         %u; 0: no windows, the tables count since the attach only)\n"
               "      --window-size=MIB  memory for those seconds per target, 1..4096 MiB (default %u);\n"
               "                         past it the oldest seconds go\n"
               "      --debug-directory=DIR[:DIR...]\n"
               "                         look for separate debug files there, in the target's file\n"
               "                         system (default " DEBUG_DIRECTORY_DEFAULT ")\n"
               "      --debuginfod-urls=URL[ URL...]\n"
               "                         download missing debug files by build-id from these\n"
               "                         debuginfod servers (default: none)\n"
               "      --debuginfod-timeout=SEC\n"
               "                         give up a download after SEC seconds, 1..3600 (default %u)\n"
               "      --config=PATH      read settings from PATH instead of %s\n"
               "  -v, --verbose          log debug messages\n"
               "  -h, --help             show this help\n"
               "      --version          show the version\n",
               VPROFD_CONFIG_FILE, VPROF_MAX_TARGETS_DEFAULT, VPROF_MAX_TARGETS_PER_USER_DEFAULT,
               VPROF_EXITED_TARGET_RETENTION_SEC_DEFAULT, VPROF_MAX_FUNCTIONS_DEFAULT, VPROF_MAX_STACKS_DEFAULT,
               VPROF_SYMBOL_CACHE_MIB_DEFAULT, VPROF_UNWIND_TABLE_MIB_DEFAULT, VPROF_MAX_OFF_CPU_THREADS_DEFAULT,
               VPROF_WINDOW_SECONDS_DEFAULT, VPROF_WINDOW_MIB_DEFAULT, VPROF_DEBUGINFOD_TIMEOUT_SEC_DEFAULT,
               VPROFD_CONFIG_FILE);
}

enum { ARG_VERSION = 0x100, ARG_CONFIG, ARG_SETTING };

/* Options that set a setting carry ARG_SETTING + its index here, mapped to the configuration key. */
static const struct {
        const char *option;
        const char *key;
        bool is_flag; /* a flag: sets the key to "yes" */
} setting_options[] = {
        { "frequency", "Frequency" },
        { "event", "Event" },
        { "ring-size", "RingSizeMiB" },
        { "max-targets", "MaxTargets" },
        { "max-targets-per-user", "MaxTargetsPerUser" },
        { "exited-target-retention", "ExitedTargetRetentionSec" },
        { "max-functions", "MaxFunctionsPerTarget" },
        { "max-stacks", "MaxStacksPerTarget" },
        { "symbol-cache-size", "SymbolCacheMiB" },
        { "unwind-table-size", "UnwindTableMiB" },
        { "unwind-self-check", "UnwindSelfCheck" },
        { "off-cpu", "OffCpu", true },
        { "python-interpreter-frames", "PythonInterpreterFrames", true },
        { "max-off-cpu-threads", "MaxOffCpuThreads" },
        { "exit-idle-time", "ExitIdleSec" },
        { "state-directory", "StateDirectory" },
        { "snapshot-interval", "SnapshotIntervalSec" },
        { "journal-interval", "JournalIntervalSec" },
        { "window-seconds", "WindowSeconds" },
        { "window-size", "WindowMiBPerTarget" },
        { "debug-directory", "DebugDirectory" },
        { "debuginfod-urls", "DebuginfodURLs" },
        { "debuginfod-timeout", "DebuginfodTimeoutSec" },
};

/* Two passes: the first finds --config, --help and --version, the second applies the options over the
 * configuration file's settings. */
static int parse_argv_pass(int argc, char *argv[], bool settings_pass)
{
        struct option options[ELEMENTSOF(setting_options) + 6] = {
                { "config", required_argument, NULL, ARG_CONFIG },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
        };
        size_t n = 4;
        int c, r;

        for (size_t i = 0; i < ELEMENTSOF(setting_options); i++)
                options[n++] = (struct option){ setting_options[i].option,
                                                setting_options[i].is_flag ? no_argument : required_argument,
                                                NULL, ARG_SETTING + (int)i };
        options[n] = (struct option){};

        opterr = 0;
        optind = 0; /* GNU: start over */
        while ((c = getopt_long(argc, argv, ":F:e:vh", options, NULL)) >= 0) {
                if (c == 'F')
                        c = ARG_SETTING + 0;
                else if (c == 'e')
                        c = ARG_SETTING + 1;
                if (c >= ARG_SETTING) {
                        size_t i = (size_t)(c - ARG_SETTING);
                        if (!settings_pass)
                                continue;
                        r = settings_set(&arg_settings, setting_options[i].key,
                                         setting_options[i].is_flag ? "yes" : optarg, NULL);
                        if (r < 0)
                                return r;
                        continue;
                }
                switch (c) {
                case ARG_CONFIG:
                        arg_config = optarg;
                        arg_config_given = true;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("vprofd %s\n", VPROF_VERSION);
                        return 0;
                case ':':
                        return log_error_errno(-EINVAL, "Option '%s' needs an argument.", argv[optind - 1]);
                default:
                        return log_error_errno(-EINVAL, "Unknown option '%s'.", argv[optind - 1]);
                }
        }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument '%s'.", argv[optind]);
        return 1;
}

static int parse_argv(int argc, char *argv[])
{
        int r;

        settings_init(&arg_settings);
        r = parse_argv_pass(argc, argv, false);
        if (r <= 0)
                return r;
        r = settings_load_file(&arg_settings, arg_config, arg_config_given);
        if (r < 0)
                return r;
        return parse_argv_pass(argc, argv, true);
}

static size_t round_up_pow2(size_t v)
{
        size_t p = 1;
        while (p < v)
                p <<= 1;
        return p;
}

/* Room for one second of samples with every online CPU busy in targets, at 512 bytes a record (56 frames):
 * the daemon drains every 200 ms and is woken at a quarter full, so even the deepest stacks (2 KiB records)
 * leave a wide margin, while the ring (mapped twice, so it counts double in the daemon's RSS) stays small. The
 * samples sent with their stack while a new library's table is on its way (struct vprof_sample_stack, 10 KiB
 * each) take at most half of it (50 of them in the smallest ring, 1 MiB), which the BPF program enforces; the
 * ring is not made larger for them: doubling it (2 MiB, 4 MiB of RSS) put vprofd's peak RSS in
 * bench/profilers.py above perf -g's. */
static size_t default_ring_size(uint32_t frequency)
{
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t bytes = (size_t)MAX(cpus, 1L) * frequency * 512;

        return MIN(MAX(round_up_pow2(bytes), (size_t)1 << 20), (size_t)256 << 20);
}

/* The per-user limit and the retention of exited targets (manager-slots.h); before the saved targets return. */
static int setup_target_slots(Manager *m)
{
        const Settings *s = &arg_settings;
        char per_user[48] = "no limit per user", retention[48] = "";
        int r;

        m->slots.max_targets_per_user = settings_max_targets_per_user(s);
        if (s->max_targets_per_user != UINT32_MAX && s->max_targets_per_user > s->max_targets)
                log_notice("MaxTargetsPerUser=%u is above MaxTargets=%u: a user may have %u targets.",
                           s->max_targets_per_user, s->max_targets, s->max_targets);
        if (m->slots.max_targets_per_user > 0)
                snprintf(per_user, sizeof(per_user), "%u per user other than root", m->slots.max_targets_per_user);
        if (s->exited_target_retention_sec > 0) {
                r = manager_slots_enable_retention(&m->slots, s->exited_target_retention_sec * USEC_PER_SEC);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the retention of exited targets: %m");
                snprintf(retention, sizeof(retention), ", %u s after its exit at most", s->exited_target_retention_sec);
        }
        log_info("Targets: %u at most, %s; an exited one stays until detached or its slot is needed%s.",
                 s->max_targets, per_user, retention);
        return 0;
}

static int run(int argc, char *argv[])
{
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(state_store_freep) StateStore *state = NULL; /* freed first: it observes m */
        _cleanup_free_ char *state_directory = NULL;
        const char *urls;
        SamplerConfig config;
        int r, k;

        log_setup("vprofd");
        /* Fixed thresholds, not glibc's moving ones: once libbpf frees the kernel's BTF (megabytes), the
         * moving mmap threshold would rise to its size and every later large, passing buffer (an ELF file's
         * sections, kallsyms) would come from the heap and leave it fragmented and large for good. Mapped
         * apart, a large buffer goes back to the kernel when freed. One arena: the daemon's few threads
         * allocate little, and an arena per thread is 64 MiB of address space and its own free memory. */
        (void)mallopt(M_MMAP_THRESHOLD, 128 << 10);
        (void)mallopt(M_TRIM_THRESHOLD, 256 << 10);
        (void)mallopt(M_ARENA_MAX, 1);
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;

        config = (SamplerConfig){
                .frequency = arg_settings.frequency,
                .event = arg_settings.event,
                .ring_size = arg_settings.ring_mib ? round_up_pow2((size_t)arg_settings.ring_mib << 20)
                                                   : default_ring_size(arg_settings.frequency),
                .max_targets = arg_settings.max_targets,
                .max_off_cpu_threads = arg_settings.max_off_cpu_threads,
                .off_cpu_default = arg_settings.off_cpu,
                .python_interpreter_frames = arg_settings.python_interpreter_frames,
                .unwind_table_mib = arg_settings.unwind_table_mib,
                .unwind_self_check = arg_settings.unwind_self_check,
        };
        r = manager_new(&config, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the daemon: %m");
        manager_groups_setup(m);
        m->max_functions = arg_settings.max_functions;
        m->max_stacks = arg_settings.max_stacks;
        m->window_seconds = arg_settings.window_seconds;
        m->window_bytes = (size_t)arg_settings.window_mib << 20;
        symbolizer_set_budget(m->symbolizer, (size_t)arg_settings.symbol_cache_mib << 20);
        /* An empty DebugDirectory= puts back the default. */
        r = symbolizer_set_debug_directory(m->symbolizer,
                                           arg_settings.debug_directory && arg_settings.debug_directory[0]
                                                   ? arg_settings.debug_directory
                                                   : NULL);
        if (r < 0)
                return log_error_errno(r, "Failed to set the debug directory: %m");
        /* Spaces alone are no URL: off, as when empty. */
        urls = arg_settings.debuginfod_urls;
        if (urls && urls[strspn(urls, " \t")]) {
                r = manager_enable_debuginfod(m, urls, arg_settings.debuginfod_timeout_sec);
                if (r < 0)
                        return r;
        }

        r = sd_event_set_signal_exit(m->event, true);
        if (r < 0)
                return log_error_errno(r, "Failed to handle SIGTERM and SIGINT: %m");
        /* WATCHDOG_USEC (WatchdogSec=): the event loop pings the service manager itself. A malformed variable
         * is no reason to stop profiling; the service manager notices the missing pings anyway. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog, running without: %m");
        else if (r > 0)
                log_debug("Watchdog enabled.");

        r = manager_start_sampling(m);
        if (r < 0)
                return r;
        /* Loading BPF parsed the kernel's BTF, megabytes now free: give them back, so that the daemon's RSS
         * shows what it holds rather than what it once needed. */
        (void)malloc_trim(0);
        log_info("Sampling with %s at %u Hz on %u CPUs (%s).", sampler_event_to_string(sampler_event(m->sampler)),
                 config.frequency, sampler_n_cpus(m->sampler), sampler_event_reason(m->sampler));
        log_info("Off-CPU time: %s.", config.off_cpu_default ? "tracked for every target"
                                                             : "tracked for targets attached with the off-CPU flag");
        r = setup_target_slots(m);
        if (r < 0)
                return r;
        /* Now that the perf events are open, and before saved targets are attached again. */
        fd_limit_setup(config.max_targets, &m->fd_limit, &m->pidfd_bound);
        log_debug("Ring buffer: %zu KiB.", config.ring_size >> 10);
        if (m->window_seconds > 0)
                log_info("Time windows: the last %" PRIu32 " s of each target, second by second, in %" PRIu32
                         " MiB per target at most.", m->window_seconds, arg_settings.window_mib);
        else
                log_info("Time windows: off, the tables count since the attach only.");

        /* The saved targets are back before the name is ours: the first caller finds them. */
        r = state_directory_choose(arg_settings.state_directory, &state_directory);
        if (r < 0)
                return log_error_errno(r, "Failed to choose the state directory: %m");
        state_store_setup(m, state_directory, arg_settings.snapshot_interval_sec * USEC_PER_SEC,
                          arg_settings.journal_interval_sec * USEC_PER_SEC, &state);

        /* Said once at the start; calls look the group up again (authz.h). */
        authz_readers_refresh(&m->authz);
        r = bus_setup(m);
        if (r < 0)
                return r;
        if (arg_settings.exit_idle_sec > 0) {
                r = manager_enable_idle_exit(m, arg_settings.exit_idle_sec * USEC_PER_SEC);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the idle exit: %m");
        }
        /* Only now: the BPF program is attached and the name is ours (Type=notify). */
        manager_notify_status(m, "READY=1\n");
        log_info("Ready on the system bus as org.vprof.Profiler1.");

        r = sd_event_loop(m->event);
        if (!m->exiting) /* the idle exit said so already */
                (void)sd_notify(false, "STOPPING=1\nSTATUS=Exiting.");
        /* The self-check's last word, with the records still in the ring. */
        if (arg_settings.unwind_self_check > 0) {
                manager_sync(m);
                manager_log_unwind_self_check(m);
        }
        /* Whatever ended the loop, the tables are saved while the sampler is still there to drain. */
        k = state_store_stop(state);
        bus_done(m);
        /* A failure exit, so that Restart=on-failure brings the daemon back, and a failed unit says what went
         * wrong. */
        if (r == -ENOTCONN)
                return log_error_errno(r, "Exiting with failure: the system bus connection is gone.");
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        if (k < 0)
                return log_error_errno(k, "Exiting with failure: the tables were not saved.");
        log_info("Exiting.");
        return 0;
}

int main(int argc, char *argv[])
{
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
