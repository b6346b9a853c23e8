#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What off-CPU tracking costs a context switch. A pipe ping-pong between two processes (bench/pipe-pingpong.c)
# is timed, interleaved, in four conditions:
#   alone     no vprofd
#   idle      vprofd running, nothing attached (no context-switch program)
#   other     vprofd with an off-CPU target that is not the ping-pong: the program runs on every switch and
#             finds the ping-pong in no map (two hash lookups)
#   tracked   the ping-pong's parent itself attached with --off-cpu: its switches store a stack and send an
#             interval to the ring buffer
# and the BPF program's own average run time is read for the last two in one more run each, with
# kernel.bpf_stats_enabled=1 (which adds two clock reads to every run of a program, so not while timing).
# Prints the median ns per round trip, min-max, and the ratio to "alone". As root, after a build in build/:
#   bench/offcpu-switch-cost.sh [ROUNDS=100000] [PAIRS=5]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rounds=${1:-100000}
pairs=${2:-5}

work=$(mktemp -d /tmp/vprof-bench.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -Wall -Wextra -o "$work/pipe-pingpong" bench/pipe-pingpong.c
vprofctl=build/client/vprofctl
. tools/private-bus.sh
start_private_bus "$work" "$top"
pids+=("$VPROF_BUS_PID")

daemon_pid=
start_daemon() {
  # No saved state: each condition starts with exactly the targets it attaches.
  build/daemon/vprofd --frequency 99 --state-directory= 2>>"$work/vprofd.log" &
  daemon_pid=$!
  for _ in $(seq 200); do "$vprofctl" status >/dev/null 2>&1 && return; sleep 0.05; done
  cat "$work/vprofd.log" >&2
  exit 1
}
stop_daemon() {
  kill "$daemon_pid" && wait "$daemon_pid" || true
}

prog_stats() {  # run_time_ns run_cnt of vprof_sched_switch
  bpftool --json prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("vprof_sched"):
        print(p.get("run_time_ns", 0), p.get("run_cnt", 0)); break
else:
    print(0, 0)'
}

run_pingpong() {  # $1: condition; prints ns per round trip
  case "$1" in
    alone) "$work/pipe-pingpong" "$rounds" ;;
    idle) "$work/pipe-pingpong" "$rounds" ;;
    other) "$work/pipe-pingpong" "$rounds" ;;
    tracked)
      coproc PP { exec "$work/pipe-pingpong" "$rounds" --wait-stdin; }
      read -r _ pp_pid <&"${PP[0]}"
      "$vprofctl" attach "$pp_pid" --off-cpu
      echo go >&"${PP[1]}"
      read -r ns <&"${PP[0]}"
      wait "$PP_PID" || true
      "$vprofctl" detach "$pp_pid"
      echo "$ns" ;;
  esac
}

declare -A results
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
for pass in $(seq $((pairs + 1))); do
  # The last pass only reads the program's run time.
  conditions="alone idle other tracked"
  if [ "$pass" -gt "$pairs" ]; then
    conditions="other tracked"
    sysctl -q kernel.bpf_stats_enabled=1
  fi
  for condition in $conditions; do
    if [ "$condition" != alone ]; then start_daemon; fi
    sleeper=
    if [ "$condition" = other ]; then
      build/tests/workloads/vprof-wait --seconds 3600 --cpu-ms 0 --sleep-ms 1000 --read-ms 0 &
      sleeper=$!
      "$vprofctl" attach "$sleeper" --off-cpu
    fi
    ns=$(run_pingpong "$condition")
    if [ "$pass" -gt "$pairs" ]; then
      results[${condition}_bpf]+="$(prog_stats);"
    else
      results[$condition]+="$ns "
    fi
    [ -n "$sleeper" ] && { kill "$sleeper"; wait "$sleeper" 2>/dev/null || true; }
    if [ "$condition" != alone ]; then stop_daemon; fi
  done
done
sysctl -q kernel.bpf_stats_enabled="$old_stats"

python3 - "$rounds" "$pairs" "${results[alone]}" "${results[idle]}" "${results[other]}" "${results[tracked]}" \
  "${results[other_bpf]}" "${results[tracked_bpf]}" <<'PY'
import statistics, sys
rounds, pairs = sys.argv[1], sys.argv[2]
names = ["alone", "idle", "other", "tracked"]
runs = {n: [float(x) for x in sys.argv[3 + i].split()] for i, n in enumerate(names)}
bpf = {}
for n, arg in (("other", sys.argv[7]), ("tracked", sys.argv[8])):
    per_run = [tuple(map(int, x.split())) for x in arg.split(";") if x.strip()]
    ns = [t / c for t, c in per_run if c]
    bpf[n] = statistics.median(ns) if ns else float("nan")
base = statistics.median(runs["alone"])
print(f"pipe ping-pong, {rounds} round trips a run, {pairs} interleaved runs per condition")
print(f"{'condition':<10} {'ns/round trip':>14} {'min-max':>17} {'vs alone':>9} {'BPF ns/switch':>14}")
for n in names:
    med = statistics.median(runs[n])
    b = f"{bpf[n]:.0f}" if n in bpf else "-"
    print(f"{n:<10} {med:>14.1f} {min(runs[n]):>8.1f}-{max(runs[n]):<8.1f} {med / base:>9.3f} {b:>14}")
PY
