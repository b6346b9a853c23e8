/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "file-util.h"
#include "hashmap.h"
#include "journal.h"
#include "log.h"
#include "profile-delta.h"
#include "target.h"
#include "time-util.h"
#include "unaligned-le.h"

#define TAG_DELTA SECTION_TAG('J', 'D', 'L', 'T')
#define TAG_RESET SECTION_TAG('J', 'R', 'S', 'T')
#define TAG_DETACH SECTION_TAG('J', 'D', 'E', 'T')
#define JOURNAL_TEMP ".targets.journal.tmp"
/* As target-serialize.c and settings.c: no kernel hands out a larger PID, no daemon samples faster. */
#define PID_MAX ((uint32_t)4 * 1024 * 1024)
#define FREQUENCY_MAX 10000
/* Deltas kept for the next record while writes fail: past this the journal stops until the next snapshot. */
#define PENDING_MAX ((size_t)16 << 20)

struct Journal {
        int dir_fd; /* the state store's */
        char *directory;
        int fd;     /* -1: no journal being written */
        uint64_t size;
        uint64_t sequence; /* of the last record written */
        SectionWriter record; /* one buffer for every record: the one being gathered */
        unsigned n_pending;   /* deltas in it, not written yet */
};

int journal_new(int dir_fd, const char *directory, Journal **ret)
{
        Journal *j = calloc(1, sizeof(*j));

        if (!j)
                return -ENOMEM;
        j->dir_fd = dir_fd;
        j->fd = -1;
        j->directory = strdup(directory);
        if (!j->directory) {
                free(j);
                return -ENOMEM;
        }
        section_writer_init_bare(&j->record);
        *ret = j;
        return 0;
}

Journal *journal_free(Journal *j)
{
        if (!j)
                return NULL;
        safe_close(j->fd);
        section_writer_done(&j->record);
        free(j->directory);
        free(j);
        return NULL;
}

bool journal_writing(const Journal *j)
{
        return j && j->fd >= 0;
}

uint64_t journal_size(const Journal *j)
{
        return j->fd >= 0 ? j->size : 0;
}

/* A new file under a temporary name, renamed over the old journal: the old one stays whole until the new one
 * replaces it. Not synced: the journal is for a crash of the daemon, which the page cache outlives; a power loss
 * falls back to the snapshot, which is synced (vprofd(8)). */
