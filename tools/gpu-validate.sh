#!/usr/bin/env bash
# Checks and times every CUDA path on a machine with a GPU:
#   tests     the CUDA test executable (pair finder, K slabs on streams, sphere chains, the
#             narrow engine's intersection and contact queries, points against a mesh, the
#             separation distance, the whole-frame CCD, each against the CPU), and the plugin's
#             tests with BULLETGPU_BACKEND=cuda, so that every Auto backend (broad phase, mesh
#             dispatcher, soft-body solver) runs on the GPU, and the narrow backend choice;
#   bench     the benchmarks of the kernels' GPU columns, as JSON: sphere chains, broad phase
#             (with the world rows' bulk AABB path on CUDA, issue 30's 1 ms and 8 ms targets),
#             slabs, the narrow phase on the ccd-frames meshes (Cloth Ball, issue 4's 0.8 ms),
#             and the whole-frame CCD's CUDA rows (issue 29: Cloth Ball in 5 ms);
#   bench2    the physics benchmarks' GPU columns: the contact query and the separation
#             distance (issue 33: 1 ms a query), the mesh dispatcher's CUDA side on the GImpact
#             pile and BenchmarkDemo 6 (issue 27), the soft solver on CUDA (issue 28: the
#             300x300 cloth in 2 ms a step);
#   sanitize  compute-sanitizer memcheck and racecheck over the CUDA tests.
#
#   bash tools/gpu-validate.sh BIN_DIR OUT_DIR [STEPS]
#
# STEPS is a comma list of tests, bench, bench2 and sanitize (default all four); each takes a
# few minutes, so a lent machine's 10-minute calls can hold one or two each.
# BIN_DIR holds the executables (a build tree's tests/ and bench/ files, or those files copied
# flat, as tools/gpu-pack.sh packs them); OUT_DIR gets summary.log and logs.tar.gz, which holds
# tests.log, sanitizer.log, the benchmark logs and their JSON files (one archive: a lent machine
# brings back only a few files of its output folder). Each step has its own time limit.
#
# The real meshes: the CUDA narrow-phase tests and benchmarks read BULLETGPU_DATA_DIR (default
# ../shared/data, which a lent machine does not have): tools/gpu-pack.sh packs the ccd-frames
# meshes; without them those cases skip with a message.
set -uo pipefail
bin=${1:?usage: gpu-validate.sh BIN_DIR OUT_DIR}
out=${2:?usage: gpu-validate.sh BIN_DIR OUT_DIR}
steps=",${3:-tests,bench,bench2,sanitize},"
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

if [[ $steps == *,bench2,* ]]; then
  data=${BULLETGPU_DATA_DIR:-../shared/data}
  step "bench contact" 240 "$out/bench-contact.log" "$(find_exe bulletgpu-bench-contact)" "$data" 3 "$out/contact.json"
  step "bench distance" 200 "$out/bench-distance.log" "$(find_exe bulletgpu-bench-distance)" "$data" 5 \
    "$out/distance.json"
  step "bench mesh (cpu and cuda sides)" 300 "$out/bench-mesh.log" "$(find_exe bulletgpu-bench-mesh)" 0 \
    "$out/mesh.json" gimpact-pile-256,benchmark-6 2 both
  step "bench soft on cuda (300x300 cloth, ropes)" 200 "$out/bench-soft.log" env BULLETGPU_BACKEND=cuda \
    "$(find_exe bulletgpu-bench-soft)" "$(nproc)" 60 8 ours300,ropes
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
  step "racecheck contact query batch" 90 "$sanitizer" compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$(find_exe cuda_test)" "CUDA contact query equals the CPU on a batch*"
  grep -E "ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY" "$sanitizer" >>"$summary"
fi
cat "$summary"
# Only the logs and JSON files the chosen steps wrote (a tests-only run writes no JSON).
shopt -s nullglob
(cd "$out" && logs=(*.log *.json) && tar czf logs.tar.gz --remove-files --exclude summary.log -- "${logs[@]}")
