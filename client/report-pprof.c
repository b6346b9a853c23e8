/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-client.h"
#include "file-util.h"
#include "log.h"
#include "macros.h"
#include "pprof-export.h"
#include "report-pprof.h"

/* The file, whole or not at all: a reader (go tool pprof, a scraper) never sees half of it. */
static int write_output(const char *path, const void *data, size_t size)
{
        _cleanup_free_ char *dir = NULL;
        _cleanup_close_ int dir_fd = -1;
        const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
        int r;

        if (strcmp(path, "-") == 0) {
                /* Binary data would garble a terminal. */
                if (isatty(STDOUT_FILENO))
                        return log_error_errno(-EINVAL, "A pprof file is binary: give -o FILE, or redirect "
                                                        "standard output away from the terminal");
                r = write_all(STDOUT_FILENO, data, size);
                if (r < 0)
                        return log_error_errno(r, "Failed to write the pprof file to standard output: %m");
                return 0;
        }
        if (name[0] == '\0')
                return log_error_errno(-EINVAL, "Invalid -o value '%s': expected a file name", path);
        dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
        if (!dir)
                return log_error_errno(-ENOMEM, "Out of memory.");
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return log_error_errno(-errno, "Failed to open the directory of '%s': %m", path);
        r = write_file_atomic(dir_fd, name, data, size, 0666);
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

        r = pprof_export(bus, target, window_usec, 0, &error, &data, &size);
        if (r == -ENOMEM && !sd_bus_error_is_set(&error))
                return log_error_errno(r, "Out of memory.");
        if (r < 0)
                return log_bus_error(r, &error, "GetProfile");
        r = write_output(path, data, size);
        return r < 0 ? r : 0;
}
