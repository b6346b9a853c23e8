/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-util.h"
#include "log.h"
#include "manager.h"
#include "manager-attach.h"
#include "profile-serialize.h"
#include "state-internal.h"
#include "state-rejected.h"
#include "state-restore.h"
#include "target-serialize.h"
#include "time-util.h"

/* At start: the snapshot, the journal that continues it, then each target attached again or kept as exited. */

/* Install the saved tables in t, attached a moment ago: nothing was counted in its own yet, and the frame
 * caches, which hold ids of that profile, are empty. */
static void install_profile(Manager *m, Target *t, SavedTarget *saved)
{
        profile_free(t->profile);
        t->profile = TAKE_PTR(saved->profile);
        profile_set_limits(t->profile, m->max_functions, m->max_stacks);
        frame_cache_clear(t->user_frames);
        frame_cache_clear(t->kernel_frames);
        target_profile_replaced(t);
        t->attach_usec = saved->attach_usec;
}

/* Keep the tables of a target whose process is gone, as an exited target. Its tables count no more, so they keep
 * the frequency they were counted at, whatever this daemon's: every count stays exact (the bus converts values to
 * time with each target's own frequency). */
static int keep_exited(StateStore *s, SavedTarget *saved, const char *why)
{
        _cleanup_(target_freep) Target *t = NULL;
        TargetContext context = manager_target_context(s->manager);
        uint32_t frequency = profile_frequency(saved->profile);
        pid_t pid = saved->info.tgid;
        char counted_at[64] = "";
        int r;

        r = target_new_exited(&context, &saved->info, saved->flags, saved->attach_uid, saved->owner_uid,
                              saved->attach_usec, saved->exit_usec, &saved->profile, &t);
        if (r >= 0)
                r = manager_add_exited(s->manager, t);
        if (r == -ETIME) {
                log_info("Dropping the saved tables of %d (%s), which %s: its ExitedTargetRetentionSec= is over.",
                         (int)pid, saved->info.comm, why);
                return r;
        }
        if (r < 0)
                return log_warning_errno(r, "Dropping the saved tables of %d (%s), which %s: %s", (int)pid,
                                         saved->info.comm, why,
                                         r == -E2BIG ? "the target limit is reached" : strerror(-r));
        if (frequency != s->manager->config.frequency)
                snprintf(counted_at, sizeof(counted_at), ", its counts at the %" PRIu32 " Hz they were taken at",
                         frequency);
        log_info("Restored the tables of %d (%s), which %s: kept as exited%s.", (int)pid, saved->info.comm, why,
                 counted_at);
        TAKE_PTR(t);
        return 0;
}

/* 1: attached again; 0: kept as exited; negative: dropped. */
static int restore_target(StateStore *s, SavedTarget *saved, bool same_boot)
{
        Manager *m = s->manager;
        pid_t pid = saved->info.tgid, tgid;
        uint32_t saved_frequency = profile_frequency(saved->profile);
        Target *t;
        int r;

        if (saved->exited)
                return keep_exited(s, saved, "had exited");
        if (!same_boot)
                return keep_exited(s, saved, "ran during another boot");

        /* The normal attach, as the caller who attached it: the authorization rules hold as they would for
         * that caller now. The start time is checked on the pinned process. */
        r = manager_attach_started(m, pid, saved->info.start_time, saved_target_caller(saved), saved->flags, &t,
                                   &tgid);
        switch (r) {
        case 0:
                if (saved_frequency != m->config.frequency) {
                        /* Its tables go on counting, in one unit: converting beats refusing, the counts keep their
                         * meaning in CPU time. Rounded down, so that every part stays within its whole. */
                        profile_convert_frequency(saved->profile, m->config.frequency);
                        log_notice("The tables of %d (%s) were counted at %" PRIu32 " Hz and vprofd samples at "
                                   "%" PRIu32 " Hz now: its sample counts are converted to %" PRIu32 " Hz (times "
                                   "%" PRIu32 "/%" PRIu32 ", rounded down), its off-CPU times stay.",
                                   (int)pid, saved->info.comm, saved_frequency, m->config.frequency,
                                   m->config.frequency, m->config.frequency, saved_frequency);
                }
                install_profile(m, t, saved);
                log_info("Restored %d (%s): attached again, counting on from %" PRIu64 " samples.", (int)pid,
                         t->info.comm, profile_total(t->profile));
                return 1;
        case -ESRCH:
                return keep_exited(s, saved, "has exited");
        case -ESTALE:
        case -ECHILD:
        case -EINVAL:
                /* The PID now names another process (or a thread, or a kernel thread). */
                return keep_exited(s, saved, "has exited (its PID is another process's now)");
        case -EPERM:
                return log_warning_errno(r, "Not attaching %d (%s) again: UID %u may no longer profile it (it "
                                         "changed user or became non-dumpable); its saved tables are dropped.",
                                         (int)pid, saved->info.comm, (unsigned)saved->attach_uid);
        default:
                return log_warning_errno(r, "Failed to attach %d (%s) again; its saved tables are dropped: %s",
                                         (int)pid, saved->info.comm,
                                         r == -E2BIG    ? "the target limit is reached"
                                         : r == -EDQUOT ? "its user's target limit is reached"
                                                        : strerror(-r));
        }
}

