#!/bin/sh
# spoc's bench on each GPU device, then the peers at the same sizes, in one session on the GPU
# machine; prints the ratio table (and writes it to $OUT/peers.md when $OUT is set).
#
#   benches/peers/run.sh BENCH [--scale 4] [--filter sgemm] ...
#
# BENCH is a release build of `examples/bench.rs` (`cargo build --release -p spoc-examples
# --example bench`, or the staged copy in .device/). The other arguments go to every bench run.
# Devices: `CUDA/PTX`, `CUDA/C` and `Vulkan` (those that are not present are skipped by bench
# with an error, which this script reports and goes on). Needs python3 with torch (and, for
# their columns, cupy and triton). PEERS_DEADLINE=SECONDS stops measuring peers after that long
# (the Triton GEMMs are measured last: their autotuning is the slow part).
set -u
bench=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
work=${OUT:-$(mktemp -d)}
jsons=""
for dev in CUDA/PTX CUDA/C Vulkan; do
    tag=$(echo "$dev" | tr '/' '_')
    if "$bench" --device "$dev" --json "$work/spoc_$tag.json" "$@"; then
        jsons="$jsons $work/spoc_$tag.json"
    else
        echo "run.sh: bench on $dev failed (rc=$?); its column is left out" >&2
        [ -f "$work/spoc_$tag.json" ] && jsons="$jsons $work/spoc_$tag.json"
    fi
done
[ -n "$jsons" ] || { echo "run.sh: no bench run wrote rows" >&2; exit 1; }
# shellcheck disable=SC2086
python3 "$here/peers.py" $jsons --out "$work/peers.md" --deadline "${PEERS_DEADLINE:-0}"
