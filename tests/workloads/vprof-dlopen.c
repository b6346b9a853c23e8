/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A process whose code comes and goes: it loads each library of its command line in turn with dlopen(),
 * calls its dlopen_plugin_work() (a few milliseconds of spinning), and unloads it with dlclose(), for N
 * seconds. Its libraries map and unmap all the time, at the same addresses or at others, while a profiler
 * walks its stacks by the tables of what was there a moment ago. Built without frame pointers.
 *
 * Usage: vprof-dlopen [--seconds N] [--spin N] [--wait-stdin] LIBRARY...
 * --spin: the iterations of each call (2,000,000, a few milliseconds). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload-util.h"

typedef uint64_t (*plugin_work)(uint64_t x, unsigned n);

__attribute__((noinline)) static uint64_t call_plugin(const char *path, uint64_t x, unsigned spin)
{
        plugin_work work;
        void *lib;
        uint64_t r;

        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
                fprintf(stderr, "vprof-dlopen: %s\n", dlerror());
                exit(1);
        }
        work = (plugin_work)dlsym(lib, "dlopen_plugin_work");
        if (!work) {
                fprintf(stderr, "vprof-dlopen: %s\n", dlerror());
                exit(1);
        }
        r = work(x, spin);
        __asm__ volatile("" : "+r"(r));
        dlclose(lib);
        return r;
}

int main(int argc, char **argv)
{
        const char *libraries[64];
        unsigned n = 0;
        uint64_t x = 1, rounds = 0;
        unsigned spin = 2000000;
        double seconds, end;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--seconds") == 0)
                        i++;
                else if (strcmp(argv[i], "--spin") == 0 && i + 1 < argc)
                        spin = (unsigned)strtoul(argv[++i], NULL, 10);
                else if (strcmp(argv[i], "--wait-stdin") != 0 && n < 64)
                        libraries[n++] = argv[i];
        }
        if (n == 0) {
                fprintf(stderr, "vprof-dlopen: no library\n");
                return 2;
        }
        seconds = workload_start(argc, argv);
        end = workload_now() + seconds;
        do
                x = call_plugin(libraries[rounds++ % n], x, spin);
        while (workload_now() < end);
        printf("%llu loads %llu\n", (unsigned long long)rounds, (unsigned long long)(x & 1));
        return 0;
}
