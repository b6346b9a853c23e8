/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "exporter-access.h"
#include "exporter-address.h"
#include "exporter-bus.h"
#include "exporter-config.h"
#include "exporter-http.h"
#include "exporter-peer.h"
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
               "                          the time a client has to send its request, and the wait for\n"
               "                          vprofd's answer, 1..3600 (default %u)\n"
               "      --max-seconds=SEC   the longest profile a request may ask for, 1..86400 (default %u)\n"
               "      --max-response-bytes=BYTES\n"
               "                          the largest answer, 1024..4294967296 (default %llu)\n"
               "      --threads=N         worker threads, 1..64 (default %u)\n"
               "      --allow-targets=SPECS\n"
               "                          the targets that may be read, PIDs, units and cgroup paths\n"
               "                          separated by spaces (default: every target vprofd shows us)\n"
               "      --allow-hosts=NAMES the Host header's names accepted besides localhost and the\n"
               "                          addresses, separated by spaces (default: none)\n"
               "      --bearer-token-file=PATH\n"
               "                          the token a client from another machine must send, read at\n"
               "                          the start (default: the credential %s, if any)\n"
               "      --config=PATH       the configuration file (default %s)\n"
               "  -v, --verbose           log debug messages\n"
               "  -h, --help              show this help\n"
               "      --version           show the version\n",
               EXPORTER_CONFIG_FILE, EXPORTER_LISTEN_DEFAULT, EXPORTER_MAX_CONNECTIONS_DEFAULT,
               EXPORTER_REQUEST_TIMEOUT_SEC_DEFAULT, EXPORTER_MAX_SECONDS_DEFAULT,
               (unsigned long long)EXPORTER_MAX_RESPONSE_BYTES_DEFAULT, EXPORTER_THREADS_DEFAULT,
               EXPORTER_TOKEN_CREDENTIAL, EXPORTER_CONFIG_FILE);
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
        { "allow-hosts", "AllowHosts" },
        { "bearer-token-file", "BearerTokenFile" },
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

/* systemd's sockets when socket-activated (stream sockets, listening), else our own on Listen=. The number of
 * sockets in *ret_fds, or a negative errno. */
static int listen_sockets(int ret_fds[static EXPORTER_LISTEN_MAX])
{
        ExporterAddress a;
        int n, fd;

        n = sd_listen_fds(true);
        if (n < 0)
                return log_error_errno(n, "Failed to read the sockets passed by systemd: %m");
        if (n > EXPORTER_LISTEN_MAX)
                return log_error_errno(-EINVAL, "systemd passed %d sockets: expected %d at most.", n,
                                       EXPORTER_LISTEN_MAX);
        if (n > 0) {
                for (int i = 0; i < n; i++) {
                        fd = SD_LISTEN_FDS_START + i;
                        if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0)
                                return log_error_errno(-EINVAL, "A socket passed by systemd is no listening "
                                                                "stream socket.");
                        ret_fds[i] = fd;
                }
                return n;
        }
        if (exporter_address_parse(arg_config.listen ?: EXPORTER_LISTEN_DEFAULT, &a) < 0)
                return log_error_errno(-EINVAL, "Invalid listening address %s.", arg_config.listen);
        fd = exporter_address_listen(&a, SOMAXCONN);
        if (fd < 0)
                return log_error_errno(fd, "Failed to listen on %s: %m", arg_config.listen ?: EXPORTER_LISTEN_DEFAULT);
        ret_fds[0] = fd;
        return 1;
}

/* Whether a listening socket takes only this machine's clients: a unix socket, or a loopback address. */
static bool socket_is_local(int fd)
{
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);

        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
                return false;
        return sa.ss_family == AF_UNIX || exporter_address_is_loopback((struct sockaddr *)&sa);
}

/* The bearer token: BearerTokenFile=, else the credential systemd passes (LoadCredential=), else none (0 with
 * *ret NULL). */
static int load_token(char **ret)
{
        _cleanup_free_ char *credential = NULL;
        const char *path = arg_config.bearer_token_file, *dir;
        int r;

        *ret = NULL;
        if (!path) {
                dir = getenv("CREDENTIALS_DIRECTORY");
                if (!dir)
                        return 0;
                if (asprintf(&credential, "%s/%s", dir, EXPORTER_TOKEN_CREDENTIAL) < 0)
                        return log_error_errno(-ENOMEM, "Out of memory.");
                if (access(credential, F_OK) < 0)
                        return 0;
                path = credential;
        }
        r = exporter_token_load(path, ret);
        if (r == -EINVAL)
                return log_error_errno(r, "%s holds no token: expected one line of visible ASCII characters.", path);
        if (r == -EFBIG)
                return log_error_errno(r, "%s holds no token: longer than %d bytes.", path, EXPORTER_TOKEN_MAX);
        if (r < 0)
                return log_error_errno(r, "Failed to read the bearer token from %s: %m", path);
        log_info("Bearer token read from %s: a client that sends it reads with the exporter's rights.", path);
        return 0;
}

static int run(int argc, char *argv[])
{
        Exporter e;
        char name[96] = "", names[EXPORTER_LISTEN_MAX * 100] = "",
             allowed[64] = "every target vprofd shows (no allow-list)";
        _cleanup_free_ char *token = NULL;
        int fds[EXPORTER_LISTEN_MAX];
        sigset_t mask;
        int r, n, sig;

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
        r = load_token(&token);
        if (r < 0)
                return r;
        n = listen_sockets(fds);
        if (n < 0)
                return n;
        for (int i = 0; i < n; i++) {
                (void)exporter_socket_name(fds[i], name, sizeof(name));
                /* A client from another machine has no user we could tell: it reads with a token, or nothing;
                 * never as nobody reading everything. */
                if (!socket_is_local(fds[i]) && !token) {
                        for (int j = 0; j < n; j++)
                                close(fds[j]);
                        return log_error_errno(-EPERM, "Refusing to listen on %s, beyond loopback, without a bearer "
                                                       "token (BearerTokenFile=, or the credential %s).",
                                               name, EXPORTER_TOKEN_CREDENTIAL);
                }
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i > 0 ? " and " : "",
                         name);
        }
        r = exporter_http_start(&e, &arg_config, fds, (size_t)n, token);
        if (r < 0)
                return r;
        if (arg_config.n_allow_targets > 0)
                snprintf(allowed, sizeof(allowed), "%zu targets allowed", arg_config.n_allow_targets);
        log_info("Listening on %s: %u threads, %u connections at most, %u s to send a request, profiles of %u s "
                 "and %llu bytes at most, %s.",
                 names, arg_config.threads, arg_config.max_connections, arg_config.request_timeout_sec,
                 arg_config.max_seconds, (unsigned long long)arg_config.max_response_bytes, allowed);
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
