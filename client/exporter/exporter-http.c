/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bus-object.h"
#include "exporter-endpoints.h"
#include "exporter-escape.h"
#include "exporter-http.h"
#include "exporter-peer.h"
#include "log.h"

/* Bounds what one connection may send and hold: the request line, its query string and its headers; past it
 * libmicrohttpd answers 414 or 431 itself. */
#define CONNECTION_MEMORY_LIMIT (32U * 1024U)
/* A query string longer than this is refused with 414, whatever the memory limit lets through. */
#define QUERY_MAX 4096
#define QUERY_ARGS_MAX 16
#define REAPER_INTERVAL_NSEC (100U * 1000U * 1000U)

struct ConnectionTrack {
        int fd;
        uint64_t deadline_usec; /* CLOCK_MONOTONIC; 0 while a request is being answered */
        ConnectionTrack *prev, *next;
        /* Found once, when the connection starts: the client (who it is, for every request on the
         * connection), and the address it connected to, which its Host header may name. */
        ExporterPeer peer;
        char local_name[INET6_ADDRSTRLEN + 2]; /* "127.0.0.1", "[::1]"; empty on a unix socket */
        unsigned local_port;
};

static const struct {
        const char *path;
        ExporterHandler handler;
} routes[] = {
        { "/", exporter_serve_index },
        { "/targets", exporter_serve_targets },
        { "/metrics", exporter_serve_metrics },
        { "/debug/pprof/profile", exporter_serve_pprof },
        { "/flamegraph", exporter_serve_flamegraph },
};

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U;
}

static void track_arm(Exporter *e, ConnectionTrack *t, bool armed)
{
        pthread_mutex_lock(&e->lock);
        t->deadline_usec = armed ? now_usec() + (uint64_t)e->config->request_timeout_sec * 1000000U : 0;
        pthread_mutex_unlock(&e->lock);
}

static void *reaper_main(void *userdata)
{
        Exporter *e = userdata;

        pthread_mutex_lock(&e->lock);
        while (!e->stopping) {
                struct timespec ts;
                uint64_t now = now_usec();

                for (ConnectionTrack *t = e->tracks; t; t = t->next)
                        if (t->deadline_usec != 0 && t->deadline_usec <= now) {
                                /* The worker thread that owns the connection sees the end of its stream and
                                 * closes it; the descriptor stays its to close. */
                                (void)shutdown(t->fd, SHUT_RDWR);
                                t->deadline_usec = 0;
                                atomic_fetch_add_explicit(&e->counters.connections_timed_out, 1,
                                                          memory_order_relaxed);
                        }
                clock_gettime(CLOCK_MONOTONIC, &ts);
                ts.tv_nsec += REAPER_INTERVAL_NSEC;
                if (ts.tv_nsec >= 1000000000) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000;
                }
                (void)pthread_cond_timedwait(&e->wake, &e->lock, &ts);
        }
        pthread_mutex_unlock(&e->lock);
        return NULL;
}

/* The address the client connected to, as a Host header would name it. */
static void local_address(int fd, ConnectionTrack *t)
{
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        char text[INET6_ADDRSTRLEN];

        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
                return;
        if (sa.ss_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)&sa;

                if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)))
                        snprintf(t->local_name, sizeof(t->local_name), "%s", text);
                t->local_port = ntohs(in->sin_port);
        } else if (sa.ss_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa;

                if (inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)))
                        snprintf(t->local_name, sizeof(t->local_name), "[%s]", text);
                t->local_port = ntohs(in6->sin6_port);
        }
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
        Exporter *e = cls;
        ConnectionTrack *t;
        int r;

        if (code == MHD_CONNECTION_NOTIFY_STARTED) {
                const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

                atomic_fetch_add_explicit(&e->counters.connections_open, 1, memory_order_relaxed);
                t = calloc(1, sizeof(*t));
                if (!t || !info) {
                        /* Without its track the connection has only libmicrohttpd's idle timeout: cut it. */
                        free(t);
                        if (info)
                                (void)shutdown(info->connect_fd, SHUT_RDWR);
                        return;
                }
                t->fd = info->connect_fd;
                local_address(t->fd, t);
                r = exporter_peer_identify(t->fd, &t->peer);
                if (r < 0)
                        /* Nobody, then: the client reads nothing without a token. */
                        log_debug_errno(r, "Cannot tell who the client %s is: %m", t->peer.address);
                pthread_mutex_lock(&e->lock);
                t->deadline_usec = now_usec() + (uint64_t)e->config->request_timeout_sec * 1000000U;
                t->next = e->tracks;
                if (e->tracks)
                        e->tracks->prev = t;
                e->tracks = t;
                pthread_mutex_unlock(&e->lock);
                *socket_context = t;
                return;
        }
        atomic_fetch_sub_explicit(&e->counters.connections_open, 1, memory_order_relaxed);
        t = *socket_context;
        if (!t)
                return;
        pthread_mutex_lock(&e->lock);
        if (t->prev)
                t->prev->next = t->next;
        else
                e->tracks = t->next;
        if (t->next)
                t->next->prev = t->prev;
        pthread_mutex_unlock(&e->lock);
        free(t);
        *socket_context = NULL;
}

