/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf-array-write.h"
#include "bpf-features.h"
#include "cgroup-util.h"
#include "cpu-list.h"
#include "log.h"
#include "parse-util.h"
#include "sampler.h"
#include "sampler-internal.h"
#include "vprof.skel.h"

#define MAX_CPUS 4096

static const char *const event_names[_SAMPLER_EVENT_MAX] = {
        [SAMPLER_EVENT_AUTO] = "auto",
        [SAMPLER_EVENT_CYCLES] = "cycles",
        [SAMPLER_EVENT_CPU_CLOCK] = "cpu-clock",
};

const char *sampler_event_to_string(SamplerEvent e)
{
        return e >= 0 && e < _SAMPLER_EVENT_MAX ? event_names[e] : NULL;
}

SamplerEvent sampler_event_from_string(const char *s)
{
        for (size_t i = 0; s && i < _SAMPLER_EVENT_MAX; i++)
                if (strcmp(s, event_names[i]) == 0)
                        return (SamplerEvent)i;
        return _SAMPLER_EVENT_INVALID;
}

_printf_(2, 0) static int libbpf_log(enum libbpf_print_level level, const char *format, va_list ap)
{
        char buf[1024];
        size_t n;

        /* libbpf's debug output is the verifier log and friends: only with --verbose. */
        if (level == LIBBPF_DEBUG && log_get_max_level() < LOG_DEBUG)
                return 0;
        vsnprintf(buf, sizeof(buf), format, ap);
        n = strlen(buf);
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = '\0';
        log_full_errno(level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG, 0, "libbpf: %s", buf);
        return 0;
}

static int perf_event_open_cpu(SamplerEvent event, uint32_t frequency, int cpu)
{
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = event == SAMPLER_EVENT_CYCLES ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
                .config = event == SAMPLER_EVENT_CYCLES ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
                .freq = 1,
                .sample_freq = frequency,
        };
        int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

static void close_events(Sampler *s)
{
        for (int i = 0; i < s->n_possible_cpus; i++) {
                bpf_link__destroy(s->links[i]);
                s->links[i] = NULL;
                s->perf_fds[i] = safe_close(s->perf_fds[i]);
        }
        s->n_events = 0;
}

static bool hardware_unavailable(int r)
{
        return IN_SET(r, -ENOENT, -ENODEV, -ENXIO, -EOPNOTSUPP);
}

/* One event per online CPU, all of one kind. */
static int open_events(Sampler *s, SamplerEvent event, uint32_t frequency, const bool *online)
{
        for (int cpu = 0; cpu < s->n_possible_cpus; cpu++) {
                int fd, r;

                if (!online[cpu])
                        continue;
                fd = perf_event_open_cpu(event, frequency, cpu);
                if (fd < 0) {
                        close_events(s);
                        return fd;
                }
                s->perf_fds[cpu] = fd;
                s->links[cpu] = bpf_program__attach_perf_event(s->sample_prog, fd);
                if (!s->links[cpu]) {
                        r = negative_errno();
                        s->links[cpu] = NULL;
                        close_events(s);
                        return log_error_errno(r, "Failed to attach the BPF program to CPU %d: %m", cpu);
                }
                s->n_events++;
        }
        s->event = event;
        return 0;
}

