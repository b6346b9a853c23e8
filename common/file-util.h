/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Whole-file I/O for the saved state. name is a plain file name in the directory dir_fd (AT_FDCWD for the
 * current one). */

/* Replace the file so that a crash at any point leaves either the old or the new contents, whole: write a
 * temporary file next to it, fsync it, rename it over the file, fsync the directory. */
int write_file_atomic(int dir_fd, const char *name, const void *data, size_t size, mode_t mode);

/* All of data, through interruptions and short writes; -errno of the write that failed (bytes before it may be
 * written). */
int write_all(int fd, const void *data, size_t size);

/* Create the directory path, with mode, and its missing parents (0755); an existing directory is fine. */
int mkdir_p(const char *path, mode_t mode);

/* The file's contents, at most max bytes: -EFBIG when it is bigger (nothing is read then), -ENOENT when it
 * does not exist. The caller frees *ret. */
int read_file_full(int dir_fd, const char *name, size_t max, void **ret, size_t *ret_size);
/* The same of an open file (its offset at the start): -EBADFD when it is no regular file. */
int read_fd_full(int fd, size_t max, void **ret, size_t *ret_size);
