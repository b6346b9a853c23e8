/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "section-file.h"

/* A Profile saved and loaded exactly: every count and value of every function, module and thread, the
 * totals and the frequency. The profile is a list of sections (section-file.h), so that it can make a file
 * of its own or sit in a container section of a bigger file (the daemon's record of a target). The sections
 * are docs/STATE_FORMAT.md, "A profile". To save more of the profile, add a section with a new tag in
 * profile_serialize_write() and read it in profile_serialize_read(), where unknown tags are skipped, and
 * describe it there.
 *
 * Loading trusts nothing: ids in range, names NUL-terminated, bounded and unique, record counts that fit
 * their section, and counts that could have been counted (exclusive <= inclusive <= total, likewise every
 * value, a thread's samples <= total). A change to counting that breaks one of these on purpose (a fold of
 * several functions' inclusive counts into one row, say) must relax counts_possible() in the same change. */

#define PROFILE_SERIALIZE_MAGIC "VPROFPRF"

/* Append the profile's sections to the list being written. */
void profile_serialize_write(const Profile *p, SectionWriter *w);
/* The profile in a list of sections; -EBADMSG with the reason in the reader's error slot, -ENOMEM. */
int profile_serialize_read(SectionReader *list, Profile **ret);

/* A file that holds one profile, in memory. */
int profile_serialize_data(const Profile *p, void **ret, size_t *ret_size);
/* Errors as section_file_open() and profile_serialize_read(); *ret_error says why (NULL for -ENOMEM). */
int profile_serialize_parse(const void *data, size_t size, Profile **ret, const char **ret_error);

/* The same on disk: name in the directory dir_fd (AT_FDCWD), written atomically. */
int profile_serialize_save(const Profile *p, int dir_fd, const char *name);
int profile_serialize_load(int dir_fd, const char *name, Profile **ret, const char **ret_error);

/* Carry the profile over to another sampling frequency, for tables that go on counting at it (a running
 * target attached again by a daemon sampling at another frequency): every sample count becomes count * new /
 * old, rounded down, so that a sample weighs 1/frequency seconds like those counted from now on; off-CPU
 * times stay. Rounding down every count, totals included, keeps every check of profile_serialize_read(): a
 * part (exclusive, a stack, a thread) never passes its whole, and a sum of parts never passes its total,
 * since the sum of rounded-down parts is at most the rounded-down sum. A count can round to 0, and a
 * thread's or stack's samples may then exceed its user and kernel samples' sum by one. Tables that stop
 * counting (exited targets) need no conversion: they keep their own frequency. */
void profile_convert_frequency(Profile *p, uint32_t frequency);