static int open_events_with_fallback(Sampler *s, const SamplerConfig *config)
{
        bool online[MAX_CPUS];
        int r;

        r = cpu_list_read_online(online, MIN((size_t)s->n_possible_cpus, ELEMENTSOF(online)));
        if (r < 0)
                return log_error_errno(r, "Failed to read the online CPUs: %m");

        if (config->event == SAMPLER_EVENT_CPU_CLOCK) {
                snprintf(s->reason, sizeof(s->reason), "requested with --event=cpu-clock");
                r = open_events(s, SAMPLER_EVENT_CPU_CLOCK, config->frequency, online);
                goto done;
        }

        r = open_events(s, SAMPLER_EVENT_CYCLES, config->frequency, online);
        if (r >= 0) {
                snprintf(s->reason, sizeof(s->reason), "%s", config->event == SAMPLER_EVENT_CYCLES
                                 ? "requested with --event=cycles" : "hardware cycles available");
                return 0;
        }
        if (config->event == SAMPLER_EVENT_CYCLES || !hardware_unavailable(r))
                goto done;

        snprintf(s->reason, sizeof(s->reason), "hardware cycles not supported: %s", strerror(-r));
        r = open_events(s, SAMPLER_EVENT_CPU_CLOCK, config->frequency, online);
done:
        if (r < 0)
                return log_error_errno(r, "Failed to open a %s perf event at %u Hz: %m",
                                       config->event == SAMPLER_EVENT_CPU_CLOCK ? "cpu-clock" : "sampling",
                                       config->frequency);
        return 0;
}

/* The PID namespace inode of the initial namespace (PROC_PID_INIT_INO): a fixed value of the kernel ABI. */
#define PID_NS_INIT_INO 0xEFFFFFFCU

/* In a container the daemon sees its own PID namespace's IDs (attach, /proc, pidfds) while BPF sees the host's:
 * the program then translates to ours, vprof_sample_pidns. Only tasks of our namespace itself can be targets
 * then. Only the program that samples is loaded. */
static int set_pid_namespace(Sampler *s)
{
        struct vprof_bpf *skel = s->skel;
        bool host;
        struct stat st;
        int r;

        if (stat("/proc/self/ns/pid", &st) < 0)
                return log_error_errno(-errno, "Failed to read the daemon's PID namespace: %m");
        host = st.st_ino == PID_NS_INIT_INO;
        s->sample_prog = host ? skel->progs.vprof_sample : skel->progs.vprof_sample_pidns;
        r = bpf_program__set_autoload(host ? skel->progs.vprof_sample_pidns : skel->progs.vprof_sample, false);
        if (r < 0)
                return log_error_errno(r, "Failed to leave out a sampling program: %m");
        if (host)
                return 0;
        skel->rodata->pidns_dev = st.st_dev;
        skel->rodata->pidns_ino = st.st_ino;
        log_info("Running in a PID namespace (inode %" PRIu64 "): targets are processes of that namespace.",
                 (uint64_t)st.st_ino);
        return 0;
}

/* The cgroup namespace inode of the initial namespace (PROC_CGROUP_INIT_INO). */
#define CGROUP_NS_INIT_INO 0xEFFFFFFBU

static bool in_cgroup_namespace(void)
{
        struct stat st;

        return stat("/proc/self/ns/cgroup", &st) >= 0 && st.st_ino != CGROUP_NS_INIT_INO;
}

/* The level from the cgroup2 root of the root of the daemon's cgroup namespace: 0 in the initial one; in another
 * (a container), where the daemon's cgroup paths begin below the root, its own cgroup's level as the kernel
 * counts it (vprof_cgroup_level, run once) less its level in its path. The BPF program compares levels of the
 * whole hierarchy. */
static void find_cgroup_root_level(Sampler *s)
{
        _cleanup_free_ char *self = NULL;
        int level, r;

        s->cgroup_root_level = -1;
        if (!s->skel->progs.vprof_cgroup_level || !bpf_program__autoload(s->skel->progs.vprof_cgroup_level)) {
                s->cgroup_root_level = 0;
                return;
        }
        r = bpf_prog_test_run_opts(bpf_program__fd(s->skel->progs.vprof_cgroup_level), NULL);
        level = s->skel->data->self_cgroup_level;
        if (r < 0 || level < 0) {
                log_warning_errno(r < 0 ? r : -ENOENT, "Failed to find the level of the daemon's cgroup: no "
                                  "cgroup can be attached: %m");
                return;
        }
        r = proc_cgroup_read(0, &self);
        if (r < 0 || (int)cgroup_path_level(self) > level) {
                log_warning_errno(r < 0 ? r : -EINVAL, "Failed to read the daemon's own cgroup: no cgroup can be "
                                  "attached: %m");
                return;
        }
        s->cgroup_root_level = level - (int)cgroup_path_level(self);
        log_info("Running in a cgroup namespace whose root is at level %d of the cgroup2 hierarchy.",
                 s->cgroup_root_level);
}

