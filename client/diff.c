/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-client-window.h"
#include "bus-client.h"
#include "diff-base-pprof.h"
#include "diff-output.h"
#include "diff-pprof.h"
#include "diff.h"
#include "duration.h"
#include "flamegraph.h"
#include "log.h"
#include "report-file.h"

static const char *pprof_error_string(int r)
{
        switch (r) {
        case -EBADMSG:
                return "not a pprof profile, or a damaged one";
        case -EMEDIUMTYPE:
                return "the profile has no sampling period in nanoseconds, duration or sample count to compare";
        case -EBADFD:
                return "not a regular file";
        case -EFBIG:
                return "too big for a pprof profile";
        default:
                return strerror(-r);
        }
}

/* The new window's flame graph, coloured by the change of each call path's share against the base. */
static int diff_write_svg(const WindowTables *base, const WindowTables *new, const char *target, const char *path)
{
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        r = flamegraph_render_diff(base, new, target, FLAMEGRAPH_SVG, NULL, 0, &data, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to make the flame graph: %m");
        r = report_write_file(path, data, size);
        if (r < 0)
                return log_error_errno(r, "Failed to write '%s': %m", path);
        return 0;
}

int run_diff(sd_bus *bus, const DiffRequest *req)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(window_tables_done) WindowTables base = {}, new = {};
        _cleanup_(diff_table_freep) DiffTable *t = NULL;
        uint64_t until;
        int r;

        /* A base file first: a file that is no profile is told before anything is asked. */
        if (req->base_file) {
                r = window_tables_from_pprof_file(req->base_file, &base);
                if (r < 0)
                        return log_error_errno(r, "Cannot read '%s' as a pprof profile: %s", req->base_file,
                                               pprof_error_string(r));
        }
        /* The new window, then the base's, whose end is counted back from the end that one reported, so that a
         * second closed between the two calls moves neither. */
        r = bus_get_window_tables(bus, req->target, req->window_usec, 0, 0, &error, &new);
        if (r < 0)
                return log_bus_error(r, &error, "GetWindowTables");
        if (!req->base_file) {
                until = new.functions->window_end_usec;
                until -= MIN(until, req->base_ago_usec);
                r = bus_get_window_tables(bus, req->base_target ?: req->target, req->base_window_usec, until, 0,
                                          &error, &base);
                if (r < 0)
                        return log_bus_error(r, &error, "GetWindowTables");
        }
        if (req->svg_path)
                return diff_write_svg(&base, &new, req->target, req->svg_path);
        if (req->pprof_path) {
                r = diff_write_pprof(&base, req->base_target ?: req->target, req->base_pprof_path);
                if (r >= 0)
                        r = diff_write_pprof(&new, req->target, req->pprof_path);
                return r;
        }
        /* Threads of another process, or of a file of another time, are matched by name. */
        r = diff_tables(&base, &new, req->by, req->base_target || req->base_file, &t);
        if (r < 0)
                return log_error_errno(r, "Failed to compare the profiles: %m");
        r = output_diff(t, req->limit, req->flags);
        if (r < 0)
                return log_error_errno(r, "Failed to print the difference: %m");
        return 0;
}
