/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

#include "macros.h"
#include "report-table.h"
#include "top-lost.h"
#include "top-state.h"

/* One refresh of top: the table that the state asks for and the daemon's figures of the header, read over
 * the bus. Nothing here prints: the screen and the batch output show a TopView. */

typedef struct TopView {
        TopState shown;     /* the table, sort and window it was read for */
        ReportTable *table; /* sorted as asked, at most the rows asked for */
        char *event;        /* the daemon's Event and Frequency */
        uint32_t frequency;
        uint64_t samples_lost; /* SamplesLost: every target's, since vprofd started */
        /* The window the table covers, CLOCK_REALTIME, as the daemon says (merged here: the span of the
         * targets'). */
        uint64_t window_start_usec;
        uint64_t window_end_usec;
        /* Samples lost over a span that covers the window, from the readings of SamplesLost of earlier
         * refreshes: known once top has run for as long as the window (never for "all"). */
        bool window_lost_known;
        uint64_t window_lost;
        uint64_t window_lost_span_usec;
} TopView;

TopView *top_view_free(TopView *v);
DEFINE_TRIVIAL_CLEANUP_FUNC(TopView *, top_view_free);

typedef struct TopQuery {
        const char *target; /* as given on the command line; NULL for every target */
        const TopState *state;
        uint32_t limit; /* rows; 0 for all */
} TopQuery;

/* Reads the view of q and records its SamplesLost in h. Logs its own errors: a failed call in the one line
 * of log_bus_error(). */
int top_fetch(sd_bus *bus, const TopQuery *q, TopLostHistory *h, TopView **ret);