/* Bytes the kernel maps for an array of n values of size bytes: whole pages. */
static size_t array_mmap_size(size_t n, size_t size)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);

        return (n * size + page - 1) / page * page;
}

/* The unwind tables' maps, sized before load: the arena from the setting; with the walk off, one entry each,
 * since a map cannot be left out of the object. */
static int size_unwind_maps(Sampler *s, const SamplerConfig *config)
{
        struct vprof_bpf *skel = s->skel;
        uint32_t mib = config->unwind_table_mib;
        const char *no_python_walk;
        int r;

        s->walk = mib > 0 ? "unwind tables" : "frame pointers (UnwindTableMiB=0)";
#if !defined(__x86_64__)
        if (mib > 0) {
                log_info("No unwind tables on this architecture: frame pointers only.");
                s->walk = "frame pointers (no unwind tables on this architecture)";
                mib = 0;
        }
#endif
        /* Before 5.17 the kernel has no bpf_loop(), which the walk by the tables steps with: the kernel's
         * frame-pointer walk then, with cfi_walk false, whose branch the verifier drops unvisited. */
        if (mib > 0 && !bpf_features_have_loop()) {
                log_notice("The kernel has no bpf_loop(): user stacks by frame pointers, not by unwind tables.");
                s->walk = "frame pointers (the kernel has no bpf_loop)";
                mib = 0;
        }
        if (mib > UINT32_MAX / ((1u << 20) / sizeof(struct vprof_unwind_entry)))
                return log_error_errno(-EINVAL, "Unwind table arena of %" PRIu32 " MiB too large.", mib);
        s->n_arena = mib * ((1u << 20) / sizeof(struct vprof_unwind_entry));
        skel->rodata->cfi_walk = s->n_arena > 0;
        /* VPROF_NO_PYTHON_WALK=1: the native walk alone, for bench/python-walk-cost.py's comparison. */
        no_python_walk = getenv("VPROF_NO_PYTHON_WALK");
        skel->rodata->python_walk_on = bpf_features_have_loop() &&
                                       !(no_python_walk && strcmp(no_python_walk, "1") == 0);
        /* The self-check compares the walk by the tables with the daemon's interpreter: nothing to check without. */
        if (config->unwind_self_check > 0 && s->n_arena == 0)
                log_notice("UnwindSelfCheck= needs the unwind tables (UnwindTableMiB= above 0): no self-check.");
        s->self_check = s->n_arena > 0 ? config->unwind_self_check : 0;
        skel->rodata->self_check_every = s->self_check;
        r = bpf_map__set_max_entries(skel->maps.unwind_arena, MAX(s->n_arena, 1u));
        if (r >= 0 && s->n_arena == 0)
                r = bpf_map__set_max_entries(skel->maps.unwind_tables, 1);
        if (r >= 0)
                r = bpf_map__set_max_entries(skel->maps.proc_mappings, s->n_arena ? config->max_targets : 1);
        if (r >= 0)
                r = bpf_map__set_max_entries(skel->maps.python_procs, config->max_targets);
        if (r < 0)
                return log_error_errno(r, "Failed to size the unwind table maps: %m");
        return 0;
}

/* The targets' bitmap covers every PID of the daemon's namespace up to pid_max. Raised later, the program finds
 * the tgids past it in the targets map, at the cost of a hash lookup for their samples. */
