#!/usr/bin/env bash
# The HTML run report as a browser sees it: `run --report` on a 16-node scenario (NVLink, PCIe, NIC
# and leaf-spine traffic), loaded in headless Chromium; the rendered DOM must hold the page
# script's success marker (#report-ok, written only when the script ran to its end), no
# #report-js-error, the table of contents the script builds, one utilisation chart per link class
# that carried traffic, and the NIC view; and no byte count printed as "1.05e+03 GB" nor a zero
# time as "0.0 us".
# Exit 77 (ctest SKIP_RETURN_CODE) when no Chromium is installed.
# Usage: html_report_chromium.sh CLUSTERSIM SOURCE_DIR
set -u
clustersim=$1
source_dir=$2
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "no chromium installed: skipped"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$clustersim" run "$source_dir/scenarios/library/llama2-70b-dgx-h100-16nodes.toml" --report "$dir/report.html" >/dev/null || {
  echo "FAIL: clustersim run --report failed"
  exit 1
}
timeout 90 "$browser" --headless --disable-gpu --no-sandbox --user-data-dir="$dir/profile" --enable-logging=stderr \
  --v=0 --dump-dom "file://$dir/report.html" >"$dir/dom.html" 2>"$dir/browser.log"
status=0
expect() {  # expect PATTERN WHAT: the DOM holds PATTERN
  if ! grep -q -- "$1" "$dir/dom.html"; then
    echo "FAIL: the rendered page lacks $2 ($1)"
    status=1
  fi
}
refuse() {  # refuse PATTERN FILE WHAT
  if grep -q -- "$1" "$2"; then
    echo "FAIL: $3: $(grep -m1 -- "$1" "$2" | cut -c1-200)"
    status=1
  fi
}
expect 'id="report-ok"' "the script's success marker"
expect 'data-sections="9"' "nine sections counted by the script"
expect '<a href="#utilisation">Link utilisation over time</a>' "the table of contents the script builds"
for class in NVLink PCIe NIC leaf-spine; do
  expect "class=\"util\" data-class=\"$class\"" "a utilisation-over-time chart for $class links"
done
expect '<table class="nics">' "the NIC heat map"
expect '<td>leaf-spine</td>' "leaf-spine links in the busiest-links table"
refuse 'id="report-js-error"' "$dir/dom.html" "a script error"
refuse 'Uncaught' "$dir/browser.log" "an uncaught script error in the browser log"
refuse '[0-9]e[+-][0-9]* *[kMGTP]\?B' "$dir/dom.html" "a byte count in exponent notation"
refuse '0\.0 us' "$dir/dom.html" "a zero printed as 0.0 us"
[ $status -eq 0 ] && echo "ok: report rendered in $(basename "$browser")"
exit $status
