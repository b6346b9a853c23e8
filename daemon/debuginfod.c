/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#if HAVE_ELFUTILS_DEBUGINFOD_H
#include <elfutils/debuginfod.h>
#else
typedef struct debuginfod_client debuginfod_client;
#endif

#include "debuginfod.h"
#include "file-util.h"
#include "log.h"
#include "time-util.h"

#define LIBDEBUGINFOD_SONAME "libdebuginfod.so.1"
#define CACHE_DIRECTORY_DEFAULT "/var/cache/vprofd"

/* Build-ids waiting for the worker at most; more are refused until some are answered (fetch-table.h). */
#define MAX_PENDING 256

/* The few functions of libdebuginfod (elfutils >= 0.179) used here. */
typedef debuginfod_client *(*begin_fn)(void);
typedef int (*find_debuginfo_fn)(debuginfod_client *c, const unsigned char *build_id, int build_id_len,
                                 char **path);
typedef int (*progress_fn)(debuginfod_client *c, long a, long b);
typedef void (*set_progressfn_fn)(debuginfod_client *c, progress_fn fn);
typedef void (*end_fn)(debuginfod_client *c);

#if HAVE_ELFUTILS_DEBUGINFOD_H
/* Our declarations must be the header's, where there is one to compare with. */
_Static_assert(__builtin_types_compatible_p(typeof(&debuginfod_begin), begin_fn), "debuginfod_begin");
_Static_assert(__builtin_types_compatible_p(typeof(&debuginfod_find_debuginfo), find_debuginfo_fn),
               "debuginfod_find_debuginfo");
_Static_assert(__builtin_types_compatible_p(typeof(&debuginfod_set_progressfn), set_progressfn_fn),
               "debuginfod_set_progressfn");
_Static_assert(__builtin_types_compatible_p(typeof(&debuginfod_end), end_fn), "debuginfod_end");
#endif

/* One finished download, from the worker to the event loop. */
typedef struct Answer {
        struct Answer *next;
        char *build_id;
        char *path; /* NULL: none */
        int error;  /* then why, as a negative errno */
} Answer;

struct Debuginfod {
        void *dl;
        begin_fn begin;
        find_debuginfo_fn find_debuginfo;
        set_progressfn_fn set_progressfn;
        end_fn end;

        uint64_t timeout_usec;
        FetchTable *table; /* the event loop's only */
        bool queue_full_logged;
        DebuginfodDone done;
        void *userdata;
        int efd; /* the worker's "answers are ready" */
        sd_event_source *efd_source;

        pthread_t thread;
        bool thread_started;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        /* Under lock. */
        char *queue[MAX_PENDING];
        size_t queue_head, queue_len;
        Answer *answers; /* newest first */
        bool stopping;   /* read without the lock by the progress function, so atomically */

        /* The worker's only. */
        uint64_t deadline_usec;
};

/* The progress function has only the client to go by, and the worker is the one thread that calls it. */
static _Thread_local Debuginfod *worker_self;

static void answer_free(Answer *a)
{
        free(a->build_id);
        free(a->path);
        free(a);
}

/* Called by libdebuginfod about every second while a download runs: non-zero cancels it. This is what bounds
 * a server that accepts the connection and never answers, past DEBUGINFOD_TIMEOUT's idea of progress. */
static int on_progress(debuginfod_client *c, long a, long b)
{
        Debuginfod *d = worker_self;

        (void)c, (void)a, (void)b;
        return d && (__atomic_load_n(&d->stopping, __ATOMIC_RELAXED) ||
                     now_usec(CLOCK_MONOTONIC) >= d->deadline_usec);
}

/* The next build-id to fetch (to be freed), NULL when stopping. */
static char *worker_next(Debuginfod *d)
{
        char *build_id = NULL;

        pthread_mutex_lock(&d->lock);
        while (!d->stopping && d->queue_len == 0)
                pthread_cond_wait(&d->wake, &d->lock);
        if (!d->stopping) {
                build_id = d->queue[d->queue_head];
                d->queue_head = (d->queue_head + 1) % MAX_PENDING;
                d->queue_len--;
        }
        pthread_mutex_unlock(&d->lock);
        return build_id;
}

static void worker_answer(Debuginfod *d, char *build_id, char *path, int error)
{
        static const uint64_t one = 1;
        Answer *a = calloc(1, sizeof(*a));

        if (!a) {
                /* Lost: the build-id stays pending, its file named as it is. */
                free(build_id);
                free(path);
                return;
        }
        *a = (Answer){ .build_id = build_id, .path = path, .error = error };
        pthread_mutex_lock(&d->lock);
        a->next = d->answers;
        d->answers = a;
        pthread_mutex_unlock(&d->lock);
        (void)!write(d->efd, &one, sizeof(one));
}

