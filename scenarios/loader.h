// Reads a scenario (TOML, docs/scenario.md) into a validated ScenarioSpec.
//
// Every key is checked (type, range, allowed values, preset ids, cross-key consistency) and every
// problem is reported at once as a ScenarioError with file:line:col, the key, what was expected
// and a fix. `--set section.key=value` overrides (value parsed as TOML; a bare word is a string)
// replace the file's value before validation and are validated the same way; their errors name
// the override. TOML++ stays inside scenarios/ (its .cpp files and internal headers).
// The resolved scenario as TOML (`--show-config`) is scenarios/show_config.h.
//
// Defaults (the full reference with units is docs/scenario.md):
//   key                               default
//   name                              the file's stem
//   cluster.node                      required: a node preset id or a [cluster.node] table
//   cluster.nodes                     1
//   cluster.fabric                    "rail-optimized" with several NICs per node, else "fat-tree"
//                                     (used only when nodes > 1)
//   cluster.oversubscription          1.0
//   cluster.gpus                      all GPUs: nodes * node.gpus
//   cluster.node.preset               none (fields below start from this preset when given)
//   cluster.node.gpu                  required without preset
//   cluster.node.gpus                 8
//   cluster.node.intra                "pcie"
//   cluster.node.pcie                 the GPU's own PCIe generation
//   cluster.node.gpus_per_pcie_switch 2 (1 when node.gpus == 1)
//   cluster.node.sockets              2 (1 when node.gpus is odd)
//   cluster.node.nic                  "ib-hdr-200"
//   cluster.node.nics                 node.gpus
//   cluster.gpu_overrides.*           power_limit_w: the GPU's TDP; mig: whole GPU; tf32 = true;
//                                     memory_gib / hbm_bandwidth_gbps: the GPU's
//   model.preset                      none; else layers, hidden, heads are required
//   model.kv_heads                    heads (preset: the preset's)
//   model.ffn_hidden                  4*hidden (gelu) | 8/3*hidden rounded up to 256 (swiglu)
//   model.seq_len / vocab             2048 / 51200
//   model.mlp / norm                  "gelu" / "layernorm"
//   model.tied_embeddings             true
//   model.flash_attention             true
//   parallelism.tp / pp / cp          1 / 1 / 1 (cp_comm_type "p2p")
//   parallelism.dp                    gpus / (tp * cp * pp)
//   parallelism.virtual_stages        1
//   parallelism.schedule              "interleaved" when virtual_stages > 1, else "1f1b"
//   parallelism.sequence_parallel     false
//   parallelism.zero                  0
//   parallelism.distributed_optimizer false
//   training.global_batch             micro_batch * dp * pp (pp micro-batches per replica)
//   training.micro_batch              1
//   training.precision                "bf16" ("fp16" on GPUs without BF16, e.g. V100)
//   training.optimizer                "adam"
//   training.recompute                "none"
//   training.iterations               1
//   training.tokens                   none (no time-to-train)
//   sync.algorithm                    "ring"
//   sync.bucket_mb                    25
//   sync.overlap                      true
//   model_constants.*                 none
//   cost.gpu_hour_usd                 none (capex from catalog prices)
//   cost.electricity_usd_per_kwh      0.12
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_spec.h"

namespace clustersim::scenarios {

// Reads `path` and parses it; file names in errors and relative paths inside the scenario
// (hf_config, model_constants.include) are taken relative to `path` as given.
// Throws ScenarioError on any invalid input, including an unreadable file.
ScenarioSpec load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

// The [cluster] of a scenario file, for verbs that simulate hardware only (collective): a file
// with only [cluster] (and name) is accepted; the other sections, when present, are checked as
// load_scenario checks them. Throws ScenarioError like load_scenario.
topology::ClusterSpec load_cluster(const std::string& path);
// As load_cluster, with the file's [model_constants] too (ScenarioSpec::cluster and
// ::model_constants; the rest is the defaults when the file has only [cluster]).
ScenarioSpec load_cluster_scenario(const std::string& path);

// As load_scenario, from text; `file_name` is used in errors and to resolve relative paths.
ScenarioSpec parse_scenario(std::string_view toml_text, const std::string& file_name,
                            const std::vector<std::string>& overrides = {});

// For the consumer of model_constants (the compute/network model), which alone knows the valid
// names: throws a ScenarioError naming each unknown constant where it was set, with "did you mean".
void check_model_constant_names(const ScenarioSpec& spec, std::span<const std::string_view> known);

// For the same consumer, which alone knows the accepted ranges: throws a ScenarioError naming each
// constant outside range_of(name) = {lo, hi} where it was set (file:line), with the range as hint.
void check_model_constant_ranges(const ScenarioSpec& spec,
                                 const std::function<std::pair<double, double>(std::string_view)>& range_of);

}  // namespace clustersim::scenarios
