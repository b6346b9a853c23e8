/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "log.h"
#include "time-util.h"
#include "top-batch.h"
#include "top-fetch.h"
#include "top-screen.h"
#include "top-state.h"
#include "top.h"

/* The loop of top: a refresh timer at the cadence of --delay, the keys from standard input, SIGWINCH; the
 * rest is in top-state.c (what is shown), top-fetch.c (reading it), top-screen.c and top-batch.c (showing
 * it). The first refresh comes before the screen, so that a target that cannot be read is a plain error. */

typedef struct Top {
        sd_bus *bus;
        const TopOptions *options;
        TopState state;
        TopView *view;
        TopScreen *screen; /* NULL in batch mode */
        TopLostHistory *losses;
        uint32_t refreshes;
        int error;
        char failure[256]; /* the screen's: why the last refresh failed; empty after one that did not */
} Top;

static void top_done(Top *t)
{
        top_view_free(t->view);
        /* Gives the terminal back and prints the errors held meanwhile. */
        top_screen_free(t->screen);
        free(t->losses);
}

static int fetch(Top *t)
{
        const TopOptions *o = t->options;
        TopQuery q = {
                .target = o->target,
                .state = &t->state,
                .limit = o->limit,
        };
        TopView *v;
        int r;

        if (!o->batch) {
                /* As many rows as fit; at least one, as 0 would ask for all. */
                uint32_t rows = MAX(top_screen_table_rows(t->screen), 1u);

                q.limit = o->limit > 0 ? MIN(o->limit, rows) : rows;
        }
        r = top_fetch(t->bus, &q, t->losses, &v);
        if (r >= 0) {
                top_view_free(t->view);
                t->view = v;
                t->failure[0] = '\0';
                return 0;
        }
        /* Batch output ends at the first failure, for the script to see. The screen keeps the view before
         * and says why the refresh failed (a window this daemon does not keep, a target detached, vprofd
         * restarting), and the next refresh tries again. */
        if (!t->screen || r == -ENOMEM)
                return r;
        top_screen_take_error(t->screen, t->failure, sizeof(t->failure));
        return 0;
}

static int show(Top *t)
{
        int r;

        if (t->screen) {
                top_screen_draw(t->screen, &t->state, t->options->target, t->view, t->failure);
                return 0;
        }
        r = top_batch_print(t->options->target, t->view, t->options->flags, t->refreshes == 0);
        if (r < 0)
                return log_error_errno(r, "Failed to print the table: %m");
        if (fflush(stdout) != 0)
                return log_error_errno(negative_errno(), "Failed to write to standard output: %m");
        return 0;
}

static int fail(Top *t, sd_event_source *s, int r)
{
        t->error = r;
        return sd_event_exit(sd_event_source_get_event(s), r);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        Top *t = userdata;
        uint64_t next, now;
        int r;

        /* Paused: the screen stays as it is, and the pause does not count as refreshes. */
        if (!t->state.paused) {
                r = fetch(t);
                if (r >= 0)
                        r = show(t);
                if (r < 0)
                        return fail(t, s, r);
                t->refreshes++;
                if (t->options->iterations > 0 && t->refreshes >= t->options->iterations)
                        return sd_event_exit(sd_event_source_get_event(s), 0);
        }

        /* Keep the cadence: the next refresh is due one delay after this one was due. A refresh that took
         * longer than the delay (a slow reply) skips the missed ones instead of bursting to catch up. */
        next = usec + t->options->delay_usec;
        now = now_usec(CLOCK_MONOTONIC);
        if (next <= now)
                next = now + t->options->delay_usec;
        r = sd_event_source_set_time(s, next);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        if (r < 0)
                return fail(t, s, log_error_errno(r, "Failed to schedule the next refresh: %m"));
        return 0;
}

/* Acts on a key at once: a new choice is fetched and drawn now, not at the next tick. */
static int act(Top *t, sd_event_source *s, TopAction a)
{
        int r = 0;

        if (a == TOP_ACTION_FETCH)
                r = fetch(t);
        if (r >= 0 && a != TOP_ACTION_NONE)
                r = show(t);
        return r < 0 ? fail(t, s, r) : 0;
}

