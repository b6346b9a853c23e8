/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "section-journal.h"
#include "target-serialize.h"

/* The crash journal: targets.journal next to targets.state (state-store.h), in the format of
 * common/section-journal.h. Every snapshot starts a fresh one, which names it; then every JournalIntervalSec
 * a record of what each target's tables gained meanwhile (the ProfileDelta of each second the manager closed,
 * profile-delta.h: the same records as the buckets of its time windows), in one write(), and right away a record
 * for each reset and detach, so that a replay never applies the deltas of a target's new tables to its old ones. At start the journal of the snapshot is replayed onto the snapshot's
 * targets before they are restored. Its record sections (JDLT, JRST, JDET) are docs/STATE_FORMAT.md, "The
 * crash journal"; a record of a target the snapshot does not have (attached after it) is skipped. */

typedef struct Target Target;
typedef struct Journal Journal;

#define JOURNAL_FILE "targets.journal"

/* The journal of the state directory dir_fd (directory: its name, for the log); no file until journal_start(). */
int journal_new(int dir_fd, const char *directory, Journal **ret);
Journal *journal_free(Journal *j);
DEFINE_TRIVIAL_CLEANUP_FUNC(Journal *, journal_free);

/* Replace targets.journal by an empty journal continuing the snapshot just written. Logs failures; without a
 * journal file records are not written until the next start. */
int journal_start(Journal *j, uint64_t generation, uint32_t snapshot_crc);
/* Whether records are being written (a journal file is open). */
bool journal_writing(const Journal *j);
/* Bytes in the journal file, header included. */
uint64_t journal_size(const Journal *j);

/* The ended delta of t (manager_close_second()) into the record being gathered; nothing without a journal file.
 * With JournalIntervalSec= above a second and windows on, a record holds a delta of each second, in order. */
void journal_add_delta(Journal *j, const Target *t);
/* The record gathered so far, appended in one write(). Returns the number of deltas written (0: nothing to
 * write); on a failed write the file is cut back to its last whole record and the deltas are kept, to be written
 * with the next record (logged), up to a bound past which the journal stops until the next snapshot. */
int journal_flush(Journal *j);
/* A record of a reset (the target's new tables) or a detach of t, now, after the deltas gathered before it. A
 * failure stops the journal until the next snapshot (logged). */
int journal_write_reset(Journal *j, const Target *t);
int journal_write_detach(Journal *j, const Target *t);

/* What a replay did, for the daemon's log. */
typedef struct JournalReplay {
        size_t records;        /* replayed, whole */
        size_t deltas;         /* target deltas applied */
        size_t skipped;        /* sections of targets the snapshot does not have */
        size_t stopped;        /* targets whose replay stopped at a delta that does not fit (logged each) */
        uint64_t first_usec, last_usec; /* time of the first and last record replayed, 0 for none */
        const char *tail;      /* why the rest was not replayed (a record cut short or damaged), NULL for none */
        size_t tail_offset, tail_bytes;
} JournalReplay;

/* Apply the journal in data, which continues the snapshot of header, onto its n saved targets (their profiles),
 * marking in dropped[] the targets detached after the snapshot. -EMEDIUMTYPE/-EPROTONOSUPPORT/-EBADMSG when the
 * header is not a journal's (*ret_error says why), -ESTALE when the journal continues another snapshot. */
int journal_replay(const void *data, size_t size, const SectionJournalHeader *header, SavedTarget *targets,
                   size_t n, bool *dropped, JournalReplay *ret, const char **ret_error);