static ConnectionTrack *connection_track(struct MHD_Connection *c)
{
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        return info ? info->socket_context : NULL;
}

/* A request answered: the next one on the connection (keep-alive, pipelining) has its own deadline. */
static void on_completed(void *cls, struct MHD_Connection *c, void **request_context,
                         enum MHD_RequestTerminationCode code)
{
        Exporter *e = cls;
        ConnectionTrack *t = connection_track(c);

        (void)request_context;
        (void)code;
        if (t)
                track_arm(e, t, true);
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
        Exporter *e = cls;

        (void)addr;
        (void)addrlen;
        /* Counted from the connections started, so that several worker threads accepting at once may pass
         * MaxConnections= by at most Threads= - 1 between them. */
        if (atomic_load_explicit(&e->counters.connections_open, memory_order_relaxed) >=
            e->config->max_connections) {
                atomic_fetch_add_explicit(&e->counters.connections_rejected, 1, memory_order_relaxed);
                return MHD_NO;
        }
        return MHD_YES;
}

typedef struct QueryCheck {
        size_t n, bytes;
        bool bad;
} QueryCheck;

static enum MHD_Result check_argument(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                      const char *value, size_t value_size)
{
        QueryCheck *q = cls;

        (void)kind;
        q->n++;
        q->bytes += key_size + value_size;
        /* A %00 shows as a value shorter than its size. */
        if (!exporter_text_valid(key, key_size) || strlen(key) != key_size ||
            (value && (!exporter_text_valid(value, value_size) || strlen(value) != value_size)))
                q->bad = true;
        return MHD_YES;
}

typedef struct HostCount {
        const char *value;
        unsigned n;
} HostCount;

static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
        HostCount *h = cls;

        (void)kind;
        if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
                h->n++;
                h->value = value;
        }
        return MHD_YES;
}

/* A 401 with its challenge (RFC 6750). */
static enum MHD_Result respond_unauthorized(Exporter *e, struct MHD_Connection *c, const char *challenge,
                                           const char *reason)
{
        size_t n = strlen(reason);
        char *line = malloc(n + 2);

        if (!line)
                return MHD_NO;
        memcpy(line, reason, n);
        line[n] = '\n';
        line[n + 1] = '\0';
        return exporter_respond(c, &e->counters, 401, "text/plain; charset=utf-8", NULL, line, n + 1,
                                MHD_HTTP_HEADER_WWW_AUTHENTICATE, challenge);
}

/* A wrong token: counted, and logged once per client address and interval. */
static void wrong_token(Exporter *e, const ConnectionTrack *t)
{
        char address[sizeof(t->peer.address)];
        uint64_t suppressed = 0;
        bool say;

        atomic_fetch_add_explicit(&e->counters.auth_failures, 1, memory_order_relaxed);
        /* Per address, not per connection: the port changes with each connection. */
        snprintf(address, sizeof(address), "%s", t->peer.address);
        if (address[0] != '[' && strchr(address, ':'))
                *strchr(address, ':') = '\0';
        else if (address[0] == '[' && strchr(address, ']'))
                strchr(address, ']')[1] = '\0';
        pthread_mutex_lock(&e->lock);
        say = exporter_log_limit(&e->auth_log, address, now_usec(), &suppressed);
        pthread_mutex_unlock(&e->lock);
        if (say)
                log_warning("Wrong bearer token from %s (%" PRIu64 " more since the last line); the next ones from "
                            "it in the next %u s are only counted, in vprof_exporter_auth_failures_total.",
                            address, suppressed, (unsigned)(EXPORTER_AUTH_LOG_INTERVAL_USEC / 1000000U));
}

