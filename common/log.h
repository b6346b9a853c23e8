/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "macros.h"

/* Logging to stderr with sd-daemon priority prefixes ("<3>") when running under systemd, so that journald keeps
 * the levels; plain "vprofd: " prefixes otherwise. Library-like code logs at debug level at most. */

void log_setup(const char *program_name);
void log_set_max_level(int level);
int log_get_max_level(void);

int log_internal(int level, int error, const char *format, ...) _printf_(3, 4);

#define log_full_errno(level, error, ...)                                                                      \
        ({                                                                                                     \
                int _level_ = (level), _e_ = (error);                                                          \
                _level_ <= log_get_max_level() ? log_internal(_level_, _e_, __VA_ARGS__) : -abs(_e_);          \
        })

#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)

/* Log and return the error, so that "return log_error_errno(r, ...)" reports once where it is handled. */
#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)
