/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "bus.h"
#include "log.h"
#include "manager.h"
#include "parse-util.h"

static uint32_t arg_frequency = 99;
static SamplerEvent arg_event = SAMPLER_EVENT_AUTO;
static uint32_t arg_ring_mib; /* 0: sized from CPUs and frequency */
static uint32_t arg_max_targets = VPROF_MAX_TARGETS_DEFAULT;
static uint32_t arg_max_off_cpu_threads = VPROF_MAX_OFF_CPU_THREADS_DEFAULT;
static bool arg_off_cpu;
static uint32_t arg_exit_idle_sec; /* 0: never */
static const char *arg_state_directory; /* NULL: $STATE_DIRECTORY or the default; "": none */
static uint32_t arg_snapshot_interval_sec = 30; /* 0: only when stopping */

static void help(void)
{
        printf("Usage: vprofd [OPTIONS]\n\n"
               "System-wide sampling profiler daemon; serves org.vprof.Profiler1 on the system bus.\n\n"
               "  -F, --frequency=HZ     samples per second on each CPU, 1..10000 (default 99)\n"
               "  -e, --event=EVENT      auto, cycles or cpu-clock (default auto: cycles, else cpu-clock)\n"
               "      --ring-size=MIB    ring buffer size in MiB, 1..1024, rounded up to a power of two\n"
               "                         (default: a second of samples of every CPU, 1..256 MiB)\n"
               "      --max-targets=N    most processes attached at once, 1..65536 (default %u)\n"
               "      --off-cpu          track off-CPU time of every target attached with Attach\n"
               "                         (default: only of targets attached with the off-CPU flag)\n"
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
               "  -v, --verbose          log debug messages\n"
               "  -h, --help             show this help\n"
               "      --version          show the version\n",
               VPROF_MAX_TARGETS_DEFAULT, VPROF_MAX_OFF_CPU_THREADS_DEFAULT);
}

