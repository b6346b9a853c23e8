#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# vprofd on Debian 12's own kernel (6.1, linux-image-cloud-amd64: NVMe and ext4 built in, so no initramfs), booted
# under QEMU (TCG where there is no KVM), so that the platform the packages are for is checked and not only the
# build machine's kernel.
#
# The guest's root file system is an ext4 image made by mke2fs -d from a small tree: busybox, dbus-daemon, the
# built vprofd, vprofctl and vprof-nofp (built without frame pointers), the libraries ldd lists for them (the
# host's: a Debian 12 host has the guest's), the private bus configuration and the project's policy. in-guest.sh is
# its PID 1: it profiles vprof-nofp and prints the report and the status between marker lines on the serial
# console, then powers off. This script checks, from that console: the BPF program loaded, samples were kept,
# the stacks are whole (nofp_run, main and _start ~100% inclusive: _start is the root), status answered.
# The kernel .deb comes from the Debian mirror through apt-get download, cached in VPROF_QEMU_CACHE; the image is
# made anew each run (seconds) since it holds the binaries just built.
#
#   tests/qemu/run-qemu.sh        (as root; or: meson test -C build --suite qemu -v)
#
# Environment:
#   VPROFD, VPROFCTL, VPROF_NOFP   the built binaries (meson sets them); default build/...
#   VPROF_POLICY, VPROF_BUS_CONF_IN the bus policy and the private bus configuration (meson sets them)
#   VPROF_QEMU_CACHE    where the kernel .deb is kept (default /var/cache/vprof-qemu)
#   VPROF_QEMU_TIMEOUT  seconds the guest may run at most (default 300)
#   VPROF_QEMU_KEEP=1   keep the work directory (image, console log)
#   VPROF_QEMU_VPROFD_ARGS  more vprofd options in the guest, one word (e.g. --unwind-table-size=0)
#   VPROF_QEMU_KERNEL_DEB   another kernel .deb to boot instead (NVMe, ext4 built in), e.g. Debian 11's 5.10
# It skips (77) where QEMU cannot run, except with CI=true, where that fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${VPROF_QEMU_CACHE:-/var/cache/vprof-qemu}
timeout_secs=${VPROF_QEMU_TIMEOUT:-300}
KERNEL_META=linux-image-cloud-amd64

say() { echo "qemu: $*"; }
die() { echo "qemu: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${CI:-}" = true ]; then
    die "cannot run in CI: $*"
  fi
  echo "qemu: SKIP: $*"
  exit 77
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
t_start=$(now)

vprofd=${VPROFD:-$top/build/daemon/vprofd}
vprofctl=${VPROFCTL:-$top/build/client/vprofctl}
nofp=${VPROF_NOFP:-$top/build/tests/workloads/vprof-nofp}
policy=${VPROF_POLICY:-$top/systemd/org.vprof.Profiler1.conf}
bus_conf=${VPROF_BUS_CONF_IN:-$top/tests/integration/private-bus.conf.in}
for f in "$vprofd" "$vprofctl" "$nofp"; do
  [ -x "$f" ] || die "no $f: build first (meson setup build && meson compile -C build)"
done

# --- what the machine must have --------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root (apt-get download into the cache)"
command -v apt-get >/dev/null || skip "needs a Debian host (apt-get, dpkg-deb)"
missing=()
for p in qemu-system-x86 busybox-static dbus-daemon e2fsprogs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
    skip "cannot install ${missing[*]}"
fi
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64"
accel=tcg
if [ -w /dev/kvm ]; then
  accel=kvm
fi