static int on_stdin(sd_event_source *s, _unused_ int fd, uint32_t revents, void *userdata)
{
        Top *t = userdata;
        TopAction action = TOP_ACTION_NONE;
        int key;

        /* The terminal went away: nobody is watching. */
        if (revents & (EPOLLHUP | EPOLLERR))
                return sd_event_exit(sd_event_source_get_event(s), 0);

        /* ncurses reads ahead: take every key it has before waiting for the descriptor again. */
        while ((key = top_screen_read_key(t->screen)) >= 0) {
                TopAction a = top_state_key(&t->state, key);

                if (a == TOP_ACTION_QUIT)
                        return sd_event_exit(sd_event_source_get_event(s), 0);
                action = MAX(action, a);
        }
        return act(t, s, action);
}

static int on_sigwinch(sd_event_source *s, _unused_ const struct signalfd_siginfo *si, void *userdata)
{
        Top *t = userdata;

        top_screen_resize(t->screen);
        /* More rows may fit now: fetch them, unless paused, where the table stays as it was. */
        return act(t, s, t->state.paused ? TOP_ACTION_DRAW : TOP_ACTION_FETCH);
}

static int on_sighup(sd_event_source *s, _unused_ const struct signalfd_siginfo *si, _unused_ void *userdata)
{
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* The screen's own event sources: the keys, when standard input is a terminal, and the resizes. */
static int add_screen_sources(Top *t, sd_event *e)
{
        sigset_t mask;
        int r;

        /* Delivered to the event loop only: blocked, so that neither the default action nor ncurses' handler
         * runs. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(negative_errno(), "Failed to block SIGWINCH and SIGHUP: %m");
        r = sd_event_add_signal(e, NULL, SIGWINCH, on_sigwinch, t);
        if (r >= 0)
                r = sd_event_add_signal(e, NULL, SIGHUP, on_sighup, t);
        if (r < 0)
                return log_error_errno(r, "Failed to handle SIGWINCH and SIGHUP: %m");

        if (!isatty(STDIN_FILENO))
                return 0;
        r = sd_event_add_io(e, NULL, STDIN_FILENO, EPOLLIN, on_stdin, t);
        if (r < 0)
                return log_error_errno(r, "Failed to read the keys: %m");
        return 0;
}

static int run(Top *t)
{
        _cleanup_(sd_event_unrefp) sd_event *e = NULL;
        const TopOptions *o = t->options;
        int r;

        r = sd_event_default(&e);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        /* SIGINT and SIGTERM end the loop cleanly, between two refreshes; the screen ends after it. */
        r = sd_event_set_signal_exit(e, true);
        if (r < 0)
                return log_error_errno(r, "Failed to handle SIGINT and SIGTERM: %m");

        /* The first refresh before the screen is up: a target that does not exist is a plain error. */
        r = fetch(t);
        if (r < 0)
                return r;
        if (!o->batch) {
                r = top_screen_new(&t->screen);
                if (r < 0)
                        return log_error_errno(r, "Cannot drive the terminal (TERM=%s); try --batch",
                                               getenv("TERM") ?: "");
                r = add_screen_sources(t, e);
                if (r < 0)
                        return r;
        }
        r = show(t);
        if (r < 0)
                return r;
        if (++t->refreshes == o->iterations)
                return 0;

        /* 1ms accuracy: the default 250ms would make the cadence visibly uneven. */
        r = sd_event_add_time_relative(e, NULL, CLOCK_MONOTONIC, o->delay_usec, 1000, on_timer, t);
        if (r < 0)
                return log_error_errno(r, "Failed to add the refresh timer: %m");

        r = sd_event_loop(e);
        if (t->error < 0)
                return t->error;
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}

int run_top(sd_bus *bus, const TopOptions *o)
{
        _cleanup_(top_done) Top t = {
                .bus = bus,
                .options = o,
        };

        top_state_init(&t.state,
                       !o->target   ? TOP_TARGET_ALL
                       : o->pid > 0 ? TOP_TARGET_PROCESS
                                    : TOP_TARGET_GROUP,
                       o->sort, o->window_usec);
        t.losses = calloc(1, sizeof(*t.losses));
        if (!t.losses)
                return log_error_errno(-ENOMEM, "Failed to start top: %m");
        return run(&t);
}
