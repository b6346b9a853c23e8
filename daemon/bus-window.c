/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GetWindowTables: the tables of one window, which may end before now, in one reply: what a diff of two windows
 * (vprofctl diff) compares. The window is the query's (query.h), counted as every other windowed call counts it. */
#include <stdlib.h>

#include "bus-query.h"
#include "bus-rows.h"
#include "bus-stacks.h"
#include "macros.h"
#include "query.h"

typedef int (*profile_table_fn)(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n);

static int append_table(sd_bus_message *reply, const Profile *p, TableKind kind, profile_table_fn table)
{
        _cleanup_free_ ProfileRow *rows = NULL;
        size_t n;
        int r;

        r = table(p, PROFILE_SORT_INCLUSIVE, &rows, &n);
        if (r < 0)
                return r;
        return bus_append_sampling_rows(reply, kind, profile_total(p), rows, n);
}

static int every_function(const Profile *p, ProfileSort sort, ProfileRow **ret, size_t *ret_n)
{
        return profile_functions(p, sort, 0, ret, ret_n);
}

int method_get_window_tables(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(query_done) Query q = {};
        QueryRequest req = { .needs = QUERY_VIEW };
        uint32_t limit;
        int r;

        r = sd_bus_message_read(msg, "sttu", &req.spec, &req.window_usec, &req.until_usec, &limit);
        if (r < 0)
                return r;
        r = query_run(userdata, msg, &req, &q, error);
        if (r <= 0)
                return r < 0 ? r : 1; /* 0: polkit was asked, the call is answered when it runs again */
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "utt(tt)", profile_frequency(q.profile), profile_total(q.profile),
                                  profile_other_stack_samples(q.profile), q.start_usec, q.end_usec);
        if (r >= 0)
                r = append_table(reply, q.profile, TABLE_FUNCTIONS, every_function);
        if (r >= 0)
                r = append_table(reply, q.profile, TABLE_MODULES, profile_modules);
        if (r >= 0)
                r = append_table(reply, q.profile, TABLE_THREADS, profile_threads);
        if (r >= 0)
                r = bus_append_stacks(reply, q.profile, limit);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
