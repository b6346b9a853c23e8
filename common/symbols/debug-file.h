/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Finds the separate debug file of a stripped binary where gdb looks for it: by build-id,
 * DEBUGDIR/.build-id/xx/rest.debug; then by the name in its .gnu_debuglink, whose CRC-32 must match, in the
 * binary's directory, in that directory's .debug/, and in DEBUGDIR/<the binary's directory>/. Every path is
 * resolved inside root, the target's root directory (/proc/PID/root), so that a process in a container gets
 * the files of its own file system, symbolic links included. */

#define DEBUG_DIRECTORY_DEFAULT "/usr/lib/debug"

typedef enum DebugFileKind {
        DEBUG_FILE_BUILD_ID,
        DEBUG_FILE_DEBUGLINK,
} DebugFileKind;

typedef struct DebugFileQuery {
        const char *root;        /* the directory the paths are resolved in; NULL: ours */
        const char *debug_dir;   /* absolute, as the target sees it; several separated by ':' */
        const char *binary_path; /* absolute, as the target sees it; NULL: no debuglink lookup */
        dev_t binary_dev;        /* the binary itself, never its own debug file */
        ino_t binary_ino;
        const char *build_id;    /* lowercase hex, or NULL */
        const char *debuglink;   /* the .gnu_debuglink name, or NULL */
        uint32_t debuglink_crc;
} DebugFileQuery;

/* Called with each candidate that passed the checks, open at fd (closed after the call), path as the target
 * sees it: > 0 takes it, 0 goes on to the next candidate, < 0 stops the search with that error. */
typedef int (*DebugFileAccept)(int fd, DebugFileKind kind, const char *path, void *userdata);

/* 1 when accept took a file, 0 when no candidate was taken, < 0 on an error of accept or -ENOMEM. */
int debug_file_find(const DebugFileQuery *q, DebugFileAccept accept, void *userdata);

/* The debug file found before at path (as the target sees it) opened again, inside root as the search does
 * (NULL: ours), read-only: the descriptor, or -errno. */
int debug_file_open(const char *root, const char *path);