/* A file that cannot be used is kept for whoever wants to know why, and its journal, which continues it, goes. */
static void reject_file(StateStore *s, int error, const char *reason)
{
        _cleanup_free_ char *kept = NULL;

        if (state_keep_rejected(s->dir_fd, s->directory, STATE_FILE, STATE_REJECTED_KEEP, &kept) < 0)
                log_error_errno(error, "Ignoring the saved state %s/%s: %s.", s->directory, STATE_FILE, reason);
        else
                log_error_errno(error, "Ignoring the saved state %s/%s: %s; kept as %s.", s->directory, STATE_FILE,
                                reason, kept);
        if (unlinkat(s->dir_fd, JOURNAL_FILE, 0) >= 0)
                log_notice("Removed the journal %s/%s, which continues the state that is not used.", s->directory,
                           JOURNAL_FILE);
}

typedef struct SaveInfo {
        bool known; /* the file has a SAVE section (older daemons wrote none) */
        uint64_t generation;
        uint64_t time_usec;
        uint32_t flags;
} SaveInfo;

static int read_save(SectionReader r, SaveInfo *ret)
{
        SaveInfo info = { .known = true };
        uint32_t reserved;
        int k;

        info.generation = section_read_u64(&r);
        info.time_usec = section_read_u64(&r);
        info.flags = section_read_u32(&r);
        reserved = section_read_u32(&r);
        k = section_check_end(&r);
        if (k < 0)
                return k;
        if (reserved != 0)
                return section_fail(&r, "a malformed save section");
        *ret = info;
        return 0;
}

