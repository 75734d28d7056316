#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds BulletGpu, then runs the demo or the tests.
#   bash tools/run.sh demo    # the 3000-box scene stepped with btDbvtBroadphase and with BulletGpu
#   bash tools/run.sh test    # the whole test suite through ctest
# Environment: BUILD_DIR (default build), CUDA=AUTO|ON|OFF (default AUTO: on when nvcc is found),
# EXTRA_CMAKE_ARGS (more -D options).
set -euo pipefail
what=${1:-test}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

source "$root/tools/install-missing.sh"
install_missing cmake g++ ninja-build pkg-config libbullet-dev libbullet-extras-dev catch2 nlohmann-json3-dev libpng-dev \
  libtinyobjloader-dev libfcl-dev

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBULLETGPU_CUDA="${CUDA:-AUTO}" ${EXTRA_CMAKE_ARGS:-}
case "$what" in
  demo)
    cmake --build "$build" --parallel "$(nproc)" --target bulletgpu-demo
    "$build/demos/bulletgpu-demo" --compare dbvt,bulletgpu --steps 300 ;;
  test)
    cmake --build "$build" --parallel "$(nproc)"
    ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" ;;
  *) echo "usage: bash tools/run.sh demo|test" >&2; exit 2 ;;
esac
