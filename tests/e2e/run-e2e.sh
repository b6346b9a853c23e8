#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The end-to-end test: the Debian package under a real systemd, as a user runs it.
#
# A Debian 12 root file system (mmdebstrap, cached as a tarball in /var/cache/vprof-e2e) gets the vprofd .deb, the
# vprof-demo workload and a oneshot unit; systemd-nspawn --boot brings up systemd 252 as PID 1 with the real
# system dbus-daemon, and the unit runs in-container.sh: dpkg -i, systemctl start and status, the workload,
# vprofctl attach with the PID the container sees, samples and the hot function in vprofctl top, an unprivileged
# user refused, systemctl restart keeping the counts, kill -9 of the daemon bringing it back through
# Restart=on-failure with its counts, the socket-activated vprof-exporter (the first request starts it as a
# user of its own in the group vprof; a gzip pprof of the workload, /targets, its systemd-analyze security exposure;
# through the shipped unix and TCP sockets an unprivileged user gets 403 for root's workload and reads its own),
# MaxTargets attached sleeps under the unit's LimitNOFILE=, systemctl stop leaving no BPF program. Its exit status (the number of failed steps) leaves the container as systemd-nspawn's.
# This script prints the container's console, then the time of every phase and step (and the figures steps
# measured), checks from the host that the daemon's BPF programs are gone, and exits non-zero on any failure. It
# skips (77) where the machine cannot run it, except with CI=true, where that fails.
#
#   tests/e2e/run-e2e.sh          (as root; or: meson test -C build --suite e2e -v)
#
# Environment:
#   VPROF_E2E_DEB     the vprofd .deb to test; without it, tools/build-packages.sh builds one from this tree
#   VPROF_DEMO        the vprof-demo binary (meson sets it); default build/tests/workloads/vprof-demo
#   VPROF_FORK        the vprof-fork binary (meson sets it); default build/tests/workloads/vprof-fork
#   VPROF_E2E_CACHE   where the root file system tarball is kept (default /var/cache/vprof-e2e)
#   VPROF_E2E_KEEP=1  keep the work directory (root file system, console log) instead of removing it
#   VPROF_E2E_TIMEOUT seconds the container may run at most (default 420)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${VPROF_E2E_CACHE:-/var/cache/vprof-e2e}
timeout_secs=${VPROF_E2E_TIMEOUT:-420}
t_start=$(date +%s.%N)

# The root file system: Debian 12 with what the package and the test need. Bump ROOTFS_VERSION when the way it is
# made changes; the package list and the mirrors are part of the cache key anyway. A new dependency of the package
# shows as dpkg's error in step 1: add it here (no network inside the container, so dpkg -i cannot fetch it).
ROOTFS_VERSION=1
SUITE=bookworm
ROOTFS_PACKAGES=(
  systemd systemd-sysv dbus             # PID 1, the system bus
  libbpf1 libelf1 libdw1 liblzma5 libnettle8 libsystemd0 libsmartcols1 libjson-c5 libncursesw6   # vprofd's Depends (its shlibs)
  libmicrohttpd12                       # the same, for vprof-exporter
  libprotobuf-c1 zlib1g                 # the same, for vprofctl's pprof files
  polkitd                               # vprofd's Recommends: an unprivileged caller is refused through polkit
  curl                                  # the exporter's requests
  bpftool procps util-linux passwd      # the checks: BPF programs, ps, runuser, useradd
)

