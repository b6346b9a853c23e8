#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole benchmark, as root after a build: vprof against perf, bcc and bpftrace (bench/profilers.py), then the
# daemon's own scaling (bench/daemon-scaling.py). Both print their tables; the JSON, the plot and the raw
# profiles go to OUTDIR (default BUILD_DIR/bench-results).
#
#   bench/run-all.sh [BUILD_DIR] [OUTDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-build}")
out=$(realpath -m "${2:-$build/bench-results}")
mkdir -p "$out"

"$top/bench/profilers.py" "$build" --output "$out"
echo
"$top/bench/daemon-scaling.py" "$build" --json "$out/daemon-scaling.json"
echo
echo "run-all: results in $out (results.json, overhead.svg, daemon-scaling.json)"
