#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Install what vprof needs to build and test on Debian 12 (run as root). Installs only what is missing.
set -euo pipefail

packages=(
  # build
  gcc meson ninja-build pkg-config clang bpftool
  libbpf-dev libelf-dev libdw-dev liblzma-dev libiberty-dev libsystemd-dev libsmartcols-dev libjson-c-dev libdebuginfod-dev libncurses-dev
  # pprof files (client/pprof/): profile.proto compiled by protoc-c, gzip by zlib
  protobuf-c-compiler libprotobuf-c-dev zlib1g-dev
  # vprof-exporter's HTTP server
  libmicrohttpd-dev
  # SHA-256 of the call frame information that keys the daemon's shared unwind tables
  nettle-dev
  # tests (libclang-rt-14-dev: libFuzzer, for the parser fuzzers built with clang; tmux: the terminal that
  # integration-top drives vprofctl top in; python3.11 with python3.11-dbg, elfutils and binutils: the inline
  # reader against addr2line on Debian's python3.11)
  check xz-utils python3 python3.11 python3.11-dbg elfutils binutils rustc dbus dbus-bin util-linux groff-base libxml2-utils systemd polkitd libclang-rt-14-dev
  tmux
  # integration-pprof: go tool pprof reads the pprof files
  golang-go
  # the debuginfod test: the library the daemon dlopen()s, and a real server
  libdebuginfod1 debuginfod
  # the profiler benchmark (bench/profilers.py, and its smoke test): the profilers it compares, headers for bcc
  # to compile against, and the plot
  linux-perf bpfcc-tools bpftrace linux-headers-amd64 gnuplot-nox
  # the flame graph's browser test (integration-flamegraph): headless chromium, and a font for its names
  chromium fonts-dejavu-core
  # the end-to-end test: a Debian 12 root file system, booted with systemd-nspawn
  mmdebstrap systemd-container
  # the QEMU test: Debian 12's own kernel booted under qemu (TCG without KVM), a busybox root file system
  qemu-system-x86 busybox-static e2fsprogs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
