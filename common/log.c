/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "utf8.h"

static const char *log_program = "vprof";
static int log_max_level = LOG_INFO;
static bool log_prefix_priority;

/* systemd sets JOURNAL_STREAM=DEV:INODE when it connects stderr to the journal. The variable is inherited by
 * everything started below (a terminal run as a user service, say), so it counts only if it names our stderr. */
static bool stderr_is_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(const char *program_name)
{
        log_program = program_name;
        log_prefix_priority = stderr_is_journal();
}

void log_set_max_level(int level)
{
        log_max_level = level;
}

int log_get_max_level(void)
{
        return log_max_level;
}

int log_internal(int level, int error, const char *format, ...)
{
        char buf[1024], line[UTF8_ESCAPED_MAX(sizeof(buf)) + 1];
        va_list ap;
        int saved = errno;

        error = abs(error);
        if (error)
                errno = error; /* lets callers use %m */
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        /* One call, one line: a name from outside (a command name with CR/LF, a path) cannot start a line that
         * journald would take for another message, nor talk to the terminal. Names are escaped where they are
         * read already; this is for anything else the message quotes. */
        utf8_escape_buf(buf, strlen(buf), line, sizeof(line));

        if (log_prefix_priority)
                fprintf(stderr, "<%d>%s\n", level, line);
        else
                fprintf(stderr, "%s: %s\n", log_program, line);

        errno = saved;
        return -error;
}