/* The BOOT and SAVE sections, and a check that no section it does not know is required. */
static int read_boot(SectionReader list, char boot_id[BOOT_ID_SIZE], SaveInfo *ret_save)
{
        bool have_boot = false;
        Section s;
        const char *id;
        int k;

        *ret_save = (SaveInfo){};
        while ((k = section_next(&list, &s)) > 0) {
                if (s.tag == TARGET_SECTION_TAG)
                        continue;
                if (s.tag == TAG_SAVE) {
                        if (ret_save->known)
                                return section_fail(&list, "two save sections");
                        k = read_save(s.contents, ret_save);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (s.tag != TAG_BOOT) {
                        k = section_skip(&s);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (have_boot)
                        return section_fail(&list, "two boot sections");
                k = section_read_string(&s.contents, BOOT_ID_SIZE - 1, false, &id);
                if (k >= 0)
                        k = section_check_end(&s.contents);
                if (k < 0)
                        return k;
                strcpy(boot_id, id);
                have_boot = true;
        }
        if (k < 0)
                return k;
        return have_boot ? 0 : section_fail(&list, "no boot section");
}

/* Named by PID and command when that part of the record is whole, in a sentence either way. */
static void log_dropped_record(StateStore *s, SectionReader record, int error, const char *reason)
{
        ProcInfo info;

        if (error == -ENOMEM) {
                log_error("Dropping a saved target of %s/%s: out of memory.", s->directory, STATE_FILE);
                return;
        }
        if (target_serialize_read_info(record, &info) >= 0)
                log_error("Dropping the saved tables of %d (%s) in %s/%s: its record is damaged (%s).",
                          (int)info.tgid, info.comm, s->directory, STATE_FILE, reason ?: strerror(-error));
        else
                log_error("Dropping a saved target in %s/%s whose record is damaged before its PID (%s).",
                          s->directory, STATE_FILE, reason ?: strerror(-error));
}


/* The age of the file and how the daemon that wrote it stopped. */
static void log_previous_run(StateStore *s, const SaveInfo *save)
{
        uint64_t now = now_usec(CLOCK_REALTIME), written;
        char age[64];
        struct stat st;

        if (!save->known) {
                if (fstatat(s->dir_fd, STATE_FILE, &st, 0) < 0)
                        return;
                written = timespec_to_usec(&st.st_mtim);
                state_format_age(age, sizeof(age), now > written ? now - written : 0);
                log_info("The saved state %s/%s was written %s ago, by a vprofd that did not record how it stopped.",
                         s->directory, STATE_FILE, age);
                return;
        }
        state_format_age(age, sizeof(age), now > save->time_usec ? now - save->time_usec : 0);
        if (save->flags & SAVE_CLEAN_STOP)
                log_info("The previous vprofd stopped cleanly: its tables were saved %s ago, to %s/%s.", age,
                         s->directory, STATE_FILE);
        else
                log_notice("The previous vprofd did not stop cleanly (it crashed or was killed, the machine lost "
                           "power, or its final save failed): its last snapshot, %s/%s, is %s old, and the journal "
                           "after it is replayed.", s->directory, STATE_FILE, age);
}

static void replay_journal(StateStore *s, const SaveInfo *save, uint32_t snapshot_crc, SavedTarget *targets,
                           size_t n, bool *dropped)
{
        _cleanup_free_ void *data = NULL;
        const char *error = NULL;
        JournalReplay replay;
        char age[64];
        size_t size;
        int r;

        r = read_file_full(s->dir_fd, JOURNAL_FILE, SECTION_FILE_MAX, &data, &size);
        if (r == -ENOENT) {
                if (save->known && !(save->flags & SAVE_CLEAN_STOP))
                        log_notice("There is no journal %s/%s: the tables are restored as the snapshot has them.",
                                   s->directory, JOURNAL_FILE);
                return;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to read the journal %s/%s, the tables are restored as the snapshot has "
                                "them: %m", s->directory, JOURNAL_FILE);
                return;
        }
        if (!save->known) {
                log_notice("Ignoring the journal %s/%s: the snapshot does not say which journal continues it.",
                           s->directory, JOURNAL_FILE);
                return;
        }
        r = journal_replay(data, size, &(SectionJournalHeader){ .generation = save->generation,
                                                                .snapshot_crc = snapshot_crc },
                           targets, n, dropped, &replay, &error);
        if (r == -ESTALE) {
                log_info("Ignoring the journal %s/%s: it continues another snapshot (the previous vprofd stopped "
                         "between writing its last snapshot and starting the journal after it).", s->directory,
                         JOURNAL_FILE);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "Ignoring the journal %s/%s, the tables are restored as the snapshot has "
                                  "them: %s.", s->directory, JOURNAL_FILE, error ?: strerror(-r));
                return;
        }
        if (replay.records > 0) {
                uint64_t now = now_usec(CLOCK_REALTIME);

                state_format_age(age, sizeof(age), now > replay.last_usec ? now - replay.last_usec : 0);
                log_info("Replayed %zu record%s of the journal %s/%s (%zu target delta%s): the tables are as they "
                         "were %s ago.", replay.records, replay.records == 1 ? "" : "s", s->directory, JOURNAL_FILE,
                         replay.deltas, replay.deltas == 1 ? "" : "s", age);
        }
        if (replay.skipped > 0)
                log_info("Skipped %zu journal record%s of targets attached after the snapshot, which does not have "
                         "them.", replay.skipped, replay.skipped == 1 ? "" : "s");
        if (replay.tail)
                log_notice("The journal %s/%s ends in %s at byte %zu: its last %zu bytes are ignored, the records "
                           "before them were replayed.", s->directory, JOURNAL_FILE, replay.tail, replay.tail_offset,
                           replay.tail_bytes);
}

