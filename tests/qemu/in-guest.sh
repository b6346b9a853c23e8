#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# PID 1 of the QEMU guest (run-qemu.sh): mounts the kernel's file systems, starts a private system bus with the
# project's policy and vprofd on it, profiles vprof-nofp (built without frame pointers), and prints what the host
# checks between marker lines on the serial console. Then powers off, whatever happened.
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ulimit -l unlimited

# The figures the host reads: "vprof-qemu: KEY VALUE".
say() { echo "vprof-qemu: $*"; }
echo
t0=$(cut -d' ' -f1 /proc/uptime)
say kernel "$(uname -r)"
say boot_seconds "$t0"

finish() {
        say guest_seconds "$(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime)"
        say end
        sync
        poweroff -f
}

sed -e 's|@SOCKET@|/run/system_bus_socket|' -e 's|@POLICY@|/opt/vprof/policy.conf|' /opt/vprof/bus.conf.in \
        > /run/bus.conf
dbus-daemon --fork --nopidfile --config-file=/run/bus.conf 2>/tmp/dbus.log
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/system_bus_socket

vprofd --frequency 99 --state-directory=/tmp/state $VPROFD_ARGS >/tmp/vprofd.log 2>&1 &
daemon=$!
i=0
while ! vprofctl status >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 $daemon 2>/dev/null; then
                say daemon_failed
                cat /tmp/vprofd.log
                finish
        fi
        sleep 0.1
done
say daemon_up_seconds "$(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime)"

# Warm-up (the tables of the files the first samples fall back in), reset, then the measured part.
vprof-nofp --seconds 60 &
workload=$!
vprofctl attach $workload || say attach_failed
sleep "${WARMUP:-4}"
vprofctl reset $workload
sleep "${SECONDS_MEASURED:-8}"
echo "vprof-qemu: begin report"
vprofctl --json report $workload
echo "vprof-qemu: end report"
echo "vprof-qemu: begin status"
vprofctl --json status
echo "vprof-qemu: end status"
echo "vprof-qemu: begin status-text"
vprofctl status
echo "vprof-qemu: end status-text"
kill $workload
kill $daemon
wait $daemon
say daemon_exit $?
echo "vprof-qemu: begin log"
cat /tmp/vprofd.log
echo "vprof-qemu: end log"

# Again as on a kernel without bpf_loop (the probe forced): the frame-pointer walk must load on this kernel too.
VPROF_FORCE_NO_BPF_LOOP=1 vprofd --frequency 99 --state-directory=/tmp/state-fp >/tmp/vprofd-fp.log 2>&1 &
daemon=$!
i=0
while ! vprofctl status >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 600 ] || ! kill -0 $daemon 2>/dev/null; then
                say daemon_fp_failed
                cat /tmp/vprofd-fp.log
                finish
        fi
        sleep 0.1
done
vprof-nofp --seconds 60 &
workload=$!
vprofctl attach $workload || say attach_failed
sleep 3
echo "vprof-qemu: begin status-fp"
vprofctl --json status
echo "vprof-qemu: end status-fp"
kill $workload
kill $daemon
wait $daemon
say daemon_fp_exit $?
finish
