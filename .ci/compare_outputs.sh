#!/usr/bin/env bash
# Byte-compares the `run --format json` output of two clustersim binaries on every library
# scenario, memoised and --full, with the wall-clock fields (any key named *wall*) stripped: a
# performance change must not change a simulated number. A run past the time limit on both sides
# is reported as skipped, not as a difference.
#   [MODES="memo full"] .ci/compare_outputs.sh REFERENCE_BINARY NEW_BINARY [TIME_LIMIT_S=120] [SCENARIO...]
set -u
ref=$1 new=$2 limit=${3:-120}
shift $(( $# >= 3 ? 3 : $# ))
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(scenarios/library/*.toml)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strip() {  # drop wall-clock keys; keep everything else byte for byte (key order included)
  python3 -c '
import json, sys
def clean(o):
    if isinstance(o, dict):
        return {k: clean(v) for k, v in o.items() if "wall" not in k}
    if isinstance(o, list):
        return [clean(v) for v in o]
    return o
text = sys.stdin.read()
try:
    print(json.dumps(clean(json.loads(text)), indent=1))
except ValueError:
    print(text)
'
}
status=0
for s in "${scenarios[@]}"; do
  for mode in ${MODES:-memo full}; do
    flag=(); [ "$mode" = full ] && flag=(--full)
    timeout "$limit" "$ref" run "$s" --format json "${flag[@]}" >"$tmp/ref.json" 2>"$tmp/ref.err"; rc_ref=$?
    timeout "$limit" "$new" run "$s" --format json "${flag[@]}" >"$tmp/new.json" 2>"$tmp/new.err"; rc_new=$?
    if [ $rc_ref -eq 124 ] || [ $rc_new -eq 124 ]; then
      echo "SKIP $s ($mode): over ${limit} s (ref rc $rc_ref, new rc $rc_new)"; continue
    fi
    if [ $rc_ref -ne $rc_new ]; then echo "DIFF $s ($mode): exit $rc_ref vs $rc_new"; status=1; continue; fi
    if cmp -s <(strip <"$tmp/ref.json") <(strip <"$tmp/new.json") && cmp -s "$tmp/ref.err" "$tmp/new.err"; then
      echo "SAME $s ($mode), exit $rc_ref"
    else
      echo "DIFF $s ($mode)"; diff <(strip <"$tmp/ref.json") <(strip <"$tmp/new.json") | head -20; status=1
    fi
  done
done
exit $status
