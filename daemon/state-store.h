/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "macros.h"

/* The tables outlive the daemon: every target's record (process identity, attach flags and caller, profile)
 * is saved under the state directory in a snapshot when the daemon stops, every SnapshotIntervalSec and a second
 * after an attach, detach or reset, and what the tables gain between two snapshots goes to a journal, a record
 * every JournalIntervalSec (journal.h), so that a crash of the daemon loses at most about that interval. The
 * next start reloads the snapshot and replays its journal. A target whose process still runs, as the same process
 * (PID, start time and boot), is attached again with its counts continuing; one whose process is gone keeps its
 * tables as an exited target, as if it had exited under this daemon.
 *
 * The snapshot, targets.state, is a state file (section-file.h) of magic "VPROFDST", laid out in
 * docs/STATE_FORMAT.md, "The snapshot". To save more of a target, add a section to TARG (target-serialize.h),
 * or to PROF for more of the profile, following the rules there.
 *
 * Durability: a snapshot is written to a temporary file, fsync()ed and renamed over the old one, so a power loss
 * leaves the last snapshot whole; the journal is written with one write() a record and never synced, so it
 * survives a crash of the daemon (the page cache keeps it) but a power loss may cut it anywhere, which its
 * checksums detect. */

typedef struct Manager Manager;
typedef struct StateStore StateStore;

#define STATE_DIRECTORY_DEFAULT "/var/lib/vprofd"

/* The state directory: arg when given (the empty string: none, save nothing), else the first entry of
 * $STATE_DIRECTORY (set by systemd's StateDirectory=), else STATE_DIRECTORY_DEFAULT. */
int state_directory_choose(const char *arg, char **ret);

/* The state store of m, in *ret: opens the directory (creating it 0700 if needed) and locks it against a second
 * daemon, reloads the saved targets (after sampling is set up, before the bus name is taken, so that the first
 * caller finds them) and replays their journal, replaces the files with the daemon's new state, saves a snapshot
 * every snapshot_usec (0: only when stopping, and after attach, detach and reset) and a journal record every
 * journal_usec (0: no journal). It watches m's targets as m's observer (manager.h). A directory that cannot be
 * used leaves *ret NULL, with a warning: the daemon profiles on without saving. */
void state_store_setup(Manager *m, const char *directory, uint64_t snapshot_usec, uint64_t journal_usec,
                       StateStore **ret);
/* Free it before its manager, whose observer it stops being. */
StateStore *state_store_free(StateStore *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(StateStore *, state_store_free);

/* Drain the ring buffer and save a snapshot of every target now, unless nothing changed since the last one. s may
 * be NULL. Logs failures itself. */
int state_store_save(StateStore *s);

/* The daemon stops: the last counts to the journal, then a snapshot that records the clean stop. s may be NULL.
 * A failure is logged, saying what the next start will find, and returned: the daemon then exits with failure. */
int state_store_stop(StateStore *s);