say() { echo "e2e: $*"; }
die() { echo "e2e: FAIL: $*" >&2; exit 1; }
skip() {
  if [ "${CI:-}" = true ]; then
    die "cannot run in CI: $*"
  fi
  echo "e2e: SKIP: $*"
  exit 77
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
timings=()
# timing NAME SECONDS [VERDICT]: a line of the table printed at the end.
timing() { timings+=("$(printf '  %-66s %7s s  %s' "$1" "$2" "${3:-}")"); }
phase_t0=$(now)
# phase_done NAME [DETAIL]: how long the phase since the last one took, now and in the table.
phase_done() {
  local t
  t=$(now)
  timing "host: $1" "$(secs "$phase_t0" "$t")"
  say "$1${2:+: $2} ($(secs "$phase_t0" "$t") s)"
  phase_t0=$t
}

# --- what the machine must have ------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn, BPF)"
[ -e /sys/kernel/btf/vmlinux ] || skip "needs kernel BTF at /sys/kernel/btf/vmlinux"
[ -d /sys/fs/cgroup ] || skip "needs cgroups for systemd-nspawn"
if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
  skip "needs a Debian host (apt, dpkg)"
fi

tools=(systemd-container mmdebstrap bpftool python3)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    skip "cannot install ${missing[*]}"
  fi
fi
bpftool prog show >/dev/null 2>&1 || skip "bpf(2) does not work here (bpftool prog show fails)"

demo=${VPROF_DEMO:-$top/build/tests/workloads/vprof-demo}
[ -x "$demo" ] || die "no vprof-demo at $demo: build first (meson setup build && meson compile -C build)"
fork=${VPROF_FORK:-$top/build/tests/workloads/vprof-fork}
[ -x "$fork" ] || die "no vprof-fork at $fork: build first (meson setup build && meson compile -C build)"
mapfile -t bpf_programs < <(
  # The programs of bpf/vprof.bpf.c: the function after each SEC("...") that is not a map or the license.
  awk '/^SEC\("/ && !/license|\.maps/ { getline; print }' "$top/bpf/vprof.bpf.c" |
    sed -E 's/.*BPF_PROG\(([A-Za-z0-9_]+).*/\1/; s/^[^(]* \**([A-Za-z0-9_]+)\(.*/\1/')
[ ${#bpf_programs[@]} -gt 0 ] || die "found no BPF program in bpf/vprof.bpf.c"

work=$(mktemp -d /var/tmp/vprof-e2e.XXXXXX)
cleanup() {
  if [ -n "${VPROF_E2E_KEEP:-}" ]; then
    say "kept $work"
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
phase_done "prerequisites" "systemd-nspawn $(systemd-nspawn --version | awk 'NR == 1 { print $2 }'), BPF programs of bpf/vprof.bpf.c: ${bpf_programs[*]}"

# --- the Debian package ----------------------------------------------------------------------------------------
if [ -n "${VPROF_E2E_DEB:-}" ]; then
  deb=$VPROF_E2E_DEB
  [ -f "$deb" ] || die "VPROF_E2E_DEB=$deb: no such file"
  phase_done "package (given)" "$deb"
else
  say "no VPROF_E2E_DEB: building the package with tools/build-packages.sh"
  "$top/tools/build-packages.sh" "$work/packages" || die "tools/build-packages.sh failed"
  deb=$(find "$work/packages" -name 'vprofd_*.deb' | head -n 1)
  [ -n "$deb" ] || die "tools/build-packages.sh made no vprofd_*.deb"
  phase_done "package (built by tools/build-packages.sh)" "$(basename "$deb")"
fi

# --- the root file system ------------------------------------------------------------------------------------
# The host's Debian 12 mirrors, from /etc/apt/sources.list and sources.list.d (one-line and deb822 formats), as
# one-line entries for mmdebstrap; deb.debian.org if there are none.
mirrors=$(python3 - "$SUITE" <<'PY'
import glob, sys
suite = sys.argv[1]
out = []

def add(uri, suites, comps, signed_by):
    for s in suites:
        if s == suite or s.startswith(suite + "-") or s.startswith(suite + "/"):
            opt = f" [signed-by={signed_by}]" if signed_by and signed_by.startswith("/") else ""
            line = f"deb{opt} {uri} {s} {' '.join(c for c in comps if c == 'main') or 'main'}"
            if line not in out:
                out.append(line)

for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        opts = ""
        if words and words[0].startswith("["):
            while words and not words[0].endswith("]"):
                opts += words.pop(0) + " "
            opts += words.pop(0) if words else ""
        signed = next((o.split("=", 1)[1] for o in opts.strip("[] ").split() if o.startswith("signed-by=")), "")
        if len(words) >= 3:
            add(words[0], [words[1]], words[2:], signed)
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    try:
        text = open(path).read()
    except OSError:
        continue
    for stanza in text.split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[0].isspace():
                continue
            k, v = line.split(":", 1)
            fields[k.strip().lower()] = v.strip()
        if fields.get("enabled", "yes").lower() == "no" or "deb" not in fields.get("types", "").split():
            continue
        for uri in fields.get("uris", "").split():
            add(uri, fields.get("suites", "").split(), fields.get("components", "main").split(),
                fields.get("signed-by", ""))
if not out:
    out = [f"deb http://deb.debian.org/debian {suite} main", f"deb http://deb.debian.org/debian {suite}-updates main",
           f"deb http://deb.debian.org/debian-security {suite}-security main"]
print("\n".join(out))
PY
)
arch=$(dpkg --print-architecture)
key=$(printf '%s\n' "version $ROOTFS_VERSION" "$SUITE" "$arch" "${ROOTFS_PACKAGES[*]}" "$mirrors" | sha256sum | cut -c1-16)
tarball=$cache/rootfs-$SUITE-$arch-$key.tar
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9   # one build at a time; a second run waits for it and takes the tarball
if [ -f "$tarball" ]; then
  rootfs_how=cached
else
  say "building the root file system with mmdebstrap (cached afterwards as $tarball); mirrors:"
  while IFS= read -r line; do echo "  $line"; done <<<"$mirrors"
  mirror_args=()
  while IFS= read -r line; do mirror_args+=("$line"); done <<<"$mirrors"
  include=$(IFS=,; echo "${ROOTFS_PACKAGES[*]}")
  partial=$cache/.partial-$key.tar   # mmdebstrap picks the output format from the name
  rm -f "$partial"                   # an interrupted build's
  if ! mmdebstrap --variant=minbase --format=tar --include="$include" "$SUITE" "$partial" "${mirror_args[@]}" \
      >"$work/mmdebstrap.log" 2>&1; then
    tail -n 40 "$work/mmdebstrap.log" | sed 's/^/  | /' >&2
    rm -f "$partial"
    die "mmdebstrap failed"
  fi
  mv "$partial" "$tarball"
  # Older keys' tarballs are of no more use.
  find "$cache" -maxdepth 1 -name 'rootfs-*.tar' ! -name "$(basename "$tarball")" -delete
  rootfs_how="built with mmdebstrap"
fi
exec 9>&-
phase_done "root file system ($rootfs_how)" "$tarball, $(($(stat -c %s "$tarball") >> 20)) MiB"

rootfs=$work/rootfs
mkdir "$rootfs"
tar -C "$rootfs" -xf "$tarball"
phase_done "root file system unpacked" "$rootfs"

# --- what the test brings into it -----------------------------------------------------------------------------
install -d -m 0700 "$rootfs/root/vprof-e2e"
install -m 0644 "$deb" "$rootfs/root/vprof-e2e/"
install -m 0755 "$here/in-container.sh" "$rootfs/root/vprof-e2e/"
printf '%s\n' "${bpf_programs[@]}" >"$rootfs/root/vprof-e2e/bpf-programs"
install -m 0755 "$demo" "$rootfs/usr/local/bin/vprof-demo"
install -m 0755 "$fork" "$rootfs/usr/local/bin/vprof-fork"
install -m 0644 "$here/vprof-fork-test.service" "$rootfs/etc/systemd/system/"
install -m 0644 "$here/vprof-e2e.service" "$rootfs/etc/systemd/system/"
ln -sf /etc/systemd/system/vprof-e2e.service "$rootfs/etc/systemd/system/multi-user.target.wants/vprof-e2e.service"
echo vprof-e2e >"$rootfs/etc/hostname"
# Nothing to log in on the console: no getty writing over the test's output.
ln -sf /dev/null "$rootfs/etc/systemd/system/console-getty.service"
phase_done "container prepared" "$(basename "$deb"), vprof-demo, vprof-fork, vprof-e2e.service"

# --- boot ----------------------------------------------------------------------------------------------------
# systemd-nspawn as the issue has it: host user IDs, every capability, bpf(2) and perf_event_open(2) allowed
# through its seccomp filter, no machined (none runs), no scope unit of its own (no systemd on the host), and no
# network (nothing is fetched at test time). The console is the output; systemd shows only failed units.
nspawn=(systemd-nspawn --quiet --directory="$rootfs" --machine="vprof-e2e-${work##*.}" --boot
  --private-users=no --capability=all --system-call-filter='bpf perf_event_open'
  --register=no --keep-unit --private-network --console=read-only
  --setenv=SYSTEMD_COLORS=0 --setenv=TERM=dumb
  systemd.show_status=error systemd.log_color=0)
printf '$'; printf ' %q' timeout "$timeout_secs" "${nspawn[@]}"; echo
echo "----- container console"
t_boot=$(now)
set +e
timeout --kill-after=15 "$timeout_secs" "${nspawn[@]}" </dev/null 2>&1 | tr -d '\r' | tee "$work/console.log"
nspawn_status=${PIPESTATUS[0]}
set -e
t_end=$(now)
echo "----- end of the container console (systemd-nspawn exit status $nspawn_status)"

# --- results ---------------------------------------------------------------------------------------------------
results=$rootfs/var/log/vprof-e2e/results
failed=0
passed=0
problems=()
started=$(awk '$1 == "started" { print $2 }' "$results" 2>/dev/null || true)
finished=$(awk '$1 == "finished" { print $2 }' "$results" 2>/dev/null || true)
if [ -n "$started" ]; then
  timing "container: boot to the test unit" "$(secs "$t_boot" "$started")"
fi
while IFS=$'\t' read -r kind n verdict s name; do
  # "measure WHAT SECONDS": a figure of a step, for the table.
  if [ "$kind" = measure ]; then
    timing "  measured: $n" "$verdict"
    continue
  fi
  [ "$kind" = step ] || continue
  timing "step $n: $name" "$s" "$verdict"
  if [ "$verdict" = ok ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    problems+=("step $n: $name")
  fi
done < <(cat "$results" 2>/dev/null || true)
if [ -n "$finished" ]; then
  timing "container: shutdown" "$(secs "$finished" "$t_end")"
fi
phase_t0=$t_end

if [ -z "$started" ]; then
  problems+=("the test unit never started (see the console above)")
elif ! grep -q '^done' "$results"; then
  problems+=("the in-container test did not finish (timeout after $timeout_secs s or a crash)")
fi
# The container's exit status is the number of failed steps.
[ "$nspawn_status" = "$failed" ] || problems+=("systemd-nspawn exited with $nspawn_status, $failed steps failed")

# From the host: the daemon's programs, by ID, must be gone (IDs are unique machine-wide until reboot).
progs=$(awk -F'\t' '$1 == "progs" { print $2 }' "$results" 2>/dev/null || true)
left=
for id in $progs; do
  bpftool prog show id "$id" >/dev/null 2>&1 && left="$left $id"
done
if [ -z "$progs" ]; then
  verdict="FAILED (no program IDs recorded)"
elif [ -n "$left" ]; then
  verdict="FAILED (still loaded:$left)"
else
  verdict=ok
fi
t=$(now)
timing "host: the daemons' BPF programs are gone" "$(secs "$phase_t0" "$t")" "$verdict"
say "the BPF programs the daemons held ($(xargs <<<"$progs")), seen from the host: $verdict"
if [ "$verdict" = ok ]; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  problems+=("the daemons' BPF programs, seen from the host")
fi

t_total=$(now)
echo
echo "e2e: timings"
printf '%s\n' "${timings[@]}"
printf '  %-66s %7s s\n' "total" "$(secs "$t_start" "$t_total")"
for p in "${problems[@]}"; do
  echo "e2e: FAILED: $p"
done
echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ ${#problems[@]} = 0 ]