static void *worker(void *userdata)
{
        Debuginfod *d = userdata;
        debuginfod_client *client;
        char *build_id;

        worker_self = d;
        client = d->begin();
        if (client)
                d->set_progressfn(client, on_progress);
        while ((build_id = worker_next(d))) {
                char *path = NULL;
                int fd, error;

                if (!client) {
                        worker_answer(d, build_id, NULL, -ENOMEM);
                        continue;
                }
                d->deadline_usec = now_usec(CLOCK_MONOTONIC) + d->timeout_usec;
                fd = d->find_debuginfo(client, (const unsigned char *)build_id, 0, &path);
                error = fd < 0 ? fd : 0;
                if (fd >= 0)
                        close(fd);
                else if (now_usec(CLOCK_MONOTONIC) >= d->deadline_usec)
                        error = -ETIMEDOUT; /* cancelled by on_progress(), whatever the library made of it */
                worker_answer(d, build_id, fd >= 0 ? path : NULL, error);
                if (fd < 0)
                        free(path);
        }
        if (client)
                d->end(client);
        return NULL;
}

static int on_answers(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Debuginfod *d = userdata;
        Answer *answers, *reversed = NULL;
        uint64_t n;
        int r;

        (void)s, (void)revents;
        (void)!read(fd, &n, sizeof(n));
        pthread_mutex_lock(&d->lock);
        answers = TAKE_PTR(d->answers);
        pthread_mutex_unlock(&d->lock);
        while (answers) {
                Answer *next = answers->next;
                answers->next = reversed;
                reversed = answers;
                answers = next;
        }

        while (reversed) {
                Answer *a = reversed;
                const char *label = fetch_table_label(d->table, a->build_id) ?: "?";

                reversed = a->next;
                r = fetch_table_complete(d->table, a->build_id, a->path);
                if (r == -ENOMEM && a->path) {
                        /* Not recorded as done: later files of this build-id are not given it, these are. */
                        log_warning_errno(r, "Out of memory recording the debug file of %s.", label);
                }
                if (a->path)
                        log_info("Debug file of %s (build-id %s) from debuginfod: %s", label, a->build_id,
                                 a->path);
                else if (a->error == -ETIMEDOUT)
                        log_warning("No debug file of %s (build-id %s) from debuginfod: no answer within %" PRIu64
                                    " s.", label, a->build_id, d->timeout_usec / USEC_PER_SEC);
                else if (a->error == -ENOENT)
                        log_notice("No debug file of %s (build-id %s) on the debuginfod servers.", label,
                                   a->build_id);
                else
                        log_warning_errno(a->error, "No debug file of %s (build-id %s) from debuginfod: %m", label,
                                          a->build_id);
                if (d->done)
                        d->done(a->build_id, a->path, d->userdata);
                answer_free(a);
        }
        return 0;
}

static int load_library(Debuginfod *d)
{
        d->dl = dlopen(LIBDEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!d->dl) {
                log_warning("DebuginfodURLs= is set, but %s cannot be loaded (%s): install libdebuginfod1; debug "
                            "files are not downloaded.", LIBDEBUGINFOD_SONAME, dlerror());
                return -ENOPKG;
        }
        d->begin = (begin_fn)dlsym(d->dl, "debuginfod_begin");
        d->find_debuginfo = (find_debuginfo_fn)dlsym(d->dl, "debuginfod_find_debuginfo");
        d->set_progressfn = (set_progressfn_fn)dlsym(d->dl, "debuginfod_set_progressfn");
        d->end = (end_fn)dlsym(d->dl, "debuginfod_end");
        if (!d->begin || !d->find_debuginfo || !d->set_progressfn || !d->end) {
                log_warning("DebuginfodURLs= is set, but %s lacks the functions needed; debug files are not "
                            "downloaded.", LIBDEBUGINFOD_SONAME);
                return -ENOPKG;
        }
        return 0;
}

int debuginfod_cache_directory(char **ret)
{
        const char *base = getenv("CACHE_DIRECTORY");
        size_t n;
        char *path;

        /* systemd passes every CacheDirectory= separated by ':'; ours is the first. */
        if (!base || base[0] != '/')
                base = CACHE_DIRECTORY_DEFAULT;
        n = strcspn(base, ":");
        if (asprintf(&path, "%.*s/debuginfod", (int)n, base) < 0)
                return -ENOMEM;
        *ret = path;
        return 0;
}