static int size_target_bits(Sampler *s)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
        char line[32];
        uint32_t pid_max;
        int r;

        if (!f)
                return log_error_errno(-errno, "Failed to open /proc/sys/kernel/pid_max: %m");
        if (!fgets(line, sizeof(line), f))
                return log_error_errno(-EIO, "Failed to read /proc/sys/kernel/pid_max.");
        line[strcspn(line, "\n")] = '\0';
        r = parse_pid(line, &pid_max); /* 1 .. PID_MAX_LIMIT */
        if (r < 0)
                return log_error_errno(r, "Failed to parse /proc/sys/kernel/pid_max \"%s\": %m", line);
        /* PIDs are below pid_max. */
        s->n_target_words = (pid_max + 63) / 64;
        r = bpf_map__set_max_entries(s->skel->maps.target_bits, s->n_target_words);
        if (r < 0)
                return log_error_errno(r, "Failed to size the targets' bitmap: %m");
        return 0;
}

/* The maps of the discard path, through mmap(): the bitmap, which the daemon writes, and the CPUs' counts of
 * discarded samples, which it reads (and whose copies of cgroup_levels it writes). */
static int map_discard_maps(Sampler *s)
{
        void *p = mmap(NULL, array_mmap_size(s->n_target_words, sizeof(uint64_t)), PROT_READ | PROT_WRITE,
                       MAP_SHARED, bpf_map__fd(s->skel->maps.target_bits), 0);

        if (p == MAP_FAILED)
                return log_error_errno(-errno, "Failed to map the targets' bitmap: %m");
        s->target_bits = p;
        /* Written too: each CPU's copy of cgroup_levels. */
        p = mmap(NULL, array_mmap_size(s->n_possible_cpus, sizeof(struct vprof_cpu_counter)), PROT_READ | PROT_WRITE,
                 MAP_SHARED, bpf_map__fd(s->skel->maps.discards), 0);
        if (p == MAP_FAILED)
                return log_error_errno(-errno, "Failed to map the discard counters: %m");
        s->discards = p;
        return 0;
}

static void set_target_bit(Sampler *s, uint32_t tgid, bool on)
{
        uint64_t bit = UINT64_C(1) << (tgid & 63);

        if (tgid / 64 >= s->n_target_words)
                return;
        if (on)
                __atomic_fetch_or(&s->target_bits[tgid / 64], bit, __ATOMIC_RELEASE);
        else
                __atomic_fetch_and(&s->target_bits[tgid / 64], ~bit, __ATOMIC_RELEASE);
}

static int map_unwind_maps(Sampler *s)
{
        void *p;

        if (s->n_arena == 0)
                return 0;
        p = mmap(NULL, array_mmap_size(VPROF_UNWIND_TABLES_MAX, sizeof(*s->tables)), PROT_READ | PROT_WRITE,
                 MAP_SHARED, bpf_map__fd(s->skel->maps.unwind_tables), 0);
        if (p == MAP_FAILED)
                return log_error_errno(-errno, "Failed to map the unwind table descriptors: %m");
        s->tables = p;
        s->mappings = malloc(sizeof(*s->mappings));
        if (!s->mappings)
                return log_error_errno(-ENOMEM, "Out of memory.");
        s->arena_on = true;
        log_info("Unwinding user stacks with unwind tables in %" PRIu32 " MiB.",
                 (uint32_t)((uint64_t)s->n_arena * sizeof(struct vprof_unwind_entry) >> 20));
        if (s->self_check > 0)
                log_info("Unwind self-check: the user stack of 1 in %" PRIu32 " kept samples is copied (%u KiB) and "
                         "unwound by the daemon's CFI interpreter too.",
                         s->self_check, VPROF_STACK_COPY_BYTES >> 10);
        return 0;
}

/* Without bpf_find_vma() (Linux 5.17; probed with a kprobe program, which has the same helpers) the programs that
 * follow mapping changes are left out: a target's maps are read again only for an address outside them. A failure
 * here fails the load. */
static void leave_out_maps_programs(Sampler *s)
{
        if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_find_vma, NULL) > 0)
                return;
        log_info("The kernel has no bpf_find_vma(): mapping changes are not followed in order with the samples.");
        s->maps_unsupported = true;
        (void)bpf_program__set_autoload(s->skel->progs.vprof_sys_enter, false);
        (void)bpf_program__set_autoload(s->skel->progs.vprof_sys_exit, false);
}