static int parse_argv(int argc, char *argv[])
{
        enum { ARG_VERSION = 0x100, ARG_RING_SIZE, ARG_MAX_TARGETS, ARG_OFF_CPU, ARG_MAX_OFF_CPU_THREADS,
               ARG_EXIT_IDLE_TIME, ARG_STATE_DIRECTORY, ARG_SNAPSHOT_INTERVAL };
        static const struct option options[] = {
                { "frequency", required_argument, NULL, 'F' },
                { "event", required_argument, NULL, 'e' },
                { "ring-size", required_argument, NULL, ARG_RING_SIZE },
                { "max-targets", required_argument, NULL, ARG_MAX_TARGETS },
                { "off-cpu", no_argument, NULL, ARG_OFF_CPU },
                { "max-off-cpu-threads", required_argument, NULL, ARG_MAX_OFF_CPU_THREADS },
                { "exit-idle-time", required_argument, NULL, ARG_EXIT_IDLE_TIME },
                { "state-directory", required_argument, NULL, ARG_STATE_DIRECTORY },
                { "snapshot-interval", required_argument, NULL, ARG_SNAPSHOT_INTERVAL },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                {}
        };
        int c, r;

        opterr = 0;
        while ((c = getopt_long(argc, argv, ":F:e:vh", options, NULL)) >= 0)
                switch (c) {
                case 'F':
                        r = parse_u32(optarg, 1, 10000, &arg_frequency);
                        if (r < 0)
                                return log_error_errno(-EINVAL, "Invalid frequency '%s': expected 1..10000 Hz.",
                                                       optarg);
                        break;
                case 'e':
                        arg_event = sampler_event_from_string(optarg);
                        if (arg_event < 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid event '%s': expected auto, cycles or cpu-clock.",
                                                       optarg);
                        break;
                case ARG_RING_SIZE:
                        r = parse_u32(optarg, 1, 1024, &arg_ring_mib);
                        if (r < 0)
                                return log_error_errno(-EINVAL, "Invalid ring size '%s': expected 1..1024 MiB.",
                                                       optarg);
                        break;
                case ARG_MAX_TARGETS:
                        r = parse_u32(optarg, 1, 65536, &arg_max_targets);
                        if (r < 0)
                                return log_error_errno(-EINVAL, "Invalid target limit '%s': expected 1..65536.",
                                                       optarg);
                        break;
                case ARG_OFF_CPU:
                        arg_off_cpu = true;
                        break;
                case ARG_MAX_OFF_CPU_THREADS:
                        r = parse_u32(optarg, 1, 1048576, &arg_max_off_cpu_threads);
                        if (r < 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid off-CPU thread limit '%s': expected 1..1048576.",
                                                       optarg);
                        break;
                case ARG_EXIT_IDLE_TIME:
                        r = parse_u32(optarg, 0, UINT32_MAX, &arg_exit_idle_sec);
                        if (r < 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid idle time '%s': expected seconds, 0 for never.",
                                                       optarg);
                        break;
                case ARG_STATE_DIRECTORY:
                        arg_state_directory = optarg;
                        break;
                case ARG_SNAPSHOT_INTERVAL:
                        r = parse_u32(optarg, 0, 86400, &arg_snapshot_interval_sec);
                        if (r < 0)
                                return log_error_errno(-EINVAL,
                                                       "Invalid snapshot interval '%s': expected 0..86400 seconds.",
                                                       optarg);
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
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument '%s'.", argv[optind]);
        return 1;
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
 * leave a wide margin, while the ring (mapped twice, so it counts double in the daemon's RSS) stays small. */
static size_t default_ring_size(uint32_t frequency)
{
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        size_t bytes = (size_t)MAX(cpus, 1L) * frequency * 512;

        return MIN(MAX(round_up_pow2(bytes), (size_t)1 << 20), (size_t)256 << 20);
}

static int run(int argc, char *argv[])
{
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_free_ char *state_directory = NULL;
        SamplerConfig config;
        int r;

        log_setup("vprofd");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;

        config = (SamplerConfig){
                .frequency = arg_frequency,
                .event = arg_event,
                .ring_size = arg_ring_mib ? round_up_pow2((size_t)arg_ring_mib << 20)
                                          : default_ring_size(arg_frequency),
                .max_targets = arg_max_targets,
                .max_off_cpu_threads = arg_max_off_cpu_threads,
                .off_cpu_default = arg_off_cpu,
        };
        r = manager_new(&config, &m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the daemon: %m");

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
        log_info("Sampling with %s at %u Hz on %u CPUs (%s).", sampler_event_to_string(sampler_event(m->sampler)),
                 config.frequency, sampler_n_cpus(m->sampler), sampler_event_reason(m->sampler));
        log_info("Off-CPU time: %s.", config.off_cpu_default ? "tracked for every target"
                                                             : "tracked for targets attached with the off-CPU flag");
        log_debug("Ring buffer: %zu KiB.", config.ring_size >> 10);

        /* The saved targets are back before the name is ours: the first caller finds them. */
        r = state_directory_choose(arg_state_directory, &state_directory);
        if (r < 0)
                return log_error_errno(r, "Failed to choose the state directory: %m");
        state_store_setup(m, state_directory, (uint64_t)arg_snapshot_interval_sec * 1000000);

        r = bus_setup(m);
        if (r < 0)
                return r;
        if (arg_exit_idle_sec > 0) {
                r = manager_enable_idle_exit(m, (uint64_t)arg_exit_idle_sec * 1000000);
                if (r < 0)
                        return log_error_errno(r, "Failed to set up the idle exit: %m");
        }
        /* Only now: the BPF program is attached and the name is ours (Type=notify). */
        manager_notify_status(m, "READY=1\n");
        log_info("Ready on the system bus as org.vprof.Profiler1.");

        r = sd_event_loop(m->event);
        /* Whatever ended the loop, the tables are saved while the sampler is still there to drain. */
        (void)state_store_save(m->state);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        if (!m->exiting) /* the idle exit said so already */
                (void)sd_notify(false, "STOPPING=1\nSTATUS=Exiting.");
        log_info("Exiting.");
        return 0;
}

int main(int argc, char *argv[])
{
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
