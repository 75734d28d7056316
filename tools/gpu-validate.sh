#!/usr/bin/env bash
# Checks and times every CUDA path on a machine with a GPU, in one go:
#   1. the CUDA test executable (pair finder, K slabs on streams, sphere chains GPU2 and GPU2v2);
#   2. the plugin's tests with BULLETGPU_BACKEND=cuda, so that every Auto backend (broad phase,
#      mesh dispatcher, soft-body solver) runs on the GPU, and the narrow backend choice;
#   3. the four benchmarks that have GPU columns, as JSON (the narrow phase's on the ccd-frames
#      meshes, among them Cloth Ball with fronts, the H100 target of 0.8 ms per frame), and the
#      whole-frame CCD's CUDA rows as a markdown table (issue 29: Cloth Ball in 5 ms);
#   4. compute-sanitizer memcheck and racecheck over the CUDA tests.
#
#   bash tools/gpu-validate.sh BIN_DIR OUT_DIR [STEPS]
#
# STEPS is a comma list of tests, bench and sanitize (default all three), so that a lent machine's
# 10-minute calls can split the work.
# BIN_DIR holds the executables (a build tree's tests/ and bench/ files, or those files copied flat);
# OUT_DIR gets summary.log, tests.log, sanitizer.log and the benchmark JSON files. Each step has its
# own time limit so that the whole run fits one call on a lent machine (under 10 minutes).
#
# The real meshes: the CUDA narrow-phase tests and benchmark read BULLETGPU_DATA_DIR (default
# ../shared/data, which a lent machine does not have). Copy them into the ignored .gpu-data/
# (`mkdir -p .gpu-data && cp -r ../shared/data/ccd-frames .gpu-data/`, 11 MB), carry it with
# the run, and set BULLETGPU_DATA_DIR=.gpu-data; without them those cases skip with a message.
set -uo pipefail
bin=${1:?usage: gpu-validate.sh BIN_DIR OUT_DIR}
out=${2:?usage: gpu-validate.sh BIN_DIR OUT_DIR}
steps=",${3:-tests,bench,sanitize},"
mkdir -p "$out"
find_exe() { for p in "$bin/$1" "$bin/tests/$1" "$bin/bench/$1"; do [ -x "$p" ] && { echo "$p"; return; }; done; echo "missing-$1"; }
summary="$out/summary.log"
step() {
  local name=$1 limit=$2 log=$3; shift 3
  local start=$SECONDS
  echo "===== $name" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  printf '%-44s rc=%-3s %4ss\n' "$name" "$rc" "$((SECONDS - start))" | tee -a "$summary"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$summary"
echo "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$summary"

if [[ $steps == *,tests,* ]]; then
  tests="$out/tests.log"
  step "cuda_test" 180 "$tests" "$(find_exe cuda_test)" --durations yes
  step "broadphase_test on cuda" 150 "$tests" env BULLETGPU_BACKEND=cuda "$(find_exe broadphase_test)"
  step "world_test on cuda" 150 "$tests" env BULLETGPU_BACKEND=cuda "$(find_exe world_test)"
  step "mesh_dispatcher_test on cuda" 120 "$tests" env BULLETGPU_BACKEND=cuda "$(find_exe mesh_dispatcher_test)"
  step "soft_self_collision_test on cuda" 180 "$tests" env BULLETGPU_BACKEND=cuda "$(find_exe soft_self_collision_test)"
  step "soft_mesh_contact_test on cuda" 90 "$tests" env BULLETGPU_BACKEND=cuda "$(find_exe soft_mesh_contact_test)"
  step "narrow_test backend choice" 30 "$tests" "$(find_exe narrow_test)" "The narrow phase picks its backend*"
  grep -E "^(All tests passed|test cases:)|FAILED|REQUIRE|CHECK\(" "$tests" | head -40 >>"$summary"
fi

if [[ $steps == *,bench,* ]]; then
  step "bench chains" 150 "$out/bench-chains.log" "$(find_exe bulletgpu-bench-chains)" --json "$out/chains.json"
  step "bench broadphase" 200 "$out/bench-broadphase.log" "$(find_exe bulletgpu-bench-broadphase)" \
    --sizes 10000,100000,1000000 --demo-steps 300 --json "$out/broadphase.json"
  step "bench partition" 200 "$out/bench-partition.log" "$(find_exe bulletgpu-bench-partition)" \
    --sizes 10000,100000,1000000 --json "$out/partition.json"
  step "bench narrow" 240 "$out/bench-narrow.log" "$(find_exe bulletgpu-bench-narrow)" \
    "${BULLETGPU_DATA_DIR:-../shared/data}" 3 "$out/narrow.json" cloth-ball,cloth-funnel,rod-twist
  step "bench ccd (cuda)" 120 "$out/bench-ccd.log" "$(find_exe bulletgpu-bench-ccd)" \
    "${BULLETGPU_DATA_DIR:-../shared/data}" 5 "$(nproc)" "" cuda
fi

if [[ $steps == *,sanitize,* ]]; then
  sanitizer="$out/sanitizer.log"
  step "memcheck cuda_test" 240 "$sanitizer" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$(find_exe cuda_test)" "~[large]"
  # racecheck is slow on the narrow engine (the 100-frame cloth alone outlasted 120 s on an H100):
  # the broad phase and chains whole, the narrow engine on its smaller scenes.
  step "racecheck cuda_test" 150 "$sanitizer" compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$(find_exe cuda_test)" "~[large]~[narrow]"
  step "racecheck narrow (small scenes)" 150 "$sanitizer" compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$(find_exe cuda_test)" "CUDA narrow phase equals the CPU on a batch*,CUDA narrow phase equals the CPU on triangle soup*"
  grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY" "$sanitizer" >>"$summary"
fi
cat "$summary"