int sampler_new(const SamplerConfig *config, sampler_record_fn fn, void *userdata, Sampler **ret)
{
        _cleanup_(sampler_freep) Sampler *s = NULL;
        int r;

        libbpf_set_print(libbpf_log);

        s = calloc(1, sizeof(*s));
        if (!s)
                return log_error_errno(-ENOMEM, "Out of memory.");
        s->n_possible_cpus = libbpf_num_possible_cpus();
        if (s->n_possible_cpus <= 0)
                return log_error_errno(s->n_possible_cpus ?: -EINVAL, "Failed to count the possible CPUs: %m");
        s->perf_fds = malloc(s->n_possible_cpus * sizeof(int));
        s->links = calloc(s->n_possible_cpus, sizeof(struct bpf_link *));
        if (!s->perf_fds || !s->links)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (int i = 0; i < s->n_possible_cpus; i++)
                s->perf_fds[i] = -1;

        s->skel = vprof_bpf__open();
        if (!s->skel)
                return log_error_errno(negative_errno(), "Failed to open the BPF object: %m");
        s->skel->rodata->wakeup_bytes = config->ring_size / 4;
        r = set_pid_namespace(s);
        if (r < 0)
                return r;
        r = bpf_map__set_max_entries(s->skel->maps.samples, config->ring_size);
        if (r < 0)
                return log_error_errno(r, "Failed to size the ring buffer: %m");
        r = bpf_map__set_max_entries(s->skel->maps.targets, config->max_targets);
        if (r < 0)
                return log_error_errno(r, "Failed to size the targets map: %m");
        r = bpf_map__set_max_entries(s->skel->maps.off_cpu, config->max_off_cpu_threads);
        if (r < 0)
                return log_error_errno(r, "Failed to size the off-CPU map: %m");
        r = size_unwind_maps(s, config);
        if (r < 0)
                return r;
        r = size_target_bits(s);
        if (r < 0)
                return r;
        r = bpf_map__set_max_entries(s->skel->maps.discards, s->n_possible_cpus);
        if (r < 0)
                return log_error_errno(r, "Failed to size the discard counters: %m");
        /* Only where its answer is needed: outside a cgroup namespace the paths give the levels. */
        r = bpf_program__set_autoload(s->skel->progs.vprof_cgroup_level, in_cgroup_namespace());
        if (r < 0)
                return log_error_errno(r, "Failed to leave out the cgroup level program: %m");
        leave_out_maps_programs(s);

        r = vprof_bpf__load(s->skel);
        if (r < 0 && !bpf_features_have_task_pt_regs())
                return log_error_errno(r, "Failed to load the BPF program: the kernel is too old (vprofd needs "
                                       "Linux 5.15 or later, for bpf_task_pt_regs()): %m");
        if (r < 0)
                return log_error_errno(r, "Failed to load the BPF program (vprofd needs root, or CAP_BPF and "
                                          "CAP_PERFMON): %m");
        r = map_discard_maps(s);
        if (r < 0)
                return r;
        r = map_unwind_maps(s);
        if (r < 0)
                return r;
        find_cgroup_root_level(s);

        s->exec_link = bpf_program__attach(s->skel->progs.vprof_exec);
        if (!s->exec_link)
                return log_error_errno(negative_errno(), "Failed to attach the exec program: %m");

        /* The records go straight to fn: libbpf's callback has its signature. */
        s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.samples), fn, userdata, NULL);
        if (!s->ring)
                return log_error_errno(negative_errno(), "Failed to set up the ring buffer: %m");

        r = open_events_with_fallback(s, config);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

