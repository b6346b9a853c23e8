/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>

#include "address-space.h"
#include "frame-cache.h"
#include "log.h"
#include "maps-change.h"
#include "target.h"

/* The kernel's internal dev_t, as the record has it: major in the top 12 bits, minor in the low 20. */
#define KDEV_MAJOR(dev) ((uint32_t)(dev) >> 20)
#define KDEV_MINOR(dev) ((uint32_t)(dev) & 0xfffffu)

/* Whether maps read after an mmap() show it, and no later one at its place: the new mapping at its start, of its
 * file. A later state than the record's is all /proc can show once the process has moved on: the record's
 * samples are then named with it, counted. */
static bool maps_show(const ProcMaps *maps, const struct vprof_maps_change *c)
{
        const ProcMap *m = proc_maps_find(maps, c->start);

        return m && m->executable && m->inode == c->inode && m->dev_major == KDEV_MAJOR(c->dev) &&
               m->dev_minor == KDEV_MINOR(c->dev);
}

/* The target's maps read now, its cached names of user addresses dropped: every one of them may have changed
 * its module. A changed address space has a new generation, which the next push of the unwind tables sees. */
static void reload(Target *t)
{
        int r;

        r = address_space_reload(t->address_space);
        if (r < 0)
                log_debug_errno(r, "Cannot read the maps of %d after a change: %m", (int)t->pid);
        frame_cache_clear(t->user_frames);
}

/* The record's change made to the address space as it was, which /proc may no longer show: a file unmapped, or
 * mapped again (a library loaded anew). Only a file that no snapshot had yet makes the maps be read. */
static void apply(Target *t, const struct vprof_maps_change *c, MapsChangeStats *stats)
{
        AddressSpaceChange change = {
                .start = c->start,
                .end = c->end,
                .mapped = c->kind == VPROF_MAPS_MMAP,
                .offset = c->offset,
                .inode = c->inode,
                .dev_major = KDEV_MAJOR(c->dev),
                .dev_minor = KDEV_MINOR(c->dev),
        };
        int r;

        /* Anonymous executable memory (JIT code) is named by the perf map, whatever /proc says. */
        if (c->kind == VPROF_MAPS_MPROTECT || (change.mapped && c->inode == 0)) {
                reload(t);
                return;
        }
        r = address_space_apply(t->address_space, &change);
        if (r == -ENOENT) {
                reload(t);
                if (!maps_show(address_space_maps(t->address_space, NULL), c)) {
                        stats->stale++;
                        log_debug("The maps of %d moved on past change %" PRIu32 " at %" PRIx64 " before it was "
                                  "read.", (int)t->pid, c->generation, (uint64_t)c->start);
                }
                return;
        }
        if (r < 0) {
                log_debug_errno(r, "Cannot apply change %" PRIu32 " of the maps of %d: %m", c->generation,
                                (int)t->pid);
                reload(t);
                return;
        }
        frame_cache_clear(t->user_frames);
}

bool maps_change_apply(Target *t, const struct vprof_maps_change *c, MapsChangeStats *stats)
{
        if (t->exited || !t->address_space)
                return false;
        t->maps_generation = c->generation;
        /* exec(): the samples' exec_count makes the drain read the new image (follow_exec). */
        if (c->kind == VPROF_MAPS_EXEC)
                return false;
        apply(t, c, stats);
        return c->kind == VPROF_MAPS_MMAP;
}

void maps_change_sample(Target *t, const struct vprof_sample *s, MapsChangeStats *stats)
{
        if ((int32_t)(s->maps_generation - t->maps_generation) < 0) {
                stats->samples_stale++;
                return;
        }
        stats->missed++;
        t->maps_generation = s->maps_generation;
        if (t->address_space && !t->exited)
                reload(t);
}
