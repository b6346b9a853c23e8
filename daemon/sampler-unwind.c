/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sampler's side of the unwind tables: publishing and retiring a table in the arena the BPF walk reads,
 * and each process's mappings. */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf-array-write.h"
#include "macros.h"
#include "sampler-internal.h"
#include "vprof.skel.h"

uint32_t sampler_unwind_arena_entries(const Sampler *s)
{
        return s->arena_on ? s->n_arena : 0;
}

const char *sampler_unwind_walk(const Sampler *s)
{
        return s->walk;
}

uint32_t sampler_unwind_self_check(const Sampler *s)
{
        return s->arena_on ? s->self_check : 0;
}

int sampler_publish_unwind_table(Sampler *s, uint32_t id, uint32_t first, const struct vprof_unwind_entry *index,
                                 uint32_t n_index, const struct vprof_unwind_entry *rows, uint32_t n_rows)
{
        int arena_fd = bpf_map__fd(s->skel->maps.unwind_arena);
        struct vprof_unwind_table *t;
        size_t arena_bytes;
        int r;

        if (!s->arena_on)
                return -EOPNOTSUPP;
        if (id == 0 || id >= VPROF_UNWIND_TABLES_MAX || n_index == 0 || n_rows == 0)
                return -EINVAL;
        if (first > s->n_arena || n_index > s->n_arena - first || n_rows > s->n_arena - first - n_index)
                return -ERANGE;
        t = &s->tables[id];
        if (__atomic_load_n(&t->rows_count, __ATOMIC_RELAXED) != 0)
                return -EBUSY;
        arena_bytes = (size_t)s->n_arena * sizeof(*index);
        r = bpf_array_write(arena_fd, arena_bytes, (size_t)first * sizeof(*index), index,
                            (size_t)n_index * sizeof(*index));
        if (r >= 0)
                r = bpf_array_write(arena_fd, arena_bytes, ((size_t)first + n_index) * sizeof(*rows), rows,
                                    (size_t)n_rows * sizeof(*rows));
        if (r < 0)
                return r;
        t->index_first = first;
        t->index_count = n_index;
        t->rows_first = first + n_index;
        t->last_used_ns = 0;
        /* Last, after everything the walk reads once it sees it non-zero. */
        __atomic_store_n(&t->rows_count, n_rows, __ATOMIC_RELEASE);
        return 0;
}

int sampler_retire_unwind_table(Sampler *s, uint32_t id)
{
        if (!s->arena_on)
                return -EOPNOTSUPP;
        if (id == 0 || id >= VPROF_UNWIND_TABLES_MAX)
                return -EINVAL;
        __atomic_store_n(&s->tables[id].rows_count, 0, __ATOMIC_RELEASE);
        return 0;
}

uint64_t sampler_unwind_table_last_used(const Sampler *s, uint32_t id)
{
        if (!s->arena_on || id == 0 || id >= VPROF_UNWIND_TABLES_MAX)
                return 0;
        return __atomic_load_n(&s->tables[id].last_used_ns, __ATOMIC_RELAXED);
}

int sampler_set_mappings(Sampler *s, uint32_t tgid, const struct vprof_mapping *m, size_t n, uint32_t generation)
{
        if (!s->arena_on)
                return -EOPNOTSUPP;
        if (n > VPROF_MAX_MAPPINGS)
                return -E2BIG;
        /* The walk's search needs them sorted, apart, and below 2^63 (it takes the sign of a difference); a
         * table id past the descriptors would find none. */
        for (size_t i = 0; i < n; i++)
                if (m[i].start >= m[i].end || m[i].end > (UINT64_C(1) << 63) ||
                    (i > 0 && m[i].start < m[i - 1].end) || m[i].table >= VPROF_UNWIND_TABLES_MAX)
                        return -EINVAL;
        /* The whole value: a short copy would leave the entries past n as the last call left them, unused. */
        memset(s->mappings, 0, sizeof(*s->mappings));
        s->mappings->n = (uint32_t)n;
        s->mappings->generation = generation;
        if (n > 0)
                memcpy(s->mappings->m, m, n * sizeof(*m));
        if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.proc_mappings), &tgid, s->mappings, BPF_ANY) < 0)
                return negative_errno();
        return 0;
}

int sampler_drop_mappings(Sampler *s, uint32_t tgid)
{
        if (!s->arena_on)
                return -EOPNOTSUPP;
        if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.proc_mappings), &tgid) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return 0;
}

int sampler_set_python(Sampler *s, uint32_t tgid, const struct vprof_python_proc *p)
{
        if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.python_procs), &tgid, p, BPF_ANY) < 0)
                return negative_errno();
        return 0;
}

int sampler_drop_python(Sampler *s, uint32_t tgid)
{
        if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.python_procs), &tgid) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return 0;
}