Sampler *sampler_free(Sampler *s)
{
        if (!s)
                return NULL;
        if (s->links)
                close_events(s);
        bpf_link__destroy(s->switch_link);
        bpf_link__destroy(s->exec_link);
        (void)sampler_follow_maps(s, false);
        bpf_link__destroy(s->fork_link);
        ring_buffer__free(s->ring);
        if (s->tables)
                munmap(s->tables, array_mmap_size(VPROF_UNWIND_TABLES_MAX, sizeof(*s->tables)));
        if (s->target_bits)
                munmap(s->target_bits, array_mmap_size(s->n_target_words, sizeof(uint64_t)));
        if (s->discards)
                munmap(s->discards, array_mmap_size(s->n_possible_cpus, sizeof(struct vprof_cpu_counter)));
        free(s->mappings);
        vprof_bpf__destroy(s->skel);
        free(s->links);
        free(s->perf_fds);
        free(s);
        return NULL;
}

SamplerEvent sampler_event(const Sampler *s)
{
        return s->event;
}

const char *sampler_event_reason(const Sampler *s)
{
        return s->reason;
}

unsigned sampler_n_cpus(const Sampler *s)
{
        return s->n_events;
}

int sampler_add_target(Sampler *s, uint32_t tgid, uint64_t flags)
{
        struct vprof_target value = { .flags = flags };

        if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &tgid, &value, BPF_NOEXIST) < 0)
                return negative_errno();
        /* After the entry: a sample that sees the bit finds it (one that sees the bit clear is not the target's
         * yet, as before the attach). */
        set_target_bit(s, tgid, true);
        return 0;
}

int sampler_add_member(Sampler *s, uint32_t tgid, uint64_t flags, uint32_t group)
{
        struct vprof_target value = { .flags = flags, .group = group };

        if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &tgid, &value, BPF_NOEXIST) < 0 &&
            errno != EEXIST)
                return negative_errno();
        /* EEXIST: the fork program put it there, with the bit, and counts its exec() calls there. */
        set_target_bit(s, tgid, true);
        return 0;
}

int sampler_follow_maps(Sampler *s, bool on)
{
        if (s->maps_unsupported || on == !!s->maps_links[0])
                return 0;
        for (size_t i = 0; i < ELEMENTSOF(s->maps_links); i++) {
                struct bpf_program *p = i == 0 ? s->skel->progs.vprof_sys_enter : s->skel->progs.vprof_sys_exit;
                int r;

                bpf_link__destroy(s->maps_links[i]);
                s->maps_links[i] = on ? bpf_program__attach(p) : NULL;
                if (on && !s->maps_links[i]) {
                        r = negative_errno();
                        (void)sampler_follow_maps(s, false);
                        return log_error_errno(r, "Failed to attach %s: %m", bpf_program__name(p));
                }
        }
        return 0;
}

int sampler_follow_forks(Sampler *s, bool on)
{
        int r;

        if (on == !!s->fork_link)
                return 0;
        if (!on) {
                bpf_link__destroy(s->fork_link);
                s->fork_link = NULL;
                return 0;
        }
        s->fork_link = bpf_program__attach(s->skel->progs.vprof_fork);
        if (!s->fork_link) {
                r = negative_errno();
                s->fork_link = NULL;
                return log_error_errno(r, "Failed to attach the fork program: %m");
        }
        return 0;
}

static void update_cgroup_levels(Sampler *s)
{
        uint64_t levels = 0;

        for (unsigned l = 0; l <= VPROF_MAX_CGROUP_LEVEL; l++)
                if (s->n_cgroups_at_level[l] > 0)
                        levels |= UINT64_C(1) << l;
        __atomic_store_n(&s->skel->bss->cgroup_levels, levels, __ATOMIC_RELEASE);
        /* And each CPU's copy, which the discard path reads. */
        for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
                __atomic_store_n(&s->discards[cpu].cgroup_levels, levels, __ATOMIC_RELEASE);
}

