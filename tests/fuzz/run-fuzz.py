#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run one parser fuzz harness (tests/fuzz/fuzz-input.h) for a bounded time, the meson suite "fuzz".

The corpus starts from the seeds the harness writes itself from real data (VPROF_FUZZ_WRITE_SEEDS: its own
vDSO and CFI, /proc/self/maps, /proc/kallsyms, files of the state serializers) and the seed files given (the
test fixtures). A crash, a sanitizer report (UBSan halts on its first), a leak, or an input that runs longer
than 10 s fails the test, and its input stays in the artifacts directory with the command that replays it.

By hand: VPROF_FUZZ_SECONDS=600 runs each harness ten minutes instead (add -t 50 to meson test for its
timeout), and VPROF_FUZZ_CORPUS=DIR keeps the corpus in DIR (one per harness below it) from run to run."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--libfuzzer", action="store_true", help="the harness is linked with libFuzzer")
    ap.add_argument("--artifacts", required=True)
    ap.add_argument("harness")
    ap.add_argument("seeds", nargs="*")
    a = ap.parse_args()

    seconds = int(os.environ.get("VPROF_FUZZ_SECONDS", a.seconds))
    name = os.path.basename(a.harness)
    os.makedirs(a.artifacts, exist_ok=True)
    keep = os.environ.get("VPROF_FUZZ_CORPUS")
    if keep:
        corpus = os.path.join(keep, name)
        os.makedirs(corpus, exist_ok=True)
    else:
        corpus = tempfile.mkdtemp(prefix=f"vprof-{name}-")
    try:
        r = subprocess.run([a.harness], env=dict(os.environ, VPROF_FUZZ_WRITE_SEEDS=corpus))
        if r.returncode != 0:
            print(f"{name}: writing the seeds failed ({r.returncode})", file=sys.stderr)
            return 1
        for seed in a.seeds:
            shutil.copyfile(seed, os.path.join(corpus, "seed-" + os.path.basename(seed)))
        n_seeds = len(os.listdir(corpus))

        if a.libfuzzer:
            prefix = os.path.join(a.artifacts, name + "-")
            cmd = [a.harness, f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
                   f"-artifact_prefix={prefix}", "-print_final_stats=1", corpus]
            replay = f"{a.harness} ARTIFACT"
        else:
            cmd = [a.harness, f"--seconds={seconds}", "--timeout=10", f"--artifacts={a.artifacts}", corpus]
            replay = f"{a.harness} --seconds=0 ARTIFACT"
        # Only this fuzzer's own artifacts count: the fuzzers run in parallel into one directory.
        def own():
            return {f for f in os.listdir(a.artifacts) if f.startswith(name + "-")}
        before = own()
        print(f"{name}: {n_seeds} seeds, {seconds} s: {' '.join(cmd)}", file=sys.stderr, flush=True)
        r = subprocess.run(cmd)
        new = sorted(own() - before)
        if r.returncode != 0 or new:
            print(f"{name}: FAILED (exit status {r.returncode})", file=sys.stderr)
            for artifact in new:
                print(f"{name}: input in {os.path.join(a.artifacts, artifact)}; replay: {replay}", file=sys.stderr)
            return 1
        print(f"{name}: no crash in {seconds} s", file=sys.stderr)
        return 0
    finally:
        if not keep:
            shutil.rmtree(corpus, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
