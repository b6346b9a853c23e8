/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "vprof-abi.h"

/* The BPF side: the skeleton, one perf_event per online CPU and the ring buffer of samples. */

typedef enum SamplerEvent {
        SAMPLER_EVENT_AUTO,
        SAMPLER_EVENT_CYCLES,
        SAMPLER_EVENT_CPU_CLOCK,
        _SAMPLER_EVENT_MAX,
        _SAMPLER_EVENT_INVALID = -1,
} SamplerEvent;

const char *sampler_event_to_string(SamplerEvent e);
SamplerEvent sampler_event_from_string(const char *s);

typedef struct SamplerConfig {
        uint32_t frequency;  /* Hz per CPU */
        SamplerEvent event;
        size_t ring_size;    /* bytes, a power of two */
        uint32_t max_targets;
        uint32_t max_off_cpu_threads; /* target threads off the CPU at once, for off-CPU tracking */
        bool off_cpu_default;         /* Attach tracks off-CPU time unless told otherwise */
} SamplerConfig;

/* Called for every record the ring buffer yields, size bytes at data (a struct vprof_sample as the BPF program
 * wrote it, unchecked: drain.h checks it); returns 0 to go on. libbpf's ring_buffer_sample_fn. */
typedef int (*sampler_record_fn)(void *userdata, void *data, size_t size);

typedef struct Sampler Sampler;

int sampler_new(const SamplerConfig *config, sampler_record_fn fn, void *userdata, Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

SamplerEvent sampler_event(const Sampler *s);
const char *sampler_event_reason(const Sampler *s);
unsigned sampler_n_cpus(const Sampler *s);

/* flags: VPROF_TARGET_*. -EEXIST when present, -E2BIG when the targets map is full. */
int sampler_add_target(Sampler *s, uint32_t tgid, uint64_t flags);
int sampler_remove_target(Sampler *s, uint32_t tgid);

/* Attach or detach the context-switch program: on while some target tracks off-CPU time, since it runs on
 * every context switch of the machine. */
int sampler_track_off_cpu(Sampler *s, bool on);
bool sampler_tracks_off_cpu(const Sampler *s);
/* Off-CPU intervals still open when the program was detached (their targets had all gone), dropped. */
uint64_t sampler_off_cpu_dropped(const Sampler *s);

/* The fd that turns readable when the BPF program asks for a wakeup. */
int sampler_wakeup_fd(const Sampler *s);
/* Hand every waiting record to the callback; returns the number of records, or -errno. */
int sampler_drain(Sampler *s);
/* Counters summed over CPUs. Records still in the ring count as kept. */
int sampler_read_stats(const Sampler *s, uint64_t ret[_VPROF_STAT_MAX]);