/* Whose rights the request reads with (docs/EXPORT.md): a right bearer token, ours; else a local client's own,
 * through vprofd's object for its user (vprof_bus_object_set_user()), or ours for a client of our own user;
 * anyone else nothing. Returns true with the thread's bus object set, or false with *ret the answer. */
static bool authorize(Exporter *e, struct MHD_Connection *c, const ConnectionTrack *t, enum MHD_Result *ret)
{
        const char *authorization = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                                 MHD_HTTP_HEADER_AUTHORIZATION);

        vprof_bus_object_reset();
        if (e->token && authorization) {
                if (exporter_bearer_matches(authorization, e->token, e->token_len))
                        return true;
                wrong_token(e, t);
                *ret = respond_unauthorized(e, c, "Bearer error=\"invalid_token\"", "unauthorized: wrong token");
                return false;
        }
        if (!t->peer.local) {
                if (e->token)
                        *ret = respond_unauthorized(e, c, "Bearer", "unauthorized: a bearer token is required");
                else
                        *ret = exporter_respond_error(c, &e->counters, 403, "access denied");
                return false;
        }
        if (!t->peer.known) {
                *ret = exporter_respond_error(c, &e->counters, 403, "access denied: cannot tell who is asking");
                return false;
        }
        if (t->peer.uid != e->uid)
                vprof_bus_object_set_user(t->peer.uid);
        return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **request_context)
{
        Exporter *e = cls;
        ConnectionTrack *t = connection_track(c);
        QueryCheck q = {};

        (void)version;
        (void)upload_data;
        /* The first call has the headers: the request line and headers are in, and from here the worker answers
         * it (a slow reader of the answer meets libmicrohttpd's idle timeout). The answer waits for the next
         * call, as an answer queued before the request's end makes libmicrohttpd close the connection, which
         * would drop the requests pipelined behind it. */
        if (!*request_context) {
                static char request_started;

                if (t)
                        track_arm(e, t, false);
                /* A request that would send a body is answered at once, and its connection closed: nothing
                 * here reads one, and a body trickling in would hold the connection past the deadline. */
                if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                        return exporter_respond_error(c, &e->counters, 405,
                                                      "method %s not allowed: only GET and HEAD", method);
                if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) ||
                    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
                        return exporter_respond_error(c, &e->counters, 400, "a request body is not accepted");
                *request_context = &request_started;
                return MHD_YES;
        }
        /* Never reached with a body (above); should one come, it is dropped. */
        if (*upload_data_size > 0) {
                *upload_data_size = 0;
                return MHD_YES;
        }
        {
                HostCount host = {};

                (void)MHD_get_connection_values(c, MHD_HEADER_KIND, count_host, &host);
                if (host.n != 1)
                        return exporter_respond_error(c, &e->counters, 400, "expected one Host header, not %u",
                                                      host.n);
                if (!t || !exporter_host_allowed(e->config, host.value, t->local_name[0] ? t->local_name : NULL,
                                                 t->local_port))
                        /* Against DNS rebinding: a page of another site, its name pointed at this machine,
                         * names that site. */
                        return exporter_respond_error(c, &e->counters, 421,
                                                      "misdirected request: this Host is not served here");
        }
        {
                enum MHD_Result answer;

                if (!authorize(e, c, t, &answer))
                        return answer;
        }
        (void)MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, check_argument, &q);
        if (q.bytes > QUERY_MAX || q.n > QUERY_ARGS_MAX)
                return exporter_respond_error(c, &e->counters, 414,
                                              "query string too long: at most %d bytes in %d parameters",
                                              QUERY_MAX, QUERY_ARGS_MAX);
        if (q.bad || !exporter_text_valid(url, strlen(url)))
                return exporter_respond_error(c, &e->counters, 400,
                                              "the path or the query string is not UTF-8 text");
        for (size_t i = 0; i < ELEMENTSOF(routes); i++)
                if (strcmp(url, routes[i].path) == 0) {
                        enum MHD_Result answer = routes[i].handler(e, c);

                        vprof_bus_object_reset();
                        return answer;
                }
        vprof_bus_object_reset();
        return exporter_respond_error(c, &e->counters, 404, "no such page: %s", url);
}

