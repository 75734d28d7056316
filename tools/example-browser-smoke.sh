#!/usr/bin/env bash
# Headless smoke run of bulletgpu-example-browser (tools/example-browser.sh builds it): starts each
# BulletGpu entry on an Xvfb display with Mesa's software OpenGL, lets it simulate, saves a
# screenshot of the window and checks that it stepped, then that the browser exits cleanly.
#   bash tools/example-browser-smoke.sh <browser> <out-dir> [entry ...]   (default: every scene file)
# Environment: SMOKE_SECONDS (default 4): wall-clock seconds each entry runs before its screenshot
# (longer when its first frames take longer: it must have stepped).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: bash tools/example-browser-smoke.sh <browser> <out-dir> [entry ...]" >&2; exit 2; }
browser=$1
out=$2
shift 2
[ -x "$browser" ] || { echo "smoke: no browser at $browser" >&2; exit 2; }
for tool in Xvfb xwd xwdtopnm pnmtopng; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "smoke: $tool is missing (Debian: xvfb x11-apps netpbm; tools/example-browser.sh installs them)" >&2; exit 2; }
done
entries=("$@")
if [ ${#entries[@]} -eq 0 ]; then
  for scene in "$root"/scenes/*.json; do entries+=("$(basename "$scene" .json)"); done
fi
seconds=${SMOKE_SECONDS:-4}
mkdir -p "$out"

display=90
while [ -e "/tmp/.X${display}-lock" ]; do display=$((display + 1)); done
Xvfb ":$display" -screen 0 1024x768x24 -nolisten tcp >"$out/xvfb.log" 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1

failed=0
printf '%-28s %9s %9s %8s %10s  %s\n' entry objects substeps seconds "real time" result
for entry in "${entries[@]}"; do
  log="$out/$entry.log"
  "$browser" --start_demo_name="$entry" --width=1024 --height=768 \
    --bulletgpu_smoke="$seconds" >"$log" 2>&1 &
  pid=$!
  report=""
  for _ in $(seq 1 900); do # loading and drawing a large scene can take a while on two cores
    report=$(grep -m1 "^bulletgpu-example: $entry:" "$log" || true)
    [ -n "$report" ] || ! kill -0 "$pid" 2>/dev/null || { sleep 0.2; continue; }
    break
  done
  result=ok
  if [ -n "$report" ]; then
    xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng >"$out/$entry.png" || result="no screenshot"
  else
    result="no report"
  fi
  status=0
  timeout 60 tail --pid="$pid" -f /dev/null || { kill -9 "$pid" 2>/dev/null || true; result="did not exit"; }
  wait "$pid" || status=$?
  [ "$status" -eq 0 ] || [ "$result" != ok ] || result="exit status $status"
  objects=$(sed -n 's/.*: \([0-9]*\) objects.*/\1/p' <<<"$report")
  substeps=$(sed -n 's/.*objects, \([0-9]*\) substeps.*/\1/p' <<<"$report")
  simulated=$(sed -n 's/.*substeps (\([0-9.]*\) s simulated).*/\1/p' <<<"$report")
  elapsed=$(sed -n 's/.*simulated) in \([0-9.]*\) s.*/\1/p' <<<"$report")
  [ -z "$substeps" ] || [ "$substeps" -gt 0 ] || [ "$result" != ok ] || result="did not step"
  [ -s "$out/$entry.png" ] || [ "$result" != ok ] || result="empty screenshot"
  realtime=$(awk -v t="${simulated:-0}" -v s="${elapsed:-0}" 'BEGIN { if (s > 0) printf "%.2f", t / s; else print "-" }')
  printf '%-28s %9s %9s %8s %10s  %s\n' "$entry" "${objects:--}" "${substeps:--}" "${elapsed:--}" "$realtime" "$result"
  [ "$result" = ok ] || failed=$((failed + 1))
done
echo "screenshots and logs: $out"
[ "$failed" -eq 0 ] || { echo "smoke: $failed entries failed" >&2; exit 1; }