work=$(mktemp -d /var/tmp/vprof-qemu.XXXXXX)
cleanup() {
  if [ -n "${VPROF_QEMU_KEEP:-}" ]; then say "kept $work"; else rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT

# --- the kernel: Debian 12's, from the mirror, cached by its package name and version --------------------------
mkdir -p "$cache"
image_pkg=$(apt-cache depends "$KERNEL_META" 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
deb=${VPROF_QEMU_KERNEL_DEB:-}
if [ -z "$deb" ] && [ -n "$image_pkg" ]; then
  version=$(apt-cache policy "$image_pkg" | awk '/Candidate:/ { print $2 }')
  deb=$(ls "$cache/${image_pkg}_${version//:/%3a}_amd64.deb" 2>/dev/null || true)
  if [ -z "$deb" ]; then
    (cd "$cache" && apt-get download -q "$image_pkg" >/dev/null 2>&1) || true
    deb=$(ls "$cache/${image_pkg}_"*_amd64.deb 2>/dev/null | sort -V | tail -n 1 || true)
  fi
fi
[ -n "$deb" ] || deb=$(ls "$cache"/linux-image-*-cloud-amd64_*_amd64.deb 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$deb" ] || skip "cannot download $KERNEL_META's kernel (no mirror, nothing cached in $cache)"
dpkg-deb -x "$deb" "$work/kernel"
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-* | head -n 1)
say "kernel $(basename "$deb")"
t_kernel=$(now)

# --- the root file system ---------------------------------------------------------------------------------------
root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,opt/vprof}
cp /bin/busybox "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
dbus=$(command -v dbus-daemon)
cp "$vprofd" "$vprofctl" "$nofp" "$dbus" "$root/usr/bin/"
cp "$(dirname "$nofp")/libvprof-nofp.so" "$root/usr/bin/" # its rpath is $ORIGIN
# The libraries at the paths ldd names, so that the guest's loader and vprofd's symbolizer find them as on Debian.
for lib in $(ldd "$vprofd" "$vprofctl" "$nofp" "$dbus" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u); do
  [ "$(basename "$lib")" = libvprof-nofp.so ] && continue
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
cp "$bus_conf" "$root/opt/vprof/bus.conf.in"
cp "$policy" "$root/opt/vprof/policy.conf"
cp "$here/in-guest.sh" "$root/init.sh"
printf 'root:x:0:0:root:/root:/bin/sh\nmessagebus:x:100:101::/run:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nmessagebus:x:101:\n' >"$root/etc/group"
size_mib=$(( $(du -sm "$root" | cut -f1) + 64 ))
mke2fs -q -t ext4 -d "$root" -L vprof-root "$work/root.img" "${size_mib}M" || die "mke2fs -d failed"
t_image=$(now)
say "root file system: ${size_mib} MiB ext4 image in $(secs "$t_kernel" "$t_image") s"

# --- the boot ----------------------------------------------------------------------------------------------------
console=$work/console.log
append="console=ttyS0 root=/dev/nvme0n1 rootfstype=ext4 rw init=/init.sh panic=-1 loglevel=4"
[ -n "${VPROF_QEMU_VPROFD_ARGS:-}" ] && append+=" VPROFD_ARGS=$VPROF_QEMU_VPROFD_ARGS"
say "booting with -accel $accel (bounded by ${timeout_secs} s)"
rc=0
timeout --kill-after=10 "$timeout_secs" qemu-system-x86_64 -accel "$accel" -cpu max -smp 1 -m 1024 \
  -nographic -no-reboot -kernel "$vmlinuz" -append "$append" \
  -drive "file=$work/root.img,format=raw,if=none,id=root" -device nvme,drive=root,serial=vprof-root \
  -nic none </dev/null >"$console" 2>&1 || rc=$?
t_boot=$(now)
[ "$rc" = 124 ] && say "the guest ran past ${timeout_secs} s: stopped"
tr -d '\r' <"$console" >"$console.txt"
sed -n '/vprof-qemu: begin log/,/vprof-qemu: end log/p' "$console.txt"
grep -E '^vprof-qemu: [a-z_]+ [0-9]' "$console.txt" || true
grep -q '^vprof-qemu: end$' "$console.txt" || { tail -n 60 "$console.txt"; die "the guest did not finish (qemu status $rc)"; }
grep -q '^vprof-qemu: daemon_\(fp_\)\?failed' "$console.txt" && { tail -n 80 "$console.txt"; die "vprofd did not come up in the guest"; }

# --- the checks --------------------------------------------------------------------------------------------------
python3 - "$console.txt" <<'PY' || die "checks failed (console: ${VPROF_QEMU_KEEP:+$console.txt}${VPROF_QEMU_KEEP:-set VPROF_QEMU_KEEP=1 to keep it})"
import json, os, re, sys

text = open(sys.argv[1], errors="replace").read()

def block(name):
    m = re.search(rf"^vprof-qemu: begin {name}\n(.*?)^vprof-qemu: end {name}$", text, re.S | re.M)
    if not m:
        sys.exit(f"qemu: no {name} on the console")
    return m.group(1)

def json_block(name):
    body = block(name)
    # Kernel messages may interleave on the console: the JSON object from its first brace on.
    return json.loads(body[body.index("{"):body.rindex("}") + 1])

kernel = re.search(r"vprof-qemu: kernel (\S+)", text).group(1)  # after the firmware's escape codes
report = json_block("report")
status = json_block("status")
print(block("status-text"), end="")
rows = {r["function"]: r for r in report["functions"]}
failures = []

def check(ok, what):
    print(f"qemu: {'ok' if ok else 'FAILED'}: {what}")
    if not ok:
        failures.append(what)

if os.environ.get("VPROF_QEMU_KERNEL_DEB"):
    print(f"qemu: the guest ran {kernel} (VPROF_QEMU_KERNEL_DEB)")
else:
    check(kernel.startswith("6.1.0-"), f"the guest ran Debian 12's kernel ({kernel})")
check(status["samples_kept"] > 0, f"samples kept: {status['samples_kept']}")
print(f"qemu: event {status['event']} ({status['event_reason']}), walks complete {status['walks_complete']}, "
      f"bad {status['walks_bad']}, fell back {status['walks_fell_back']}, tables loaded "
      f"{status['unwind_tables_loaded']}")
for f in ("nofp_lib_spin", "nofp_recurse", "nofp_run", "main", "_start"):
    pct = rows.get(f, {}).get("inclusive_percent", 0.0)
    print(f"qemu: {f} inclusive {pct:.2f}%")
# The driver holds every sample but the few in main's clock reads; _start is the root of every stack.
check(rows.get("nofp_run", {}).get("inclusive_percent", 0.0) >= 97.0, "nofp_run ~100% inclusive")
for f in ("main", "_start"):
    check(rows.get(f, {}).get("inclusive_percent", 0.0) >= 98.0, f"{f} ~100% inclusive (a whole stack)")
check(status["unwind_tables_loaded"] >= 2, "unwind tables loaded for vprof-nofp and its library")
check(sum(r.get("exclusive_percent", 0.0) for r in report["functions"]) > 99.0, "the report's rows add up")
# The second run, the probe for bpf_loop forced: the frame-pointer walk loaded, samples kept, said in status.
fp = json_block("status-fp")
check(fp["unwind_walk"] == "frame pointers (the kernel has no bpf_loop)", f"forced probe: walk {fp['unwind_walk']!r}")
check(fp["samples_kept"] > 0 and fp["walks_complete"] == 0,
      f"forced probe: {fp['samples_kept']} samples kept, {fp['walks_complete']} walks by the tables")
check("daemon_fp_exit 0" in text, "forced probe: vprofd exited cleanly")
sys.exit(1 if failures else 0)
PY
t_end=$(now)
say "figures: kernel $(secs "$t_start" "$t_kernel") s, image $(secs "$t_kernel" "$t_image") s, guest $(secs "$t_image" "$t_boot") s, total $(secs "$t_start" "$t_end") s"
say "PASS"
