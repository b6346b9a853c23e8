/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "top-state.h"
#include "time-util.h"

const uint64_t top_windows_usec[4] = {USEC_PER_SEC, 10 * USEC_PER_SEC, 60 * USEC_PER_SEC, 0};

void top_state_init(TopState *s, TopTarget target, ProfileSort sort, uint64_t window_usec)
{
        *s = (TopState){
                .table = REPORT_FUNCTIONS,
                .sort = sort,
                .window_usec = window_usec,
                .target = target,
        };
}

void top_state_next_window(TopState *s)
{
        if (s->window_usec == 0) {
                s->window_usec = top_windows_usec[0];
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(top_windows_usec); i++)
                if (top_windows_usec[i] == 0 || top_windows_usec[i] > s->window_usec) {
                        s->window_usec = top_windows_usec[i];
                        return;
                }
}

static TopAction set_table(TopState *s, ReportKind kind)
{
        if (s->target == TOP_TARGET_ALL && kind == REPORT_MODULES) {
                s->notice = "modules need a target: vprofctl top TARGET";
                return TOP_ACTION_DRAW;
        }
        /* Threads are a process's; a group's rows, or every target's, are processes. */
        if (s->target != TOP_TARGET_PROCESS && kind == REPORT_THREADS)
                kind = REPORT_PROCESSES;
        if (s->table == kind)
                return TOP_ACTION_NONE;
        s->table = kind;
        return TOP_ACTION_FETCH;
}

static TopAction apply_key(TopState *s, int key)
{
        switch (key) {
        case 'q':
                return TOP_ACTION_QUIT;
        case 'w':
                top_state_next_window(s);
                return TOP_ACTION_FETCH;
        case 's':
                s->sort =
                        s->sort == PROFILE_SORT_EXCLUSIVE ? PROFILE_SORT_INCLUSIVE : PROFILE_SORT_EXCLUSIVE;
                return TOP_ACTION_FETCH;
        case 'f':
                return set_table(s, REPORT_FUNCTIONS);
        case 'm':
                return set_table(s, REPORT_MODULES);
        case 't':
                return set_table(s, REPORT_THREADS);
        case 'p':
                s->paused = !s->paused;
                /* Resumed: the data is as old as the pause, so fetch at once. */
                return s->paused ? TOP_ACTION_DRAW : TOP_ACTION_FETCH;
        case 'h':
        case '?':
                s->help = true;
                return TOP_ACTION_DRAW;
        default:
                return TOP_ACTION_NONE;
        }
}

TopAction top_state_key(TopState *s, int key)
{
        bool had_notice = s->notice;
        TopAction a;

        /* A notice goes away with the next key, whatever it is. */
        s->notice = NULL;
        if (s->help) {
                s->help = false;
                return TOP_ACTION_DRAW;
        }
        a = apply_key(s, key);
        return a == TOP_ACTION_NONE && had_notice ? TOP_ACTION_DRAW : a;
}

const char *top_table_name(ReportKind kind)
{
        switch (kind) {
        case REPORT_FUNCTIONS:
                return "functions";
        case REPORT_MODULES:
                return "modules";
        case REPORT_THREADS:
                return "threads";
        case REPORT_PROCESSES:
                return "processes";
        default:
                return "?";
        }
}