int journal_start(Journal *j, uint64_t generation, uint32_t snapshot_crc)
{
        uint8_t header[SECTION_JOURNAL_HEADER_SIZE];
        _cleanup_close_ int fd = -1;
        int r;

        j->fd = safe_close(j->fd);
        section_journal_header(
                &(SectionJournalHeader){ .generation = generation, .snapshot_crc = snapshot_crc }, header);
        fd = openat(j->dir_fd, JOURNAL_TEMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                r = negative_errno();
        else
                r = write_all(fd, header, sizeof(header));
        if (r >= 0 && renameat(j->dir_fd, JOURNAL_TEMP, j->dir_fd, JOURNAL_FILE) < 0)
                r = negative_errno();
        if (r < 0) {
                (void)unlinkat(j->dir_fd, JOURNAL_TEMP, 0);
                return log_warning_errno(r, "Failed to start the journal %s/%s, the tables are saved by snapshots "
                                         "only until the next one: %m", j->directory, JOURNAL_FILE);
        }
        j->fd = TAKE_FD(fd);
        j->size = sizeof(header);
        j->sequence = 0;
        j->n_pending = 0; /* what they counted is in the snapshot */
        return 0;
}

static int pwrite_all(int fd, const uint8_t *p, size_t size, uint64_t offset)
{
        while (size > 0) {
                ssize_t n = pwrite(fd, p, size, (off_t)offset);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                size -= (size_t)n;
                offset += (uint64_t)n;
        }
        return 0;
}

/* The record in j->record, appended whole or not at all: a failed write is cut off again, so that the next
 * record follows the last whole one. */
static int append(Journal *j)
{
        int r;

        r = section_journal_record_finish(&j->record);
        if (r < 0)
                return r;
        r = pwrite_all(j->fd, j->record.data, j->record.size, j->size);
        if (r >= 0) {
                j->size += j->record.size;
                j->sequence++;
                return 0;
        }
        if (ftruncate(j->fd, (off_t)j->size) < 0) {
                log_warning_errno(negative_errno(), "Failed to cut the journal %s/%s back to its last whole "
                                  "record, writing no more records until the next snapshot: %m", j->directory,
                                  JOURNAL_FILE);
                j->fd = safe_close(j->fd);
        }
        return r;
}

static void begin_record(Journal *j)
{
        /* The buffer stays allocated from one record to the next. */
        j->record.size = 0;
        j->record.error = 0;
        j->n_pending = 0;
        section_journal_record_begin(&j->record, j->sequence + 1, now_usec(CLOCK_REALTIME));
}

static void write_target(SectionWriter *w, const Target *t)
{
        section_write_u32(w, (uint32_t)t->pid);
        section_write_u64(w, t->info.start_time);
}

void journal_add_delta(Journal *j, const Target *t)
{
        size_t s;

        if (j->fd < 0 || !t->delta)
                return;
        if (j->n_pending == 0)
                begin_record(j);
        s = section_begin(&j->record, TAG_DELTA, SECTION_REQUIRED);
        write_target(&j->record, t);
        profile_delta_write(t->delta, t->profile, &j->record);
        section_end(&j->record, s);
        if (profile_delta_lost(t->delta) > 0)
                log_debug("The journal misses %" PRIu64 " samples of %d (out of memory).",
                          profile_delta_lost(t->delta), (int)t->pid);
        j->n_pending++;
}

/* The record gathered, with the time of its last delta, then the next one begins empty. */
static int append_pending(Journal *j)
{
        /* The time follows the sequence, after the size and the CRC (section-journal.h). */
        uint64_t now = now_usec(CLOCK_REALTIME);
        int r;

        if (j->record.size >= SECTION_JOURNAL_RECORD_HEADER_SIZE + SECTION_JOURNAL_PAYLOAD_MIN && j->record.error >= 0)
                put_le64(j->record.data + SECTION_JOURNAL_RECORD_HEADER_SIZE + 8, now);
        r = append(j);
        if (r >= 0)
                j->n_pending = 0;
        return r;
}

int journal_flush(Journal *j)
{
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        unsigned n = j->n_pending;
        int r;

        if (j->fd < 0 || n == 0)
                return 0;
        r = append_pending(j);
        if (r < 0) {
                if (j->record.size > PENDING_MAX || j->record.error < 0) {
                        j->fd = safe_close(j->fd);
                        j->n_pending = 0;
                        return log_warning_errno(r, "Failed to write to the journal %s/%s, writing no more records "
                                                 "until the next snapshot: %m", j->directory, JOURNAL_FILE);
                }
                return log_warning_errno(r, "Failed to write to the journal %s/%s (%u delta%s kept for the next "
                                         "record): %m", j->directory, JOURNAL_FILE, n, n == 1 ? "" : "s");
        }
        /* Its cost, for whoever measures it (bench/persistence.py). */
        log_debug("Journal record %" PRIu64 ": %u delta%s, %zu bytes in %.3f ms.", j->sequence, n,
                  n == 1 ? "" : "s", j->record.size,
                  (double)(now_usec(CLOCK_MONOTONIC) - start) / USEC_PER_MSEC);
        return (int)n;
}

static int write_event(Journal *j, uint32_t tag, const Target *t, const char *what)
{
        size_t s;
        int r;

        if (j->fd < 0)
                return 0;
        /* After the deltas gathered before it, in the same record. */
        if (j->n_pending == 0)
                begin_record(j);
        s = section_begin(&j->record, tag, SECTION_REQUIRED);
        write_target(&j->record, t);
        if (tag == TAG_RESET)
                section_write_u32(&j->record, profile_frequency(t->profile));
        section_end(&j->record, s);
        r = append_pending(j);
        if (r < 0) {
                /* Without this record a replay could count the target's new tables into its old ones. */
                j->fd = safe_close(j->fd);
                j->n_pending = 0;
                return log_warning_errno(r, "Failed to write the %s of %d to the journal %s/%s, writing no more "
                                         "records until the next snapshot: %m", what, (int)t->pid, j->directory,
                                         JOURNAL_FILE);
        }
        return 0;
}

int journal_write_reset(Journal *j, const Target *t)
{
        return write_event(j, TAG_RESET, t, "reset");
}

int journal_write_detach(Journal *j, const Target *t)
{
        return write_event(j, TAG_DETACH, t, "detach");
}

/* Replay. */

typedef struct ReplayTarget {
        SavedTarget *saved;
        bool stopped;
} ReplayTarget;

static ReplayTarget *find_target(Hashmap *by_pid, ReplayTarget *targets, uint32_t pid, uint64_t start_time)
{
        void *v = hashmap_get(by_pid, UINT64_TO_PTR(pid));
        ReplayTarget *t;

        if (!v)
                return NULL;
        t = targets + PTR_TO_UINT64(v) - 1;
        /* The same PID of another process: not this target's record. */
        return t->saved->info.start_time == start_time ? t : NULL;
}

static int replay_section(Section *s, Hashmap *by_pid, ReplayTarget *targets, bool *dropped, size_t record,
                          JournalReplay *ret)
{
        SectionReader *r = &s->contents;
        uint32_t pid = section_read_u32(r), frequency = 0;
        uint64_t start_time = section_read_u64(r);
        _cleanup_(profile_freep) Profile *empty = NULL;
        const char *delta_error = NULL;
        ReplayTarget *t;
        int k;

        if (s->tag == TAG_RESET)
                frequency = section_read_u32(r);
        if (section_failed(r))
                return -EBADMSG;
        if (pid == 0 || pid > PID_MAX)
                return section_fail(r, "a PID out of range");
        t = find_target(by_pid, targets, pid, start_time);
        if (!t) {
                ret->skipped++;
                return 0;
        }
        if (t->stopped || dropped[t - targets])
                return 0;
        switch (s->tag) {
        case TAG_DETACH:
                k = section_check_end(r);
                if (k < 0)
                        return k;
                dropped[t - targets] = true;
                return 0;
        case TAG_RESET:
                k = section_check_end(r);
                if (k < 0)
                        return k;
                if (frequency == 0 || frequency > FREQUENCY_MAX)
                        return section_fail(r, "a reset to a frequency out of range");
                k = profile_new(frequency, &empty);
                if (k < 0)
                        return k;
                profile_free(t->saved->profile);
                t->saved->profile = TAKE_PTR(empty);
                return 0;
        default:
                /* Each target's deltas with their own error slot: a delta that does not fit costs only its
                 * target's replay. */
                r->error = &delta_error;
                k = profile_delta_apply(r, t->saved->profile);
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        log_warning("Stopped replaying the journal for %d (%s) at record %zu, which does not fit "
                                    "its tables (%s): they are restored as they were before it.",
                                    (int)pid, t->saved->info.comm, record, delta_error ?: "malformed");
                        t->stopped = true;
                        ret->stopped++;
                        return 0;
                }
                ret->deltas++;
                return 0;
        }
}

