#!/usr/bin/env bash
# planck report opened in a real browser: Debian's chromium, headless, prints the DOM after
# layout; every section of docs/report.md must be in it. Exit 77 (ctest SKIP) without chromium.
# Usage: chromium_test.sh PLANCK PLANS_DIR OBSERVED_LOG
set -euo pipefail
planck=$1 plans=$2 observed=$3
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "SKIP: chromium is not installed (apt-get install chromium; scripts/setup.sh does)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$planck" report "$plans/torchtitan-hsdp-2x8-flattened.json" --baseline "$plans/torchtitan-hsdp-2x8.json" \
  --observed "$observed" -o "$dir/report.html"
timeout 90 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$dir/profile" \
  --dump-dom "file://$dir/report.html" > "$dir/dom.html" 2> "$dir/chromium.log" || {
  echo "chromium failed:"; cat "$dir/chromium.log"; exit 1; }
status=0
for id in verdict diagnostics baseline diagrams observed schedule memory pipeline; do
  if ! grep -q "<section id=\"$id\"" "$dir/dom.html"; then
    echo "missing section #$id in the DOM chromium built"
    status=1
  fi
done
# The inline SVG diagrams parsed as SVG elements (a broken one would be dropped or escaped).
svgs=$(grep -o '<svg' "$dir/dom.html" | wc -l)
if [[ $svgs -lt 4 ]]; then
  echo "expected at least 4 inline <svg> elements in the DOM, found $svgs"
  status=1
fi
grep -q 'FAILS verify' "$dir/dom.html" || { echo "verdict text missing"; status=1; }
[[ $status == 0 ]] && echo "chromium $("$browser" --version 2>/dev/null | head -1): all sections present, $svgs inline SVGs"
exit $status
