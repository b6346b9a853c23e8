#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The main job, from a fresh Debian 12 machine (as root): install the build dependencies, build, start vprofd,
# run the bundled demo workload, attach it, and print its hot functions; then the same with off-CPU time for a
# workload that computes a quarter of its time and waits the rest, and its elapsed and application values.
#   DEMO_SECONDS=10 DEMO_THREADS=2 DEMO_WAIT_SECONDS=4 VPROF_FREQUENCY=99 tools/demo.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

seconds=${DEMO_SECONDS:-10}
threads=${DEMO_THREADS:-2}
wait_seconds=${DEMO_WAIT_SECONDS:-4}
frequency=${VPROF_FREQUENCY:-99}

tools/install-deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null

work=$(mktemp -d /tmp/vprof-demo.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

vprofctl=build/client/vprofctl
if [ -S /run/dbus/system_bus_socket ] && [ -z "${DBUS_SYSTEM_BUS_ADDRESS:-}" ]; then
  # A system bus runs: the daemon needs the policy that lets it own its name.
  if [ ! -e /usr/share/dbus-1/system.d/org.vprof.Profiler1.conf ] && [ ! -e /etc/dbus-1/system.d/org.vprof.Profiler1.conf ]; then
    echo "demo: installing the D-Bus policy to /etc/dbus-1/system.d and reloading the system bus"
    install -m 0644 systemd/org.vprof.Profiler1.conf /etc/dbus-1/system.d/
    dbus-send --system --type=method_call --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig
  fi
  echo "demo: using the system bus"
else
  . tools/private-bus.sh
  start_private_bus "$work" "$top"
  pids+=("$VPROF_BUS_PID")
  echo "demo: no system bus runs; started a private one at $DBUS_SYSTEM_BUS_ADDRESS"
fi

if "$vprofctl" status >/dev/null 2>&1; then
  echo "demo: vprofd is already running"
else
  # No saved state: the demo starts afresh every time and leaves nothing in /var/lib/vprofd.
  build/daemon/vprofd --frequency "$frequency" --state-directory= 2>"$work/vprofd.log" &
  pids+=($!)
  for _ in $(seq 200); do
    "$vprofctl" status >/dev/null 2>&1 && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/vprofd.log" >&2; exit 1; }
    sleep 0.05
  done
  sed 's/^/vprofd: /' "$work/vprofd.log" | sed 's/^vprofd: vprofd: /vprofd: /'
fi

coproc DEMO { exec build/tests/workloads/vprof-demo --threads "$threads" --seconds "$seconds" --wait-stdin; }
read -r _ demo_pid <&"${DEMO[0]}"
pids+=("$demo_pid")
"$vprofctl" attach "$demo_pid"
echo "demo: attached vprof-demo (PID $demo_pid), profiling $threads threads for $seconds s at $frequency Hz..."
echo go >&"${DEMO[1]}"
wait "$DEMO_PID" || true

echo
"$vprofctl" status
echo
"$vprofctl" report "$demo_pid" --by function -n 12
echo
"$vprofctl" report "$demo_pid" --by thread

# Seed 003's values: vprof-wait spends 10 ms computing, 20 ms in clock_nanosleep() and 10 ms in read() per
# cycle; attached with --off-cpu, its waits count as elapsed time under the functions that wait.
coproc WAIT { exec build/tests/workloads/vprof-wait --seconds "$wait_seconds" --wait-stdin; }
read -r _ wait_pid <&"${WAIT[0]}"
pids+=("$wait_pid")
"$vprofctl" attach "$wait_pid" --off-cpu
echo
echo "demo: attached vprof-wait (PID $wait_pid) with off-CPU time, for $wait_seconds s..."
echo go >&"${WAIT[1]}"
wait "$WAIT_PID" || true

echo
"$vprofctl" report "$wait_pid" --values elapsed --unit ms --sort inclusive -n 10
echo
"$vprofctl" report "$wait_pid" --values application --unit ms -n 4