int journal_replay(const void *data, size_t size, const SectionJournalHeader *header, SavedTarget *targets,
                   size_t n, bool *dropped, JournalReplay *ret, const char **ret_error)
{
        _cleanup_(hashmap_freep) Hashmap *by_pid = hashmap_new(&uint64_hash_ops);
        _cleanup_free_ ReplayTarget *replay = calloc(MAX(n, (size_t)1), sizeof(ReplayTarget));
        JournalReplay result = {};
        SectionJournalHeader h;
        SectionJournalReader j;
        SectionJournalRecord rec;
        const char *error = NULL;
        int k;

        if (!by_pid || !replay)
                return -ENOMEM;
        k = section_journal_open(data, size, &error, &h, &j);
        if (k < 0) {
                *ret_error = error;
                return k;
        }
        if (h.generation != header->generation || h.snapshot_crc != header->snapshot_crc)
                return -ESTALE;
        for (size_t i = 0; i < n; i++) {
                replay[i].saved = targets + i;
                k = hashmap_put(by_pid, UINT64_TO_PTR(targets[i].info.tgid), UINT64_TO_PTR(i + 1));
                if (k < 0 && k != -EEXIST)
                        return k;
        }

        while ((k = section_journal_next(&j, &rec)) > 0) {
                Section s;

                while ((k = section_next(&rec.sections, &s)) > 0) {
                        if (!IN_SET(s.tag, TAG_DELTA, TAG_RESET, TAG_DETACH)) {
                                k = section_skip(&s);
                                if (k < 0)
                                        break;
                                continue;
                        }
                        k = replay_section(&s, by_pid, replay, dropped, (size_t)rec.sequence, &result);
                        if (k < 0)
                                break;
                }
                if (k == -ENOMEM)
                        return k;
                if (k < 0) {
                        /* Whole, by its checksum, yet not what this daemon writes: trust nothing from here. */
                        result.tail = j.record_error ?: "a malformed record";
                        result.tail_offset = rec.offset;
                        result.tail_bytes = size - rec.offset;
                        break;
                }
                result.records++;
                if (result.first_usec == 0)
                        result.first_usec = rec.time_usec;
                result.last_usec = rec.time_usec;
        }
        if (k < 0 && !result.tail) {
                result.tail = error;
                result.tail_offset = j.offset;
                result.tail_bytes = size - j.offset;
        }
        *ret = result;
        return 0;
}
