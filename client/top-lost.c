/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "top-lost.h"

void top_lost_history_add(TopLostHistory *h, uint64_t time_usec, uint64_t lost)
{
        if (h->n == TOP_LOST_HISTORY_MAX) {
                h->first = (h->first + 1) % TOP_LOST_HISTORY_MAX;
                h->n--;
        }
        h->readings[(h->first + h->n) % TOP_LOST_HISTORY_MAX] = (TopLostReading){time_usec, lost};
        h->n++;
}

bool top_lost_history_since(const TopLostHistory *h, uint64_t start_usec, uint64_t *ret_lost,
                            uint64_t *ret_span_usec)
{
        const TopLostReading *from = NULL, *prev = NULL;

        for (size_t i = 0; i < h->n; i++) {
                const TopLostReading *r = &h->readings[(h->first + i) % TOP_LOST_HISTORY_MAX];

                if (r->time_usec <= start_usec)
                        from = r;
                /* The counter never goes down, but a restarted daemon starts it over: across that, nothing
                 * is known. */
                else if (from && prev && r->lost < prev->lost)
                        return false;
                prev = r;
        }
        if (!from)
                return false;
        *ret_lost = prev->lost - from->lost;
        *ret_span_usec = prev->time_usec - from->time_usec;
        return true;
}
