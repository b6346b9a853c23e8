/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "exporter-address.h"
#include "exporter-bus.h"
#include "exporter-config.h"
#include "exporter-http.h"
#include "log.h"

static ExporterConfig arg_config;
static const char *arg_config_file = EXPORTER_CONFIG_FILE;
static bool arg_config_file_given;

static void help(void)
{
        printf("Usage: vprof-exporter [OPTIONS]\n\n"
               "Serves vprofd's profiles over HTTP: pprof for go tool pprof, Parca and Alloy, service\n"
               "discovery, Prometheus metrics and flame graphs. Settings come from %s\n"
               "(see vprof-exporter(8)); options override them.\n\n"
               "      --listen=ADDR:PORT  the address to listen on, ADDR:PORT or [IPv6-ADDR]:PORT (default\n"
               "                          %s); unused when systemd passes the socket\n"
               "      --max-connections=N connections at once, 1..65536 (default %u); more are refused\n"
               "      --max-connections-per-ip=N\n"
               "                          connections at once from one address, 0..65536 (default 0: no\n"
               "                          limit of its own)\n"
               "      --request-timeout=SEC\n"
               "                          the time a client has to send its request, and the longest\n"
               "                          silence of a connection and wait for vprofd, 1..3600 (default %u)\n"
               "      --max-seconds=SEC   the longest profile a request may ask for, 1..86400 (default %u)\n"
               "      --max-response-bytes=BYTES\n"
               "                          the largest answer, 1024..4294967296 (default %llu)\n"
               "      --threads=N         worker threads, 1..64 (default %u)\n"
               "      --allow-targets=SPECS\n"
               "                          the targets that may be read, PIDs, units and cgroup paths\n"
               "                          separated by spaces (default: every target vprofd shows us)\n"
               "      --config=PATH       the configuration file (default %s)\n"
               "  -v, --verbose           log debug messages\n"
               "  -h, --help              show this help\n"
               "      --version           show the version\n",
               EXPORTER_CONFIG_FILE, EXPORTER_LISTEN_DEFAULT, EXPORTER_MAX_CONNECTIONS_DEFAULT,
               EXPORTER_REQUEST_TIMEOUT_SEC_DEFAULT, EXPORTER_MAX_SECONDS_DEFAULT,
               (unsigned long long)EXPORTER_MAX_RESPONSE_BYTES_DEFAULT, EXPORTER_THREADS_DEFAULT,
               EXPORTER_CONFIG_FILE);
}

enum { ARG_VERSION = 0x100, ARG_CONFIG, ARG_SETTING };

static const struct {
        const char *option;
        const char *key;
} setting_options[] = {
        { "listen", "Listen" },
        { "max-connections", "MaxConnections" },
        { "max-connections-per-ip", "MaxConnectionsPerIP" },
        { "request-timeout", "RequestTimeoutSec" },
        { "max-seconds", "MaxSeconds" },
        { "max-response-bytes", "MaxResponseBytes" },
        { "threads", "Threads" },
        { "allow-targets", "AllowTargets" },
};

/* Two passes: the first finds --config, --help and --version, the second applies the options over the
 * configuration file's settings. Returns 1 to go on, 0 to exit successfully. */
static int parse_argv_pass(int argc, char *argv[], bool settings_pass)
{
        struct option options[ELEMENTSOF(setting_options) + 5] = {
                { "config", required_argument, NULL, ARG_CONFIG },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
        };
        size_t n = 4;
        int c, r;

        for (size_t i = 0; i < ELEMENTSOF(setting_options); i++)
                options[n++] = (struct option){ setting_options[i].option, required_argument, NULL,
                                                ARG_SETTING + (int)i };
        options[n] = (struct option){};

        opterr = 0;
        optind = 0; /* GNU: start over */
        while ((c = getopt_long(argc, argv, ":vh", options, NULL)) >= 0) {
                if (c >= ARG_SETTING) {
                        size_t i = (size_t)(c - ARG_SETTING);

                        if (!settings_pass)
                                continue;
                        r = exporter_config_set(&arg_config, setting_options[i].key, optarg, NULL);
                        if (r < 0)
                                return r;
                        continue;
                }
                switch (c) {
                case ARG_CONFIG:
                        arg_config_file = optarg;
                        arg_config_file_given = true;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("vprof-exporter %s\n", VPROF_VERSION);
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

        exporter_config_init(&arg_config);
        r = parse_argv_pass(argc, argv, false);
        if (r <= 0)
                return r;
        r = exporter_config_load_file(&arg_config, arg_config_file, arg_config_file_given);
        if (r < 0)
                return r;
        return parse_argv_pass(argc, argv, true);
}

/* systemd's socket when socket-activated (one, a stream socket), else our own on Listen=. */
static int listen_socket(void)
{
        ExporterAddress a;
        int n, fd;

        n = sd_listen_fds(true);
        if (n < 0)
                return log_error_errno(n, "Failed to read the sockets passed by systemd: %m");
        if (n > 1)
                return log_error_errno(-EINVAL, "systemd passed %d sockets: expected one.", n);
        if (n == 1) {
                fd = SD_LISTEN_FDS_START;
                if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0)
                        return log_error_errno(-EINVAL, "The socket passed by systemd is no listening stream "
                                                        "socket.");
                return fd;
        }
        if (exporter_address_parse(arg_config.listen ?: EXPORTER_LISTEN_DEFAULT, &a) < 0)
                return log_error_errno(-EINVAL, "Invalid listening address %s.", arg_config.listen);
        fd = exporter_address_listen(&a, SOMAXCONN);
        if (fd < 0)
                return log_error_errno(fd, "Failed to listen on %s: %m", arg_config.listen ?: EXPORTER_LISTEN_DEFAULT);
        return fd;
}

static int run(int argc, char *argv[])
{
        Exporter e;
        char name[96] = "";
        sigset_t mask;
        int r, fd, sig;

        log_setup("vprof-exporter");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r;

        /* Blocked before the worker threads start, so that they inherit the mask and the main thread alone
         * takes SIGTERM and SIGINT. SIGPIPE: a client that went away is an error of its write, not our end. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        if (pthread_sigmask(SIG_BLOCK, &mask, NULL) != 0)
                return log_error_errno(-errno, "Failed to block the signals: %m");
        (void)signal(SIGPIPE, SIG_IGN);

        r = exporter_bus_setup((uint64_t)arg_config.request_timeout_sec * 1000000U);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the bus connections: %m");
        fd = listen_socket();
        if (fd < 0)
                return fd;
        (void)exporter_socket_name(fd, name, sizeof(name));
        r = exporter_http_start(&e, &arg_config, fd);
        if (r < 0)
                return r;
        log_info("Listening on %s: %u threads, %u connections at most, %u s to send a request, profiles of %u s "
                 "and %llu bytes at most, %zu targets allowed%s.",
                 name, arg_config.threads, arg_config.max_connections, arg_config.request_timeout_sec,
                 arg_config.max_seconds, (unsigned long long)arg_config.max_response_bytes,
                 arg_config.n_allow_targets, arg_config.n_allow_targets == 0 ? " (no allow-list: every one)" : "");
        (void)sd_notify(false, "READY=1");

        if (sigwait(&mask, &sig) != 0)
                sig = SIGTERM;
        log_info("Stopping on %s.", strsignal(sig));
        (void)sd_notify(false, "STOPPING=1");
        exporter_http_stop(&e);
        return 0;
}

int main(int argc, char *argv[])
{
        int r = run(argc, argv);

        exporter_config_done(&arg_config);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
