/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"
#include "report-table.h"

/* What the full-screen top shows, and the keys that change it. Pure: no screen, no bus, so that the keys are
 * tested without a terminal. */

/* What top was pointed at, which decides the tables there are. */
typedef enum TopTarget {
        TOP_TARGET_ALL,     /* every target: its functions merged, or its processes */
        TOP_TARGET_PROCESS, /* one process: its functions, modules, threads */
        TOP_TARGET_GROUP,   /* a unit or a cgroup: its functions, modules, processes */
} TopTarget;

typedef struct TopState {
        /* REPORT_FUNCTIONS, REPORT_MODULES, and REPORT_THREADS or REPORT_PROCESSES as the target has them.
         */
        ReportKind table;
        ProfileSort sort;     /* PROFILE_SORT_EXCLUSIVE or PROFILE_SORT_INCLUSIVE */
        uint64_t window_usec; /* 0: everything since the attach */
        TopTarget target;
        bool paused;        /* no refresh until unpaused */
        bool help;          /* the help overlay is up */
        const char *notice; /* why the last key did nothing, shown until the next key; NULL when none */
} TopState;

typedef enum TopAction {
        TOP_ACTION_NONE,  /* nothing changed */
        TOP_ACTION_DRAW,  /* the screen changed, not its data: draw again */
        TOP_ACTION_FETCH, /* the data to show changed: fetch, then draw */
        TOP_ACTION_QUIT,
} TopAction;

/* The windows that the w key cycles through, in order; 0 is "all". */
extern const uint64_t top_windows_usec[4];

void top_state_init(TopState *s, TopTarget target, ProfileSort sort, uint64_t window_usec);

/* The next window of the cycle: the first one longer than the current, after the longest "all", after "all"
 * the shortest. A window given with --window that is not in the cycle goes to the next longer one. */
void top_state_next_window(TopState *s);

/* One key as getch() returns it. While the help is up, any key closes it and does nothing else. */
TopAction top_state_key(TopState *s, int key);

/* "functions", "modules", "threads", "processes". */
const char *top_table_name(ReportKind kind);
