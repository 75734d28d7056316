#!/usr/bin/env bash
# ctest example_browser: tools/example-browser.sh builds Bullet's ExampleBrowser with BulletGpu's
# entries from a bullet3 source tree, then tools/example-browser-smoke.sh starts every entry under
# Xvfb and saves a screenshot. Skipped (exit 77) without a tree: give one with
# -DBULLETGPU_BULLET_SOURCE_DIR or the environment variable BULLET3_SOURCE_DIR.
#   run_example_browser_test.sh <source root> <work dir> [configured tree]
set -euo pipefail
root=$1
work=$2
tree=${BULLET3_SOURCE_DIR:-${3:-}}
if [ -z "$tree" ]; then
  echo "SKIPPED: no bullet3 source tree (set BULLET3_SOURCE_DIR or -DBULLETGPU_BULLET_SOURCE_DIR)"
  exit 77
fi
BROWSER_WORK="$work" bash "$root/tools/example-browser.sh" "$tree"
bash "$root/tools/example-browser-smoke.sh" "$work/browser/bulletgpu-example-browser" "$work/smoke"

# Control: against another Bullet (Debian's, when installed), BulletGpu's configure must refuse the tree.
if PKG_CONFIG_PATH= pkg-config --exists bullet && [ "$(PKG_CONFIG_PATH= pkg-config --modversion bullet)" != "$(cat "$tree/VERSION")" ]; then
  rm -rf "$work/mismatch"
  if PKG_CONFIG_PATH= cmake -S "$root" -B "$work/mismatch" -DBULLETGPU_BULLET_SOURCE_DIR="$tree" -DBULLETGPU_CUDA=OFF \
       -DBULLETGPU_BUILD_TESTS=OFF >"$work/mismatch.log" 2>&1; then
    echo "FAILED: BulletGpu configured against Debian's Bullet with the bullet3 tree $tree" >&2
    exit 1
  fi
  tr -s ' \n' ' ' <"$work/mismatch.log" | grep -q "would link two different Bullets" ||
    { echo "FAILED: the mismatch stopped the configure without saying why:" >&2; cat "$work/mismatch.log" >&2; exit 1; }
  echo "control: against Debian's Bullet $(PKG_CONFIG_PATH= pkg-config --modversion bullet) the configure refused the tree, as it should"
fi