int debuginfod_new(sd_event *event, const char *urls, const char *cache_dir, uint32_t timeout_sec,
                   DebuginfodDone done, void *userdata, Debuginfod **ret)
{
        _cleanup_(debuginfod_freep) Debuginfod *d = NULL;
        sigset_t all, saved;
        char timeout[16];
        int r;

        if (!event || !urls || !cache_dir || timeout_sec == 0 || !ret)
                return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->efd = -1;
        pthread_mutex_init(&d->lock, NULL);
        pthread_cond_init(&d->wake, NULL);
        d->timeout_usec = (uint64_t)timeout_sec * USEC_PER_SEC;
        d->done = done;
        d->userdata = userdata;
        r = fetch_table_new(MAX_PENDING, &d->table);
        if (r < 0)
                return r;

        r = load_library(d);
        if (r < 0)
                return r;
        r = mkdir_p(cache_dir, 0700);
        if (r < 0)
                return log_error_errno(r, "Failed to create the debuginfod cache directory %s: %m", cache_dir);

        /* The library takes its settings from the environment, read on every download: set before the worker
         * exists, and never again. DEBUGINFOD_TIMEOUT bounds a stalled transfer; on_progress() the whole. */
        snprintf(timeout, sizeof(timeout), "%" PRIu32, timeout_sec);
        if (setenv("DEBUGINFOD_URLS", urls, 1) < 0 || setenv("DEBUGINFOD_CACHE_PATH", cache_dir, 1) < 0 ||
            setenv("DEBUGINFOD_TIMEOUT", timeout, 1) < 0)
                return -ENOMEM;
        (void)unsetenv("DEBUGINFOD_PROGRESS");
        (void)unsetenv("DEBUGINFOD_VERBOSE");

        d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (d->efd < 0)
                return negative_errno();
        r = sd_event_add_io(event, &d->efd_source, d->efd, EPOLLIN, on_answers, d);
        if (r < 0)
                return r;
        /* Every signal blocked in the worker (it inherits the mask): SIGTERM is for the event loop, and
         * sd_event_set_signal_exit() may block it only later. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        r = -pthread_create(&d->thread, NULL, worker, d);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        if (r < 0)
                return r;
        d->thread_started = true;
        *ret = TAKE_PTR(d);
        return 0;
}

Debuginfod *debuginfod_free(Debuginfod *d)
{
        if (!d)
                return NULL;
        if (d->thread_started) {
                pthread_mutex_lock(&d->lock);
                __atomic_store_n(&d->stopping, true, __ATOMIC_RELAXED);
                pthread_cond_broadcast(&d->wake);
                pthread_mutex_unlock(&d->lock);
                pthread_join(d->thread, NULL);
        }
        for (size_t i = 0; i < d->queue_len; i++)
                free(d->queue[(d->queue_head + i) % MAX_PENDING]);
        while (d->answers) {
                Answer *next = d->answers->next;
                answer_free(d->answers);
                d->answers = next;
        }
        sd_event_source_disable_unref(d->efd_source);
        safe_close(d->efd);
        /* The library stays loaded: unloading libcurl and its TLS library along with it would strand what they
         * keep for the whole process (and it is freed at exit anyway). */
        fetch_table_free(d->table);
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return NULL;
}

int debuginfod_fetch(const char *build_id, const char *binary_path, char **ret_path, void *userdata)
{
        Debuginfod *d = userdata;
        const char *path;
        char *copy;
        int r;

        switch (fetch_table_state(d->table, build_id, &path)) {
        case FETCH_DONE:
                copy = strdup(path);
                if (!copy)
                        return -ENOMEM;
                *ret_path = copy;
                return 1;
        case FETCH_PENDING:
        case FETCH_FAILED:
                return 0;
        default:
                break;
        }

        copy = strdup(build_id);
        if (!copy)
                return -ENOMEM;
        r = fetch_table_request(d->table, build_id, binary_path);
        if (r <= 0) {
                free(copy);
                if (r == -ENOSPC && !d->queue_full_logged) {
                        log_notice("%d debug files are being downloaded already: %s stays as it is.", MAX_PENDING,
                                   binary_path);
                        d->queue_full_logged = true;
                }
                return r == -ENOMEM ? r : 0;
        }
        /* The table holds at most MAX_PENDING pending build-ids, so the queue has room. */
        pthread_mutex_lock(&d->lock);
        d->queue[(d->queue_head + d->queue_len) % MAX_PENDING] = copy;
        d->queue_len++;
        pthread_cond_signal(&d->wake);
        pthread_mutex_unlock(&d->lock);
        log_debug("Downloading the debug file of %s (build-id %s) from debuginfod.", binary_path, build_id);
        return 0;
}

FetchState debuginfod_state(const Debuginfod *d, const char *build_id)
{
        return d ? fetch_table_state(d->table, build_id, NULL) : FETCH_UNKNOWN;
}