int sampler_add_cgroup(Sampler *s, uint64_t id, unsigned level, uint32_t group)
{
        if (s->cgroup_root_level < 0)
                return -EOPNOTSUPP;
        if (group == 0)
                return -EINVAL;
        level += (unsigned)s->cgroup_root_level;
        if (level > VPROF_MAX_CGROUP_LEVEL)
                return -ERANGE;
        if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.cgroup_targets), &id, &group, BPF_NOEXIST) < 0)
                return errno == E2BIG || errno == ENOMEM ? -E2BIG : negative_errno();
        /* After the entry, so that the program finds it when it looks at that level. */
        s->n_cgroups_at_level[level]++;
        update_cgroup_levels(s);
        return 0;
}

int sampler_remove_cgroup(Sampler *s, uint64_t id, unsigned level)
{
        if (s->cgroup_root_level < 0)
                return -EOPNOTSUPP;
        level += (unsigned)s->cgroup_root_level;
        if (level > VPROF_MAX_CGROUP_LEVEL || s->n_cgroups_at_level[level] == 0)
                return -EINVAL;
        if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.cgroup_targets), &id) < 0)
                return negative_errno();
        s->n_cgroups_at_level[level]--;
        update_cgroup_levels(s);
        return 0;
}

int sampler_cgroup_root_level(const Sampler *s)
{
        return s->cgroup_root_level;
}

int sampler_remove_target(Sampler *s, uint32_t tgid)
{
        /* Before the entry goes, whatever the map says: a bit without an entry would only cost a lookup, but the
         * bitmap must not keep a tgid that the kernel may give to another process. */
        set_target_bit(s, tgid, false);
        if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.targets), &tgid) < 0)
                return negative_errno();
        if (s->arena_on)
                (void)sampler_drop_mappings(s, tgid);
        (void)sampler_drop_python(s, tgid);
        return 0;
}

/* With the program detached nothing ends the intervals left in the map; a later attachment would see a
 * stale start. Nothing writes the map now, so the walk is stable. */
static void drop_open_intervals(Sampler *s)
{
        int fd = bpf_map__fd(s->skel->maps.off_cpu);
        __u32 key;

        while (bpf_map_get_next_key(fd, NULL, &key) == 0) {
                if (bpf_map_delete_elem(fd, &key) < 0)
                        break;
                s->off_cpu_dropped++;
        }
}

int sampler_track_off_cpu(Sampler *s, bool on)
{
        int r;

        if (on == !!s->switch_link)
                return 0;
        if (!on) {
                bpf_link__destroy(s->switch_link);
                s->switch_link = NULL;
                drop_open_intervals(s);
                return 0;
        }
        s->switch_link = bpf_program__attach(s->skel->progs.vprof_sched_switch);
        if (!s->switch_link) {
                r = negative_errno();
                s->switch_link = NULL;
                return log_error_errno(r, "Failed to attach the context switch program: %m");
        }
        return 0;
}

bool sampler_tracks_off_cpu(const Sampler *s)
{
        return s->switch_link;
}

uint64_t sampler_off_cpu_dropped(const Sampler *s)
{
        return s->off_cpu_dropped;
}

int sampler_wakeup_fd(const Sampler *s)
{
        return ring_buffer__epoll_fd(s->ring);
}

int sampler_drain(Sampler *s)
{
        return ring_buffer__consume(s->ring);
}

int sampler_read_stats(const Sampler *s, uint64_t ret[_VPROF_STAT_MAX])
{
        int fd = bpf_map__fd(s->skel->maps.stats);
        _cleanup_free_ uint64_t *values = calloc(s->n_possible_cpus, sizeof(uint64_t));

        if (!values)
                return -ENOMEM;
        for (uint32_t key = 0; key < _VPROF_STAT_MAX; key++) {
                uint64_t sum = 0;
                if (bpf_map_lookup_elem(fd, &key, values) < 0)
                        return negative_errno();
                for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
                        sum += values[cpu];
                ret[key] = sum;
        }
        /* The samples that the bitmap discarded, counted apart. */
        for (int cpu = 0; cpu < s->n_possible_cpus; cpu++)
                ret[VPROF_STAT_DISCARDED] += __atomic_load_n(&s->discards[cpu].n, __ATOMIC_RELAXED);
        return 0;
}
