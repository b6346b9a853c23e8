# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by demo.sh: start a private system bus whose config includes the project's real policy file.
# Sets DBUS_SYSTEM_BUS_ADDRESS and VPROF_BUS_PID.
start_private_bus() {
  local dir=$1 top=$2
  sed -e "s|@SOCKET@|$dir/system_bus_socket|" -e "s|@POLICY@|$top/systemd/org.vprof.Profiler1.conf|" \
    "$top/tests/integration/private-bus.conf.in" >"$dir/bus.conf"
  # stderr to a file: it warns, harmlessly, when it cannot raise its fd limit.
  dbus-daemon --nofork --nopidfile --config-file="$dir/bus.conf" 2>"$dir/dbus-daemon.log" &
  VPROF_BUS_PID=$!
  for _ in $(seq 100); do
    [ -S "$dir/system_bus_socket" ] && break
    sleep 0.05
  done
  export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$dir/system_bus_socket"
}
