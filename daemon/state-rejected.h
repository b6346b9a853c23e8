/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A saved file that could not be used is kept for whoever wants to know why, beside the others, never over
 * one: NAME.rejected-YYYYMMDDTHHMMSSZ (the UTC time it was set aside), with .2, .3... when that name is taken.
 * At most `keep` of them stay; the oldest go first, each removal logged. */

#define STATE_REJECTED_KEEP 5

/* Rename name in dir_fd (directory, for the log) to a rejected name of its own, then remove the oldest rejected
 * files of name beyond keep. Returns the new name (the caller frees it) or -errno, logged. */
int state_keep_rejected(int dir_fd, const char *directory, const char *name, unsigned keep, char **ret_kept);