int exporter_http_start(Exporter *e, const ExporterConfig *config, const int *fds, size_t n, const char *token)
{
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
        int r;

        *e = (Exporter){ .config = config, .token = token, .token_len = token ? strlen(token) : 0,
                         .uid = geteuid() };
        pthread_mutex_init(&e->lock, NULL);
        /* The deadline thread's waits are on CLOCK_MONOTONIC, as its deadlines: the default clock of a condition
         * variable is CLOCK_REALTIME, against which a monotonic time is long past and every wait would return at
         * once. */
        {
                pthread_condattr_t attr;

                pthread_condattr_init(&attr);
                pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
                pthread_cond_init(&e->wake, &attr);
                pthread_condattr_destroy(&attr);
        }

        if (n == 0 || n > EXPORTER_LISTEN_MAX) {
                for (size_t i = 0; i < n; i++)
                        close(fds[i]);
                return log_error_errno(-EINVAL, "Expected 1 to %d listening sockets, got %zu.", EXPORTER_LISTEN_MAX,
                                       n);
        }
        /* libmicrohttpd wants the sockets non-blocking with epoll. */
        for (size_t i = 0; i < n; i++)
                if (fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK) < 0) {
                        r = -errno;
                        for (size_t j = 0; j < n; j++)
                                close(fds[j]);
                        return log_error_errno(r, "Failed to make the listening socket non-blocking: %m");
                }

        r = -pthread_create(&e->reaper, NULL, reaper_main, e);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        close(fds[i]);
                return log_error_errno(r, "Failed to start the request deadline thread: %m");
        }
        e->reaper_started = true;

        /* One libmicrohttpd daemon a socket, as it listens on one; they share the counters and MaxConnections=
         * (on_accept()). */
        for (size_t i = 0; i < n; i++) {
                struct MHD_OptionItem options[16];
                size_t k = 0;

                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, fds[i], NULL };
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->threads, NULL };
                /* The global bound is on_accept()'s; libmicrohttpd splits its own among the worker threads, so it
                 * is set where no thread's share is reached first. */
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT,
                                                        (intptr_t)config->max_connections * config->threads, NULL };
                /* libmicrohttpd's idle timeout a second after the request deadline: a request that is not all in
                 * is the deadline thread's to cut (and count), the idle timeout then cuts a silent reader of an
                 * answer. */
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT,
                                                        config->request_timeout_sec + 1, NULL };
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY_LIMIT,
                                                        NULL };
                if (config->max_connections_per_ip > 0)
                        options[k++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                                                config->max_connections_per_ip, NULL };
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, e };
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, e };
                options[k++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

                e->mhd[i] = MHD_start_daemon(flags, 0, on_accept, e, on_request, e, MHD_OPTION_ARRAY, options,
                                             MHD_OPTION_END);
                if (!e->mhd[i]) {
                        /* The sockets not yet libmicrohttpd's are closed; the program exits. */
                        for (size_t j = i; j < n; j++)
                                close(fds[j]);
                        exporter_http_stop(e);
                        return log_error_errno(-EINVAL, "Failed to start the HTTP server (libmicrohttpd).");
                }
                e->n_mhd = i + 1;
        }
        return 0;
}

void exporter_http_stop(Exporter *e)
{
        /* Closes the listening socket too, and lets the answers being sent finish. */
        for (size_t i = 0; i < e->n_mhd; i++) {
                MHD_stop_daemon(e->mhd[i]);
                e->mhd[i] = NULL;
        }
        e->n_mhd = 0;
        if (e->reaper_started) {
                pthread_mutex_lock(&e->lock);
                e->stopping = true;
                pthread_cond_signal(&e->wake);
                pthread_mutex_unlock(&e->lock);
                pthread_join(e->reaper, NULL);
                e->reaper_started = false;
        }
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->wake);
}
