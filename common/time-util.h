/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

/* Times are uint64_t microseconds (_usec) or nanoseconds (_ns), and whoever keeps one says of which clock:
 * CLOCK_MONOTONIC for intervals, timers and the BPF program's timestamps (bpf_ktime_get_ns() is that clock);
 * CLOCK_REALTIME for the times a user reads or that outlive a boot (attach, exit and save times). */

#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define USEC_PER_MSEC UINT64_C(1000)
#define USEC_PER_SEC UINT64_C(1000000)
#define MSEC_PER_SEC UINT64_C(1000)

static inline uint64_t timespec_to_usec(const struct timespec *ts)
{
        return (uint64_t)ts->tv_sec * USEC_PER_SEC + (uint64_t)ts->tv_nsec / NSEC_PER_USEC;
}

static inline uint64_t timespec_to_ns(const struct timespec *ts)
{
        return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* The time on clock now. Not sd_event_now(), which is when the event loop woke up: for what a handler spends,
 * or a time a handler stores. clock_gettime() cannot fail for the clocks we name. */
static inline uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return timespec_to_usec(&ts);
}

static inline uint64_t now_ns(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return timespec_to_ns(&ts);
}
