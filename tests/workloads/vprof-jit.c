/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A fake JIT: machine code copied into anonymous executable memory, named jit_hot_loop in /tmp/perf-PID.map as
 * JIT compilers do for perf, and run there. x86-64 only; elsewhere it says so and exits with 77 (skip). */
#include <stdint.h>
#include <sys/mman.h>

#include "workload-util.h"

#if defined(__x86_64__)
/* mov ecx, 1000000; 1: dec ecx; jnz 1b; ret */
static const unsigned char jit_code[] = { 0xb9, 0x40, 0x42, 0x0f, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
#endif

int main(int argc, char **argv)
{
#if defined(__x86_64__)
        char map_path[64];
        void (*fn)(void);
        double seconds, end;
        uint8_t *code;
        FILE *f;

        /* Not at the start of the page, as a JIT's code usually is not. */
        code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (code == MAP_FAILED)
                return 1;
        memcpy(code + 0x40, jit_code, sizeof(jit_code));
        if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0)
                return 1;
        fn = (void (*)(void))(code + 0x40);

        snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
        f = fopen(map_path, "we");
        if (!f)
                return 1;
        fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)fn, sizeof(jit_code));
        fclose(f);

        seconds = workload_start(argc, argv);
        end = workload_now() + seconds;
        while (workload_now() < end)
                fn();
        unlink(map_path);
        return 0;
#else
        (void)argc;
        (void)argv;
        fprintf(stderr, "vprof-jit: x86-64 only\n");
        return 77;
#endif
}
