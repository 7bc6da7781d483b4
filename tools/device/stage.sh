#!/usr/bin/env bash
# Stages the GPU suites, the random-kernel differential test and the bench for the H200 machine
# (which has no Rust toolchain) in .device/ (ignored by git): release test binaries, stripped,
# packed as .device/bin.tar.xz, with this folder's gpu-run.sh beside them. Builds only the
# test targets it stages (a few minutes, not the whole workspace).
#
#   tools/device/stage.sh            then, on the device:  bash tools/device/gpu-run.sh
#
# Also fetches the Vulkan loader's .debs into .gl/ (the device image has NVIDIA's ICD but no
# libvulkan1), unless .gl/ already holds them.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
for d in /.device/ /.gl/; do
  grep -qxF "$d" "$exclude" 2>/dev/null || echo "$d" >> "$exclude"
done
rm -rf .device && mkdir -p .device/bin
# package: its GPU test targets.
suites=(
  "spoc:kernels soa records generics const_generics warp_ops check_mode cuda_faults bounds_checks float_special int_edge_values launch_checks evaluation_order deep_kernels backend_kernels vectors streams graphs driver_findings launch_plans half_floats mma"
  "spoc-runtime:cuda vulkan"
  "spoc-examples:programs gemm"
  "spoc-codegen:naga_vulkan_run"
  "spoc-difftest:difftest"
)
for s in "${suites[@]}"; do
  pkg=${s%%:*}
  args=()
  for t in ${s#*:}; do args+=(--test "$t"); done
  cargo test --release --no-run --message-format=json -p "$pkg" "${args[@]}" 2>/dev/null |
    python3 -c '
import json, os, shutil, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable")
    if exe and m.get("profile", {}).get("test"):
        dst = os.path.join(".device/bin", m["target"]["name"] + "-test")
        shutil.copy(exe, dst)
        print("staged", os.path.basename(dst))
'
done
cargo build --release -p spoc-examples --example bench --example stream_overlap --example cuda_bench
for e in bench stream_overlap cuda_bench; do cp "${CARGO_TARGET_DIR:-target}/release/examples/$e" ".device/bin/$e"; done
strip .device/bin/* 2>/dev/null || true
tar -C .device -cf - bin | xz -T0 -6 > .device/bin.tar.xz
rm -rf .device/bin
ls -l .device/bin.tar.xz
if ! ls .gl/*.deb >/dev/null 2>&1; then
  mkdir -p .gl /tmp/spoc-amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/spoc-amd64'
  # shellcheck disable=SC2086
  apt-get $o update >/dev/null
  # shellcheck disable=SC2086
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
echo "carry: .device .gl"
