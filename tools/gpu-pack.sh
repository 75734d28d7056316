#!/usr/bin/env bash
# Packs what tools/gpu-validate.sh runs into one folder that can travel to a GPU machine with
# no Bullet and no package registry (a lent machine): the CUDA test and benchmark executables
# of a build tree (stripped, in bin.tar.xz), the shared libraries they load that such a machine
# lacks (Bullet, libgomp, FCL and its libraries, in lib/), and the ccd-frames meshes
# (data.tar.xz).
#
#   bash tools/gpu-pack.sh BUILD_DIR PACK_DIR [DATA_DIR]
#
# BUILD_DIR is a Release build with CUDA for the GPU's architecture (the default 80;90 covers
# the A100, H100 and H200) and benchmarks on; DATA_DIR defaults to ../shared/data. On the GPU
# machine, from the project root:
#
#   mkdir -p /tmp/gpu && tar xJf PACK_DIR/bin.tar.xz -C /tmp/gpu && tar xJf PACK_DIR/data.tar.xz -C /tmp/gpu
#   export LD_LIBRARY_PATH=$PWD/PACK_DIR/lib BULLETGPU_DATA_DIR=/tmp/gpu/data
#   bash tools/gpu-validate.sh /tmp/gpu/bin OUT_DIR
set -euo pipefail
build=${1:?usage: gpu-pack.sh BUILD_DIR PACK_DIR [DATA_DIR]}
pack=${2:?usage: gpu-pack.sh BUILD_DIR PACK_DIR [DATA_DIR]}
data=${3:-../shared/data}
executables=(tests/cuda_test tests/broadphase_test tests/world_test tests/mesh_dispatcher_test
  tests/soft_self_collision_test tests/soft_mesh_contact_test tests/narrow_test
  bench/bulletgpu-bench-chains bench/bulletgpu-bench-broadphase bench/bulletgpu-bench-partition
  bench/bulletgpu-bench-narrow bench/bulletgpu-bench-contact bench/bulletgpu-bench-distance
  bench/bulletgpu-bench-ccd bench/bulletgpu-bench-mesh bench/bulletgpu-bench-soft)
rm -rf "$pack"
mkdir -p "$pack/lib" "$pack/stage/bin"
for e in "${executables[@]}"; do
  if [ -x "$build/$e" ]; then
    strip -o "$pack/stage/bin/$(basename "$e")" "$build/$e"
  else
    echo "gpu-pack: $build/$e is missing (build it first)" >&2
  fi
done
# The libraries a GPU machine's image lacks: Bullet, OpenMP's runtime, FCL and what it loads,
# tinyobjloader (the soft bench's demo scenes).
ldd "$pack"/stage/bin/* | grep -o '/[^ ]*/lib\(Bullet\|LinearMath\|gomp\|fcl\|ccd\|octo\|tinyobjloader\)[^ ]*' |
  sort -u |
  while read -r library; do cp -L "$library" "$pack/lib/"; done
tar cJf "$pack/bin.tar.xz" -C "$pack/stage" bin
if [ -d "$data/ccd-frames" ]; then
  mkdir -p "$pack/stage/data" && cp -r "$data/ccd-frames" "$pack/stage/data/"
  tar cJf "$pack/data.tar.xz" -C "$pack/stage" data
else
  echo "gpu-pack: no $data/ccd-frames; the data cases will skip" >&2
fi
rm -rf "$pack/stage"
du -sh "$pack"
