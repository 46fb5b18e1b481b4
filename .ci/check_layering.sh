#!/usr/bin/env bash
# Fails when a source file includes a header from a module above its own. The modules, lowest
# first: sim <- topology <- workloads <- scenarios <- analysis <- apps (bench and tests may include
# anything). Inside workloads/ the rooms have their own order, lowest first:
# model <- compute <- memory <- collectives <- training (specs.h at workloads/ is shared by all).
# Usage: check_layering.sh [ROOT]   (default: the repository root). Prints every violation as
# file:line: message and exits 1 if there is one.
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"
rank_of() {
  case "$1" in
    sim) r=0 ;; topology) r=1 ;; workloads) r=2 ;; scenarios) r=3 ;; analysis) r=4 ;; apps) r=5 ;;
    *) r=-1 ;;
  esac
}
room_of() {
  case "$1" in
    model) r=0 ;; compute) r=1 ;; memory) r=2 ;; collectives) r=3 ;; training) r=4 ;;
    *) r=-1 ;;
  esac
}
bad=0
while IFS= read -r hit; do
  file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; inc=${rest#*:}
  target=${inc#*\"}; target=${target%%\"*}
  from_mod=${file%%/*}; to_mod=${target%%/*}
  rank_of "$from_mod"; from=$r; rank_of "$to_mod"; to=$r
  if [ "$from" -ge 0 ] && [ "$to" -gt "$from" ]; then
    echo "$file:$line: error: $from_mod/ includes \"$target\" from the higher module $to_mod/ (modules depend only downwards: apps -> analysis -> scenarios -> workloads -> topology -> sim)"
    bad=1
  fi
  if [ "$from_mod" = workloads ] && [ "$to_mod" = workloads ]; then
    from_room=${file#workloads/}; from_room=${from_room%%/*}
    to_room=${target#workloads/}; to_room=${to_room%%/*}
    room_of "$from_room"; fr=$r; room_of "$to_room"; tr=$r
    if [ "$fr" -ge 0 ] && [ "$tr" -gt "$fr" ]; then
      echo "$file:$line: error: workloads/$from_room/ includes \"$target\" from the higher room workloads/$to_room/ (rooms depend only downwards: training -> collectives -> memory -> compute -> model)"
      bad=1
    fi
  fi
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' sim topology workloads scenarios analysis apps \
           --include='*.h' --include='*.cpp' 2>/dev/null || true)
if [ "$bad" -eq 0 ]; then echo "layering: every include points downwards"; fi
exit "$bad"
