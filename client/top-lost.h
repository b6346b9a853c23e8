/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What top knows of the samples lost in a window: the daemon counts its losses since it started
 * (SamplesLost), so top keeps the readings of its own refreshes and subtracts. Pure, for the unit tests. */

/* The readings of SamplesLost of past refreshes: a ring, the oldest overwritten when full (an hour of
 * refreshes a second). */
#define TOP_LOST_HISTORY_MAX 4096
typedef struct TopLostReading {
        uint64_t time_usec; /* CLOCK_REALTIME */
        uint64_t lost;
} TopLostReading;

typedef struct TopLostHistory {
        TopLostReading readings[TOP_LOST_HISTORY_MAX];
        size_t first;
        size_t n;
} TopLostHistory;

/* Adds a reading; readings come in time order. */
void top_lost_history_add(TopLostHistory *h, uint64_t time_usec, uint64_t lost);
/* What was lost from the newest reading taken at or before start_usec to the newest reading: false when none
 * is that old. */
bool top_lost_history_since(const TopLostHistory *h, uint64_t start_usec, uint64_t *ret_lost,
                            uint64_t *ret_span_usec);
