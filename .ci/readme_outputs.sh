#!/usr/bin/env bash
# Runs every clustersim command shown in the README (and `validate`) and writes each one's stdout,
# stderr and exit code into OUTDIR, so a restructuring can be checked byte for byte:
#   .ci/readme_outputs.sh build/clustersim /tmp/before && ... && .ci/readme_outputs.sh build/clustersim /tmp/after
#   diff -r /tmp/before /tmp/after
# Wall-clock fields (wall_s) are masked: they are the only values that may differ between runs.
set -uo pipefail
bin=${1:?usage: readme_outputs.sh CLUSTERSIM_BINARY OUTDIR}
out=${2:?usage: readme_outputs.sh CLUSTERSIM_BINARY OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
run() {
  n=$((n + 1))
  local name
  name=$(printf '%02d' "$n")
  (cd "$work" && "$bin" "$@" >"$out/$name.out" 2>"$out/$name.err"; echo "rc=$?" >"$out/$name.rc")
  echo "$*" >"$out/$name.cmd"
  sed -i -E 's/("wall_s": *)[0-9.e+-]+/\1X/g; s/[0-9.]+ s wall/X s wall/g; s/; [0-9.]+ s$/; X s/; s/  [0-9.]+ s$/  X s/' "$out/$name.out" "$out/$name.err"
  # Sweep progress lines arrive in completion order (parallel jobs): compare them sorted.
  [ "$1" = sweep ] && sed -E "s/^\[[0-9]+\/[0-9]+\] //" "$out/$name.err" | sort -o "$out/$name.err"
}
root=$PWD
bin=$(realpath "$bin")
lib=$root/scenarios/library
run run "$lib/gpt3-175b-dgx-a100.toml"
run collective --node dgx-a100-80gb --op allreduce --algo ring -b 1M -e 8G -f 2
run run "$lib/llama3-8b-hgx-h100.toml" --format json --trace t.json
cp "$work/t.json" "$out/trace.json" 2>/dev/null
run run "$lib/gpt3-175b-dgx-a100.toml" --set parallelism.pp=16 --set parallelism.dp=8 --set sync.overlap=false
run run "$lib/llama2-70b-dgx-h100-16nodes.toml" --report report.html --dmon dmon.txt -e 203,204,1002,1004,1005,1011,155
cp "$work/report.html" "$work/dmon.txt" "$out/" 2>/dev/null
run run "$lib/llama2-70b-dgx-h100-16nodes.toml" --set sync.tp_comm_overlap=false
run run "$lib/llama3-405b-dgx-h100.toml"
run compare "$lib/gpt3-175b-dgx-a100.toml" --vary sync.algorithm=ring,tree,halving-doubling --vary sync.bucket_mb=25,200
run compare "$lib/gpt3-175b-dgx-a100.toml" --vary cluster.routing=flow-hash,destination-mod-k
run compare "$lib/llama3-8b-hgx-h100.toml" --vary model.eager_layer_ops=false,true
run sweep "$lib/sweeps/gpt3-175b-layouts.toml" --jobs 2 --out results.csv --best tokens_per_s
cp "$work/results.csv" "$out/" 2>/dev/null
run memory "$lib/gpt3-1.3b-2x-rtx4090.toml"
run validate
run validate --format json
run calibrate --params sustained_clock_ratio,flash_attention_eff --rows source=llm-foundry,gpu=a100_80gb,metric=mfu
run collective --node dgx-h100 --nodes 4 --op allreduce -b 64M -e 1G --format json
run collective --node dgx-h100 --nodes 4 --op allreduce --algo ring,tree,hierarchical,in-network,auto -b 1M -e 1G -f 8
run collective --node dgx-h100 --nodes 16 --op allreduce --algo ring --proto Simple -b 1G -e 1G --routing flow-hash
run collective --node dgx-h100 --nodes 64 --op allreduce --algo in-network -b 1G -e 1G --explain
run topo --node dgx-a100-80gb --matrix
run topo --node 8x-a100-pcie --matrix
run topo --node dgx-a100-80gb --nodes 8 --oversubscription 2 --bisection
run topo --node dgx-h100 --nodes 2 --dot
run catalog gpus
run catalog constants
run run "$lib/gpt3-125m-2x-rtx4090-dataloader-stall.toml" --trace t.json
run compare "$lib/gpt3-125m-2x-rtx4090-dataloader-stall.toml" --vary data.loader_workers=0,2,8
run run "$lib/gpt3-2.7b-2x-a100-fp16-gradscaler.toml"
run run "$lib/tier2-mid-2x-a100-40gb.toml" --set training.launch_blocking=true
for f in "$lib"/*.toml; do run run "$f" --format json; run memory "$f"; done
sed -i -E 's/[0-9.]+ s wall/X s wall/g' "$out/report.html" "$out/trace.json" 2>/dev/null
exit 0
