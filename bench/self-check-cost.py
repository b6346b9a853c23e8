#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the unwind self-check costs the BPF program: vprof_sample's verified and translated instructions, and its
run time per run and per kept sample, with --unwind-self-check off (the default), at 1 in 100 and at 1 in 1; and
the same for a baseline vprofd (another build, before the self-check) when given. The workload is vprof-nofp,
sampled at 999 Hz. Rounds interleave the conditions, as a shared machine's load drifts; medians are printed.

Run time needs the kernel's BPF statistics: a BPF_ENABLE_STATS descriptor holds them on for the run, whatever
kernel.bpf_stats_enabled says (which other users of the machine may toggle meanwhile).

Usage (root): self-check-cost.py BUILD_DIR [--baseline VPROFD] [--rounds N] [--seconds S]"""
import argparse
import ctypes
import os
import statistics
import struct
import subprocess
import time

import bench_env

SYS_BPF = 321  # x86-64
BPF_PROG_GET_FD_BY_ID = 13
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_ENABLE_STATS = 32
# struct bpf_prog_info (linux/bpf.h), which only grows: the offsets of the fields read here.
INFO_SIZE, XLATED_LEN_AT, NAME_AT, VERIFIED_INSNS_AT = 232, 20, 64, 216

libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, cmd, buf, len(buf))
    if r < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return r


def prog_info(prog_id):
    """(name, verified instructions, translated instructions) of a loaded program."""
    fd = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("I", prog_id))
    try:
        info = ctypes.create_string_buffer(INFO_SIZE)
        bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("IIQ", fd, INFO_SIZE, ctypes.addressof(info)))
        raw = info.raw
        name = raw[NAME_AT:NAME_AT + 16].split(b"\0")[0].decode()
        xlated, = struct.unpack_from("I", raw, XLATED_LEN_AT)
        verified, = struct.unpack_from("I", raw, VERIFIED_INSNS_AT)
        return name, verified, xlated // 8
    finally:
        os.close(fd)


def sample_prog(pid):
    """vprof_sample of the daemon pid: its id, and its (run_time_ns, run_cnt) from the fdinfo of its descriptor."""
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        if "prog_id" in info and "run_time_ns" in info:
            prog_id = int(info["prog_id"])
            if prog_info(prog_id)[0] == "vprof_sample":
                return prog_id, (int(info["run_time_ns"]), int(info["run_cnt"]))
    raise RuntimeError(f"vprofd {pid} holds no vprof_sample")


def measure(vprof_env, build, vprofd, args, seconds):
    """One daemon: (verified, xlated, ns per run, ns per kept sample)."""
    os.environ["VPROFD"] = vprofd
    env = vprof_env.start_env_or_skip(frequency=999, extra_args=["--ring-size=16", *args])
    try:
        p = subprocess.Popen([f"{build}/tests/workloads/vprof-nofp", "--seconds", str(seconds + 30)],
                             stdout=subprocess.DEVNULL)
        env.children.append(p)
        assert env.ctl("attach", p.pid).returncode == 0
        time.sleep(3)  # the tables compiled, the walk at its steady state
        prog_id, (ns0, runs0) = sample_prog(env.daemon.pid)
        kept0 = env.ctl_json("status")["samples_kept"]
        time.sleep(seconds)
        _, (ns1, runs1) = sample_prog(env.daemon.pid)
        kept1 = env.ctl_json("status")["samples_kept"]
        _, verified, xlated = prog_info(prog_id)
        return verified, xlated, (ns1 - ns0) / max(runs1 - runs0, 1), (ns1 - ns0) / max(kept1 - kept0, 1)
    finally:
        env.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--baseline", help="a vprofd without the self-check, to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10)
    a = parser.parse_args()
    build = os.path.abspath(a.build)
    vprof_env = bench_env.setup(build)
    vprof_env.require_bpf_or_skip()
    vprofd = f"{build}/daemon/vprofd"
    conditions = ([("baseline", a.baseline, [])] if a.baseline else []) + [
        ("off", vprofd, []), ("1 in 100", vprofd, ["--unwind-self-check=100"]),
        ("1 in 1", vprofd, ["--unwind-self-check=1"])]
    results = {name: [] for name, _, _ in conditions}
    stats_fd = bpf(BPF_ENABLE_STATS, struct.pack("I", 0))  # BPF_STATS_RUN_TIME
    try:
        for r in range(a.rounds):
            for name, binary, args in conditions:
                results[name].append(measure(vprof_env, build, binary, args, a.seconds))
                print(f"round {r + 1} {name}: {results[name][-1][2]:.0f} ns/run", flush=True)
    finally:
        os.close(stats_fd)
    print(f"vprof_sample on vprof-nofp at 999 Hz, {a.rounds} interleaved rounds of {a.seconds:g} s, medians")
    print(f"{'condition':10} {'verified':>8} {'xlated':>6} {'ns/run':>7} {'min-max':>11} {'us/kept sample':>14}")
    for name, runs in results.items():
        per_run = [x[2] for x in runs]
        print(f"{name:10} {runs[0][0]:8} {runs[0][1]:6} {statistics.median(per_run):7.0f} "
              f"{min(per_run):5.0f}-{max(per_run):<5.0f} {statistics.median(x[3] for x in runs) / 1000:14.2f}")


if __name__ == "__main__":
    main()
