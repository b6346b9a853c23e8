/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exporter-endpoints.h"
#include "exporter-escape.h"
#include "exporter-http.h"
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

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
        Exporter *e = cls;
        ConnectionTrack *t;

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
                *request_context = &request_started;
                return MHD_YES;
        }
        /* A body is never read: discard what came. */
        if (*upload_data_size > 0) {
                *upload_data_size = 0;
                return MHD_YES;
        }

        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return exporter_respond_error(c, &e->counters, 405, "method %s not allowed: only GET and HEAD",
                                              method);
        (void)MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, check_argument, &q);
        if (q.bytes > QUERY_MAX || q.n > QUERY_ARGS_MAX)
                return exporter_respond_error(c, &e->counters, 414,
                                              "query string too long: at most %d bytes in %d parameters",
                                              QUERY_MAX, QUERY_ARGS_MAX);
        if (q.bad || !exporter_text_valid(url, strlen(url)))
                return exporter_respond_error(c, &e->counters, 400,
                                              "the path or the query string is not UTF-8 text");
        for (size_t i = 0; i < ELEMENTSOF(routes); i++)
                if (strcmp(url, routes[i].path) == 0)
                        return routes[i].handler(e, c);
        return exporter_respond_error(c, &e->counters, 404, "no such page: %s", url);
}

int exporter_http_start(Exporter *e, const ExporterConfig *config, int listen_fd)
{
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
        struct MHD_OptionItem options[16];
        size_t n = 0;
        int r;

        *e = (Exporter){ .config = config };
        pthread_mutex_init(&e->lock, NULL);
        pthread_cond_init(&e->wake, NULL);

        /* libmicrohttpd wants the socket non-blocking with epoll. */
        if (fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
                r = -errno;
                close(listen_fd);
                return log_error_errno(r, "Failed to make the listening socket non-blocking: %m");
        }

        r = -pthread_create(&e->reaper, NULL, reaper_main, e);
        if (r < 0) {
                close(listen_fd);
                return log_error_errno(r, "Failed to start the request deadline thread: %m");
        }
        e->reaper_started = true;

        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, config->threads, NULL };
        /* The global bound is on_accept()'s; libmicrohttpd splits its own among the worker threads, so it is
         * set where no thread's share is reached first. */
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT,
                                                (intptr_t)config->max_connections * config->threads, NULL };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, config->request_timeout_sec, NULL };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY_LIMIT, NULL };
        if (config->max_connections_per_ip > 0)
                options[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                                        config->max_connections_per_ip, NULL };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, e };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, e };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

        e->mhd = MHD_start_daemon(flags, 0, on_accept, e, on_request, e, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
        if (!e->mhd) {
                /* The socket is left as libmicrohttpd left it: the program exits. */
                exporter_http_stop(e);
                return log_error_errno(-EINVAL, "Failed to start the HTTP server (libmicrohttpd).");
        }
        return 0;
}

void exporter_http_stop(Exporter *e)
{
        /* Closes the listening socket too, and lets the answers being sent finish. */
        if (e->mhd) {
                MHD_stop_daemon(e->mhd);
                e->mhd = NULL;
        }
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
