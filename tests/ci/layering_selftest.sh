#!/usr/bin/env bash
# Shows that .ci/check_layering.sh fails on an upward include: builds a tiny tree in which
# sim/ includes topology/ and workloads/model/ includes workloads/training/, and expects exit 1
# with both violations named; then a clean tree, expecting exit 0.
set -uo pipefail
check=$(realpath "$(dirname "$0")/../../.ci/check_layering.sh")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sim" "$tmp/topology" "$tmp/workloads/model" "$tmp/workloads/training"
printf '#pragma once\n#include "topology/graph.h"\n' >"$tmp/sim/units.h"
printf '#pragma once\n#include "workloads/training/iteration.h"\n' >"$tmp/workloads/model/ops.h"
printf '#pragma once\n#include "sim/units.h"\n' >"$tmp/topology/graph.h"
out=$("$check" "$tmp"); rc=$?
[ "$rc" -eq 1 ] || { echo "expected exit 1 on upward includes, got $rc"; exit 1; }
grep -q 'sim/units.h:2: error: sim/ includes "topology/graph.h"' <<<"$out" || { echo "module violation not named: $out"; exit 1; }
grep -q 'workloads/model/ops.h:2: error: workloads/model/ includes' <<<"$out" || { echo "room violation not named: $out"; exit 1; }
rm "$tmp/sim/units.h" "$tmp/workloads/model/ops.h"
"$check" "$tmp" >/dev/null || { echo "expected exit 0 on a clean tree"; exit 1; }
echo "layering check: fails on upward includes, passes on a clean tree"
