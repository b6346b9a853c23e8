/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "bus-client.h"
#include "flamegraph.h"
#include "log.h"
#include "report-file.h"
#include "report-svg.h"

int run_report_svg(sd_bus *bus, const char *target, uint64_t window_usec, const char *path)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *data = NULL;
        size_t size;
        int r;

        r = flamegraph_export(bus, target, window_usec, FLAMEGRAPH_SVG, NULL, 0, &error, &data, &size);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r == -E2BIG)
                return log_error_errno(r, "The stacks of %s are too many for a flame graph", target);
        if (r < 0)
                return log_bus_error(r, &error, "GetStacks");
        r = report_write_file(path, data, size);
        if (r < 0)
                return log_error_errno(r, "Failed to write %s: %m", path);
        return 0;
}
