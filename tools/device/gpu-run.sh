#!/usr/bin/env bash
# Runs what tools/device/stage.sh staged, on the GPU machine, from the repository root:
#
#   bash tools/device/gpu-run.sh [SECONDS]        (run's carry: [".device", ".gl"])
#
# 1. every GPU suite with SPOC_REQUIRE_BACKENDS=cuda,vulkan (a missing backend fails);
# 2. random kernels (difftest) in shards of 500 on every device but the CPU's own, JOBS=16,
#    until SECONDS (default 420) have passed since the start;
# 3. when PEERS=1: bench on CUDA/PTX, CUDA/C and Vulkan with --json, then benches/peers/peers.py
#    (torch, Triton, CuPy) at the same sizes (BENCH_ARGS, default "--scale 4").
# SUITES=0 skips steps 1 and 2 (a peers-only run: PEERS=1 SUITES=0); SUITES="int_edge_values
# cuda" runs only those suites in step 1 and skips step 2. DIFFTEST=N runs step 2 for N kernels
# (still stopping at SECONDS), whatever SUITES says, from kernel DIFFTEST_FIRST (default 0):
# SUITES=0 DIFFTEST=5000 DIFFTEST_FIRST=5000 bash tools/device/gpu-run.sh 560. EXAMPLES="stream_overlap --device
# CUDA/PTX; cuda_bench" runs those staged examples (';'-separated) after step 1.
# Everything goes to one log, $OUT/all.log (the device tool returns a limited number of files),
# and a summary line per step to stdout.
set -u
limit=${1:-420}
out=${OUT:-/tmp}
log=$out/all.log
# The Vulkan loader, where the machine lacks one (the H200 image has NVIDIA's ICD only).
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 '; then
  for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  ldconfig 2>/dev/null || true
fi
nvidia_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$nvidia_icd" ] && export VK_DRIVER_FILES=${VK_DRIVER_FILES:-$nvidia_icd}
export SPOC_REQUIRE_BACKENDS=${SPOC_REQUIRE_BACKENDS:-cuda,vulkan}
bin=$(mktemp -d)
tar -C "$bin" -xJf .device/bin.tar.xz
cd "$bin/bin"
echo "== gpu-run at $(date -u +%FT%TZ), SPOC_REQUIRE_BACKENDS=$SPOC_REQUIRE_BACKENDS" | tee -a "$log"
suites=${SUITES:-1}
for t in *-test; do
  [ "$suites" = 0 ] && break
  case $t in difftest-test) continue ;; esac
  case "$suites" in 1) ;; *) case " $suites " in *" ${t%-test} "*) ;; *) continue ;; esac ;; esac
  threads=4
  [ "$t" = naga_vulkan_run-test ] && threads=1
  echo "==== $t" >> "$log"
  timeout 150 "./$t" --test-threads=$threads >> "$log" 2>&1
  rc=$?
  echo "$t rc=$rc" | tee -a "$log"
done
IFS=';' read -ra examples <<< "${EXAMPLES:-}"
for e in "${examples[@]}"; do
  read -ra cmd <<< "$e"
  [ ${#cmd[@]} -eq 0 ] && continue
  echo "==== ${cmd[*]}" | tee -a "$log"
  timeout 150 "./${cmd[0]}" "${cmd[@]:1}" 2>&1 | tee -a "$log"
  echo "${cmd[0]} rc=${PIPESTATUS[0]}" | tee -a "$log"
done
first=${DIFFTEST_FIRST:-0}
start=$first
kernels=${DIFFTEST:-}
[ -z "$kernels" ] && [ "$suites" = 1 ] && kernels=1000000000
kernels=${kernels:-0}
while [ "$first" -lt $((start + kernels)) ] && [ "$SECONDS" -lt "$limit" ] && [ -x ./difftest-test ]; do
  skip=1
  [ "$first" -eq "$start" ] && skip=0
  echo "==== difftest FIRST=$first" >> "$log"
  # The first shard also builds and runs the 300-kernel compiled set on every device (about
  # 80 s of its time on an H100): 120 s cut it off once (2026-12-06).
  shard_limit=120
  [ "$skip" = 0 ] && shard_limit=240
  SPOC_DIFFTEST_FIRST=$first SPOC_DIFFTEST_KERNELS=500 SPOC_DIFFTEST_SKIP_COMPILED=$skip \
    SPOC_DIFFTEST_JOBS=16 SPOC_DIFFTEST_DEVICES='!cpu-' \
    timeout $shard_limit ./difftest-test --nocapture >> "$log" 2>&1
  echo "difftest kernels $first..$((first + 500)) rc=$?" | tee -a "$log"
  first=$((first + 500))
done
if [ "${PEERS:-0}" = 1 ]; then
  cd - >/dev/null
  OUT=$out bash benches/peers/run.sh "$bin/bin/bench" ${BENCH_ARGS:---scale 4} >> "$log" 2>&1
  echo "peers rc=$?" | tee -a "$log"
  [ -f "$out/peers.md" ] && cat "$out/peers.md"
fi
