/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macros.h"
#include "python-detect.h"
#include "python-offsets.h"
#include "python-proc-entry.h"
#include "python-procs.h"
#include "target-python.h"
#include "time-util.h"

/* Files known, at most: a host runs few interpreters; past it the cache starts again. */
#define FILES_MAX 64

/* What one file turned out to be. */
typedef struct PythonFile {
        int result;                     /* 0: an entry can be built; else why not */
        PythonInterpreter *interpreter; /* when detected */
        PythonLayout layout;
} PythonFile;

/* What was pushed for a target. */
typedef struct PushedPython {
        uint64_t generation; /* of its maps then */
        bool has_entry;
} PushedPython;

struct PythonProcs {
        Sampler *sampler;
        Hashmap *targets;  /* pid -> Target, the manager's running ones */
        Hashmap *by_file;  /* "DEV:INO:BUILD-ID" (owned) -> PythonFile */
        Hashmap *pushed;   /* pid -> PushedPython */
        PythonProcsStats stats;
};

static PythonFile *python_file_free(PythonFile *f)
{
        if (!f)
                return NULL;
        python_interpreter_free(f->interpreter);
        free(f);
        return NULL;
}

static void files_clear(PythonProcs *p)
{
        void *key, *value;

        for (size_t i = 0; hashmap_iterate(p->by_file, &i, &key, &value);) {
                free(key);
                python_file_free(value);
        }
        hashmap_clear(p->by_file);
}

PythonProcs *python_procs_free(PythonProcs *p)
{
        PushedPython *pp;

        if (!p)
                return NULL;
        files_clear(p);
        hashmap_free(p->by_file);
        HASHMAP_FOREACH(pp, p->pushed)
                free(pp);
        hashmap_free(p->pushed);
        free(p);
        return NULL;
}