static int append_saved(SavedTarget **list, size_t *n, size_t *allocated, SavedTarget *t)
{
        if (*n == *allocated) {
                size_t a = MAX(*allocated * 2, (size_t)16);
                SavedTarget *grown = realloc(*list, a * sizeof(SavedTarget));
                if (!grown)
                        return -ENOMEM;
                *list = grown;
                *allocated = a;
        }
        (*list)[(*n)++] = *t;
        return 0;
}

uint64_t state_restore(StateStore *s)
{
        _cleanup_free_ void *data = NULL;
        _cleanup_free_ SavedTarget *saved = NULL;
        _cleanup_free_ bool *detached = NULL;
        char saved_boot[BOOT_ID_SIZE], boot[BOOT_ID_SIZE];
        unsigned attached = 0, exited = 0, dropped = 0;
        size_t size, n = 0, allocated = 0;
        const char *error = NULL;
        uint32_t snapshot_crc;
        SectionReader list;
        Section section;
        SaveInfo save;
        bool same_boot;
        int r;

        r = read_file_full(s->dir_fd, STATE_FILE, SECTION_FILE_MAX, &data, &size);
        if (r == -ENOENT) {
                log_debug("No saved state in %s.", s->directory);
                if (unlinkat(s->dir_fd, JOURNAL_FILE, 0) >= 0)
                        log_notice("Removed the journal %s/%s, which has no snapshot to continue.", s->directory,
                                   JOURNAL_FILE);
                return 0;
        }
        if (r == -EFBIG) {
                reject_file(s, r, "larger than the limit of 1 GiB");
                return 0;
        }
        if (r < 0) {
                log_error_errno(r, "Failed to read the saved state %s/%s: %m", s->directory, STATE_FILE);
                return 0;
        }
        r = section_file_open(data, size, STATE_MAGIC, &error, &list);
        if (r >= 0)
                r = read_boot(list, saved_boot, &save);
        if (r < 0) {
                reject_file(s, r, error ?: strerror(-r));
                return 0;
        }
        memcpy(&snapshot_crc, (const uint8_t *)data + 24, sizeof(snapshot_crc));
        snapshot_crc = le32toh(snapshot_crc);
        log_previous_run(s, &save);

        state_read_boot_id(boot);
        same_boot = boot[0] && strcmp(boot, saved_boot) == 0;
        while (section_next(&list, &section) > 0) {
                const char *record_error = NULL;
                SavedTarget t = {};
                SectionReader record;

                if (section.tag != TARGET_SECTION_TAG)
                        continue;
                /* Each record on its own: a bad one costs only itself. */
                section.contents.error = &record_error;
                record = section.contents; /* read again to name it if refused */
                r = target_serialize_read(&section.contents, &t);
                if (r >= 0)
                        r = append_saved(&saved, &n, &allocated, &t);
                if (r < 0) {
                        log_dropped_record(s, record, r, record_error);
                        saved_target_done(&t);
                        dropped++;
                }
        }

        detached = calloc(MAX(n, (size_t)1), sizeof(bool));
        if (!detached)
                log_error("Out of memory: the journal %s/%s is not replayed.", s->directory, JOURNAL_FILE);
        else
                replay_journal(s, &save, snapshot_crc, saved, n, detached);

        for (size_t i = 0; i < n; i++) {
                if (detached && detached[i]) {
                        log_info("Not restoring %d (%s): it was detached after the snapshot, the journal says.",
                                 (int)saved[i].info.tgid, saved[i].info.comm);
                        saved_target_done(&saved[i]);
                        continue;
                }
                r = restore_target(s, &saved[i], same_boot);
                saved_target_done(&saved[i]);
                if (r > 0)
                        attached++;
                else if (r == 0)
                        exited++;
                else
                        dropped++;
        }
        log_info("Restored the saved state of %s%s: %u target%s attached again, %u kept as exited, %u dropped.",
                 s->directory, same_boot ? "" : " (from another boot)", attached, attached == 1 ? "" : "s", exited,
                 dropped);
        return save.known ? save.generation : 0;
}
