/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-client.h"
#include "file-util.h"
#include "log.h"
#include "macros.h"
#include "pprof-export.h"
#include "report-file.h"
#include "report-pprof.h"

/* To the file, whole or not at all (report_write_file()); "-" to standard output, unless it is a terminal that the
 * binary data would garble. */
static int write_output(const char *path, const void *data, size_t size)
{
        int r;

        if (strcmp(path, "-") == 0) {
                if (isatty(STDOUT_FILENO))
                        return log_error_errno(-EINVAL, "A pprof file is binary: give -o FILE, or redirect "
                                                        "standard output away from the terminal");
                r = write_all(STDOUT_FILENO, data, size);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the pprof file to standard output: %m");
                return 0;
        }
        r = report_write_file(path, data, size);
        if (r < 0)
                return log_error_errno(r, "Failed to write '%s': %m", path);
        return 0;
}

int run_report_pprof(sd_bus *bus, const char *target, uint64_t window_usec, const char *path)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ void *data = NULL;
        size_t size;
        int r;

        r = pprof_export(bus, target, window_usec, true, 0, &error, &data, &size);
        if (r == -ENOMEM && !sd_bus_error_is_set(&error))
                return log_error_errno(r, "Out of memory.");
        if (r < 0)
                return log_bus_error(r, &error, "GetProfile");
        r = write_output(path, data, size);
        return r < 0 ? r : 0;
}