int python_procs_new(Sampler *sampler, Hashmap *targets, PythonProcs **ret)
{
        _cleanup_(python_procs_freep) PythonProcs *p = NULL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->sampler = sampler;
        p->targets = targets;
        p->by_file = hashmap_new(&string_hash_ops);
        p->pushed = hashmap_new(&uint64_hash_ops);
        if (!p->by_file || !p->pushed)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* Detect the file mapped at m in t, and fill its layout. */
static PythonFile *python_file_read(PythonProcs *p, Target *t, const ProcMap *m)
{
        _cleanup_close_ int fd = -1;
        PythonFile *f;
        char root[64];
        uint64_t vaddr, start;
        PythonOffsets offsets;
        int r;

        f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        start = now_usec(CLOCK_THREAD_CPUTIME_ID);
        snprintf(root, sizeof(root), "/proc/%d/root", (int)t->pid);
        r = address_space_code_file(t->address_space, m->start, &fd, &vaddr);
        if (r >= 0)
                r = python_detect_fd(fd, &(PythonDetectOptions){ .root = root, .path = m->path }, &f->interpreter);
        if (r >= 0)
                r = python_offsets_fill(fd, f->interpreter, root, &offsets);
        if (r >= 0)
                f->layout = offsets.layout;
        f->result = r;
        p->stats.detect_usec += now_usec(CLOCK_THREAD_CPUTIME_ID) - start;
        if (r >= 0 || r == -EPROTONOSUPPORT)
                p->stats.interpreters += f->interpreter != NULL;
        if (!f->interpreter)
                p->stats.not_interpreters++;
        log_debug_errno(r, "%s in %d: %s (%m).", m->name, (int)t->pid,
                        r >= 0 ? "a CPython interpreter" : "no interpreter vprof walks");
        return f;
}

/* The file of mapping m, from the cache or read now; NULL when it cannot be known (out of memory, gone). */
static PythonFile *python_file_get(PythonProcs *p, Target *t, const ProcMap *m)
{
        _cleanup_free_ char *key = NULL;
        FileInfo info;
        PythonFile *f;

        /* The build-id names the file's contents: a copy rewritten in place is another. */
        if (address_space_file_info(t->address_space, m->start, &info) < 0)
                return NULL;
        if (asprintf(&key, "%" PRIx32 ":%" PRIx32 ":%" PRIu64 ":%s", m->dev_major, m->dev_minor, m->inode,
                     info.build_id ?: "-") < 0)
                return NULL;
        f = hashmap_get(p->by_file, key);
        if (f)
                return f;
        if (hashmap_size(p->by_file) >= FILES_MAX)
                files_clear(p);
        f = python_file_read(p, t, m);
        if (!f)
                return NULL;
        if (hashmap_put(p->by_file, key, f) < 0)
                return python_file_free(f);
        TAKE_PTR(key);
        return f;
}

/* The entry of t's interpreter, from the first executable mapping of a file named like one that is one. 1 and
 * *ret (and its layout, *ret_layout) when there is one to push; 0 when none. */
static int target_entry(PythonProcs *p, Target *t, struct vprof_python_proc *ret, const PythonLayout **ret_layout)
{
        const ProcMaps *maps = address_space_maps(t->address_space, NULL);

        for (size_t i = 0; maps && i < maps->n; i++) {
                const ProcMap *m = &maps->maps[i];
                const char *base;
                uint64_t vaddr;
                PythonFile *f;
                int r;

                if (!m->executable || !m->path || m->path[0] != '/')
                        continue;
                base = strrchr(m->path, '/') + 1;
                if (!python_file_name_candidate(base))
                        continue;
                f = python_file_get(p, t, m);
                if (!f || !f->interpreter)
                        continue;
                if (f->result >= 0) {
                        _cleanup_close_ int fd = -1;

                        /* The bias of this mapping: the file's vaddr of its first byte. */
                        r = address_space_code_file(t->address_space, m->start, &fd, &vaddr);
                        if (r >= 0)
                                r = python_proc_entry_build(f->interpreter, &f->layout, m->start - vaddr, ret);
                } else
                        r = f->result;
                if (r >= 0) {
                        *ret_layout = &f->layout;
                        return 1;
                }
                p->stats.unsupported++;
                snprintf(p->stats.unsupported_version, sizeof(p->stats.unsupported_version), "%u.%u.%u",
                         f->interpreter->version_hex >> 24, (f->interpreter->version_hex >> 16) & 0xff,
                         (f->interpreter->version_hex >> 8) & 0xff);
                log_info("%s in %d is CPython %s, whose frames vprof does not walk: native frames only.",
                         m->name, (int)t->pid, p->stats.unsupported_version);
                return 0;
        }
        return 0;
}

void python_procs_sync_target(PythonProcs *p, Target *t)
{
        struct vprof_python_proc entry;
        const PythonLayout *layout;
        uint64_t generation;
        PushedPython *pp;
        int r;

        if (!p || !t->address_space || t->exited)
                return;
        /* After each drain: the code objects the next one meets are checked again (python-code-cache.h). */
        target_python_next_generation(t->python);
        (void)address_space_maps(t->address_space, &generation);
        pp = hashmap_get(p->pushed, UINT64_TO_PTR((uint64_t)t->pid));
        if (pp && pp->generation == generation)
                return;
        if (!pp) {
                pp = calloc(1, sizeof(*pp));
                if (!pp)
                        return;
                if (hashmap_put(p->pushed, UINT64_TO_PTR((uint64_t)t->pid), pp) < 0) {
                        free(pp);
                        return;
                }
        }
        pp->generation = generation;
        if (target_entry(p, t, &entry, &layout) > 0) {
                /* The drain names the frames through it: without it they are "[python: unknown]". */
                if (target_python_set(&t->python, t->pid, layout, entry.code_type) < 0)
                        log_debug("Cannot keep the code objects of %d: out of memory.", (int)t->pid);
                r = sampler_set_python(p->sampler, (uint32_t)t->pid, &entry);
                if (r < 0) {
                        p->stats.push_failed++;
                        log_debug_errno(r, "Cannot push the interpreter of %d: %m", (int)t->pid);
                }
                /* An exec() may have dropped it in BPF since: pushed again whatever it was. */
                p->stats.targets += (r >= 0) - pp->has_entry;
                pp->has_entry = r >= 0;
        } else if (pp->has_entry) {
                t->python = target_python_free(t->python);
                (void)sampler_drop_python(p->sampler, (uint32_t)t->pid);
                p->stats.targets--;
                pp->has_entry = false;
        }
}

void python_procs_sync(PythonProcs *p)
{
        Target *t;

        if (!p)
                return;
        HASHMAP_FOREACH(t, p->targets)
                python_procs_sync_target(p, t);
}

void python_procs_forget(PythonProcs *p, pid_t pid)
{
        PushedPython *pp;

        if (!p)
                return;
        pp = hashmap_remove(p->pushed, UINT64_TO_PTR((uint64_t)pid));
        if (!pp)
                return;
        /* sampler_remove_target() drops it too; not an attach that failed before the target was added. */
        if (pp->has_entry)
                (void)sampler_drop_python(p->sampler, (uint32_t)pid);
        p->stats.targets -= pp->has_entry;
        free(pp);
}

void python_procs_get_stats(const PythonProcs *p, PythonProcsStats *ret)
{
        *ret = p ? p->stats : (PythonProcsStats){};
}
