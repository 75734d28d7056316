#!/usr/bin/env bash
# Bullet's ExampleBrowser with BulletGpu's entries, from a bullet3 source tree, in one command:
#   bash tools/example-browser.sh /path/to/bullet3 [--run]
# 1. builds bullet3's libraries (shared, with the extras the browser links) and installs them into
#    <work>/prefix; 2. builds BulletGpu against exactly that Bullet (its CMake refuses another one)
#    with the entries (BulletGpu::ExampleEntries) and installs it there too; 3. builds the browser
#    from the tree's own CMake files with the entries listed first (demos/example_browser/browser),
#    editing nothing in the tree. Prints the browser's path; --run starts it.
# Environment: BROWSER_WORK (default build-example-browser), CUDA=AUTO|ON|OFF (default OFF: the
# entries run Backend::Auto, which uses the CPU without a GPU), JOBS (default nproc).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
usage() { echo "usage: bash tools/example-browser.sh /path/to/bullet3 [--run]" >&2; exit 2; }
[ $# -ge 1 ] || usage
tree=$(cd "$1" 2>/dev/null && pwd) || { echo "example-browser: no such folder: $1" >&2; exit 2; }
run=0
[ "${2:-}" = "--run" ] && run=1
[ -f "$tree/examples/ExampleBrowser/main.cpp" ] && [ -f "$tree/VERSION" ] ||
  { echo "example-browser: $tree is not a bullet3 source tree (no examples/ExampleBrowser/main.cpp)" >&2; exit 2; }

source "$root/tools/install-missing.sh"
install_missing cmake g++ ninja-build pkg-config nlohmann-json3-dev libtinyobjloader-dev libpng-dev \
  xvfb x11-apps netpbm libgl1 libgl1-mesa-dri libglx-mesa0 libx11-6

work=$(mkdir -p "${BROWSER_WORK:-$root/build-example-browser}" && cd "${BROWSER_WORK:-$root/build-example-browser}" && pwd)
prefix=$work/prefix
jobs=${JOBS:-$(nproc)}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

echo "== 1/3 bullet3 $(cat "$tree/VERSION") from $tree into $prefix"
cmake -S "$tree" -B "$work/bullet3" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" "${launcher[@]}" \
  -DBUILD_SHARED_LIBS=ON -DINSTALL_LIBS=ON -DBUILD_EXTRAS=ON -DINSTALL_EXTRA_LIBS=ON \
  -DBUILD_BULLET_ROBOTICS_GUI_EXTRA=OFF -DBUILD_BULLET_ROBOTICS_EXTRA=OFF -DBUILD_OBJ2SDF_EXTRA=OFF \
  -DBUILD_BULLET2_DEMOS=OFF -DBUILD_CPU_DEMOS=OFF -DBUILD_OPENGL3_DEMOS=OFF -DBUILD_UNIT_TESTS=OFF \
  -DBUILD_PYBULLET=OFF -DUSE_DOUBLE_PRECISION=OFF >"$work/bullet3-configure.log"
cmake --build "$work/bullet3" --parallel "$jobs"
cmake --install "$work/bullet3" >"$work/bullet3-install.log"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
echo "== 2/3 BulletGpu against that Bullet, with the ExampleBrowser entries, into $prefix"
cmake -S "$root" -B "$work/bulletgpu" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" -DBULLETGPU_BULLET_SOURCE_DIR="$tree" -DBULLETGPU_CUDA="${CUDA:-OFF}" \
  -DBULLETGPU_BUILD_TESTS=OFF -DBULLETGPU_BUILD_BENCHMARKS=OFF >"$work/bulletgpu-configure.log" ||
  { cat "$work/bulletgpu-configure.log" >&2; exit 1; }
cmake --build "$work/bulletgpu" --parallel "$jobs" --target bulletgpu_example_entries
cmake --install "$work/bulletgpu" >"$work/bulletgpu-install.log"

echo "== 3/3 the ExampleBrowser with BulletGpu's entries"
cmake -S "$root/demos/example_browser/browser" -B "$work/browser" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DBULLET3_SOURCE_DIR="$tree" "${launcher[@]}" >"$work/browser-configure.log" ||
  { cat "$work/browser-configure.log" >&2; exit 1; }
cmake --build "$work/browser" --parallel "$jobs"
browser=$work/browser/bulletgpu-example-browser
echo "browser: $browser"
[ "$run" -eq 1 ] && exec "$browser"
exit 0
