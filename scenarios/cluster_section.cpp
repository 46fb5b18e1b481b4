// The [cluster] section: which node (a preset, or a [cluster.node] table built from a preset or
// from a GPU), how many, the fabric between them, and [cluster.gpu_overrides] (power limit, MIG,
// TF32). A custom node is checked for a shape the topology builder can wire (GPUs split evenly
// over sockets and PCIe switches, NVLink only on GPUs that have it).
#include <climits>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"
#include "topology/cluster_spec.h"

namespace clustersim::scenarios {
namespace {

using topology::IntraKind;

constexpr std::string_view kClusterKeys[] = {"node",          "nodes", "fabric", "oversubscription",
                                             "routing",       "gpus",  "gpu_overrides"};
constexpr std::string_view kNodeKeys[] = {"preset", "gpu",     "gpus", "intra", "pcie", "gpus_per_pcie_switch",
                                          "sockets", "nic", "nics", "nic_attach"};
constexpr std::string_view kGpuOverrideKeys[] = {"power_limit_w", "mig", "tf32", "memory_gib", "hbm_bandwidth_gbps"};

// PCIe generations as written in scenario files (cluster.node.pcie).
constexpr sim::Choice<int> kPcieGens[] = {{"gen3", 3}, {"gen4", 4}, {"gen5", 5}, {"gen6", 6}};

std::vector<std::string_view> node_preset_ids() {
  std::vector<std::string_view> ids;
  for (const auto& p : topology::all_node_presets()) ids.push_back(p.id);
  return ids;
}

// "unknown node preset "x" in [section]; did you mean "y"?"
std::string unknown_node_preset(const std::string& id, std::string_view section) {
  std::string message = "unknown node preset " + quote_str(id) + " in [" + std::string(section) + "]";
  if (auto close = did_you_mean(id, node_preset_ids()); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
  return message;
}

// [cluster.node] preset: the node starts from it. Nothing when the preset is unknown (reported),
// else whether there was one.
std::optional<bool> read_node_preset(LoadContext& ctx, Section& s, topology::NodeSpec& node) {
  const auto id = s.string("preset", "dgx-a100-80gb");
  if (!id) return false;
  if (const auto* preset = topology::find_node_preset(*id)) {
    node = *preset;
    ctx.spec().node_preset = *id;
    return true;
  }
  ctx.error_at_key("cluster.node.preset", unknown_node_preset(*id, "cluster.node"),
                   "valid node presets: " + join(node_preset_ids(), ", "));
  return std::nullopt;
}

// [cluster.node] gpu: the catalog GPU of the node (the preset's when not given); null when unknown.
const topology::GpuSpec* read_node_gpu(LoadContext& ctx, Section& s, const toml::table& t, topology::NodeSpec& node,
                                       bool have_base) {
  const topology::GpuSpec* gpu = have_base ? topology::find_gpu(node.gpu) : nullptr;
  if (auto id = s.string("gpu", "a100-sxm4-80gb")) {
    gpu = topology::find_gpu(*id);
    if (gpu) {
      node.gpu = *id;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& g : topology::all_gpus()) ids.push_back(g.id);
      std::string message = "unknown GPU " + quote_str(*id) + " in [cluster.node]";
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      ctx.error_at_key("cluster.node.gpu", std::move(message), "valid GPUs: " + join(ids, ", "));
    }
  } else if (!have_base && !s.has("gpu")) {
    ctx.error(ctx.origin_of("cluster.node", t.source()), "missing 'gpu' in [cluster.node]",
              "name a GPU from the catalog, e.g. gpu = \"a100-sxm4-80gb\", or start from preset = \"dgx-a100-80gb\"");
  }
  return gpu;
}

// The node's remaining fields; without a preset, the defaults follow the GPU count and the GPU.
void read_node_fields(LoadContext& ctx, Section& s, topology::NodeSpec& node, bool have_base,
                      const topology::GpuSpec* gpu) {
  if (auto v = s.integer("gpus", 1, 1024, "8")) {
    node.gpus = *v;
  } else if (!have_base) {
    node.gpus = 8;
  }
  if (!have_base) {
    node.nics = node.gpus;
    node.sockets = node.gpus % 2 == 0 ? 2 : 1;
    node.gpus_per_pcie_switch = node.gpus == 1 ? 1 : 2;
    if (gpu) node.pcie_gen = gpu->pcie_gen;
  }
  if (auto v = s.choice("intra", topology::kIntraKindNames)) node.intra = *v;
  if (auto v = s.choice("pcie", kPcieGens)) node.pcie_gen = *v;
  if (auto v = s.integer("gpus_per_pcie_switch", 1, 1024, "2")) node.gpus_per_pcie_switch = *v;
  // Up to 36: a GB200/GB300 NVL72 rack has one Grace CPU per 2 GPUs (its preset).
  if (auto v = s.integer("sockets", 1, 36, "2")) node.sockets = *v;
  if (auto id = s.string("nic", "ib-hdr-200")) {
    if (topology::find_nic(*id)) {
      node.nic = *id;
    } else {
      std::vector<std::string_view> ids;
      for (const auto& n : topology::all_nics()) ids.push_back(n.id);
      std::string message = "unknown NIC " + quote_str(*id) + " in [cluster.node]";
      if (auto close = did_you_mean(*id, ids); !close.empty()) message += "; did you mean " + quote_str(close) + "?";
      ctx.error_at_key("cluster.node.nic", std::move(message), "valid NICs: " + join(ids, ", "));
    }
  }
  if (auto v = s.integer("nics", 0, 1024, "8")) node.nics = *v;
  if (auto v = s.choice("nic_attach", topology::kNicAttachNames)) node.nic_attach = *v;
}

// The shape must be buildable: GPUs split evenly over sockets and PCIe switches, NVLink present.
void check_node_shape(LoadContext& ctx, const topology::NodeSpec& node, const topology::GpuSpec& gpu) {
  const std::string gpus_text = std::to_string(node.gpus);
  if (node.gpus % node.sockets != 0)
    ctx.error_at_key("cluster.node.sockets",
                     "sockets = " + std::to_string(node.sockets) + " does not divide the node's " + gpus_text + " GPUs",
                     "GPUs are split evenly over sockets; use sockets = " + divisor_list(node.gpus, 8));
  if (node.intra == IntraKind::Pcie && node.gpus % node.gpus_per_pcie_switch != 0)
    ctx.error_at_key("cluster.node.gpus_per_pcie_switch",
                     "gpus_per_pcie_switch = " + std::to_string(node.gpus_per_pcie_switch) +
                         " does not divide the node's " + gpus_text + " GPUs",
                     "use gpus_per_pcie_switch = " + divisor_list(node.gpus, node.gpus));
  if (node.intra != IntraKind::Pcie && gpu.nvlink_links == 0)
    ctx.error_at_key("cluster.node.intra",
                     "intra = " + quote_str(sim::name_of(topology::kIntraKindNames, node.intra)) +
                         " needs NVLink, which " + node.gpu + " does not have",
                     "use intra = \"pcie\"");
  if (node.intra == IntraKind::NvlinkBridge && node.gpus % 2 != 0)
    ctx.error_at_key("cluster.node.intra",
                     "intra = \"nvlink-bridge\" joins GPUs in pairs, but the node has " + gpus_text + " GPUs",
                     "use an even number of gpus");
  if (node.intra == IntraKind::XgmiMesh && gpu.nvlink_links > 0 && node.gpus - 1 > gpu.nvlink_links)
    ctx.error_at_key("cluster.node.intra",
                     "intra = \"xgmi-mesh\" joins every GPU pair by one link, but " + node.gpu + " has " +
                         std::to_string(gpu.nvlink_links) + " links for the node's " + gpus_text + " GPUs",
                     "use gpus = " + std::to_string(gpu.nvlink_links + 1) + " or fewer");
}

// A node that differs from its preset is "custom (from <preset>)"; one without a preset "custom".
void name_node(topology::NodeSpec& node, const topology::NodeSpec& base, bool have_base) {
  const bool same_as_base = have_base && node.gpu == base.gpu && node.gpus == base.gpus && node.intra == base.intra &&
                            node.pcie_gen == base.pcie_gen && node.gpus_per_pcie_switch == base.gpus_per_pcie_switch &&
                            node.sockets == base.sockets && node.nic == base.nic && node.nics == base.nics &&
                            node.nic_attach == base.nic_attach;
  if (same_as_base) return;
  node.id = "custom";
  node.description = have_base ? "custom (from " + base.id + ")" : "custom";
}

// The memory (GB) of a MIG profile written "<slices>g.<memory>gb" as nvidia-smi names them, with
// 1, 2, 3, 4 or 7 slices; nothing when it is not such a name.
std::optional<int> mig_profile_gb(const std::string& profile) {
  int slices = 0, gb = 0;
  const bool shaped = std::sscanf(profile.c_str(), "%dg.%dgb", &slices, &gb) == 2 &&
                      profile == std::to_string(slices) + "g." + std::to_string(gb) + "gb";
  const bool valid_slices = slices == 1 || slices == 2 || slices == 3 || slices == 4 || slices == 7;
  if (!shaped || !valid_slices) return std::nullopt;
  return gb;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> mig_profile_problem(const topology::GpuSpec* gpu, const std::string& profile) {
  const std::optional<int> gb = mig_profile_gb(profile);
  if (!gb)
    return std::pair{"invalid MIG profile " + quote_str(profile),
                     std::string("write it as nvidia-smi does, <slices>g.<memory>gb with 1, 2, 3, 4 or 7 slices, e.g. mig = \"3g.40gb\"")};
  if (gpu && !(gpu->compute_capability == 80 || gpu->compute_capability == 90 || gpu->compute_capability == 100))
    return std::pair{gpu->id + " does not support MIG", std::string("MIG exists on A100, H100, H200 and B200; remove mig")};
  if (gpu && *gb > gpu->memory.value / 1e9 + 0.5)
    return std::pair{"MIG profile " + quote_str(profile) + " has more memory than " + gpu->id + " (" +
                         format_number(gpu->memory.value / 1e9) + " GB)",
                     "pick a profile of this GPU, e.g. \"1g." + std::to_string(static_cast<int>(gpu->memory.value / 1e9 / 8)) + "gb\""};
  return std::nullopt;
}

bool Loader::read_cluster(const toml::table* t) {
  const std::size_t before = error_count();
  Section s(*this, t, "cluster", kClusterKeys);
  auto& c = spec_.cluster;
  bool node_ok = false;
  if (const toml::node* n = s.find("node")) {
    if (const auto* str = n->as_string()) {
      const std::string& id = str->get();
      if (const auto* preset = topology::find_node_preset(id)) {
        c.node = *preset;
        spec_.node_preset = id;
        node_ok = true;
      } else {
        error_at_key("cluster.node", unknown_node_preset(id, "cluster"),
                     "valid node presets: " + join(node_preset_ids(), ", ") +
                         "; or describe the node in a [cluster.node] table");
      }
    } else if (const auto* table = n->as_table()) {
      node_ok = read_node_table(*table);
    } else {
      s.wrong_type("node", *n, "a node preset id or a [cluster.node] table", "\"dgx-a100-80gb\"");
    }
  } else {
    error(origin_of("cluster", t->source()), "missing 'node' in [cluster]",
          "name a node preset, e.g. node = \"dgx-a100-80gb\", or describe it in a [cluster.node] table");
  }
  if (node_ok) gpu_ = topology::find_gpu(c.node.gpu);

  if (auto v = s.integer("nodes", 1, topology::kMaxNodes, "1")) c.nodes = *v;
  if (auto v = s.choice("fabric", topology::kFabricNames)) c.fabric = *v;
  if (auto v = s.number("oversubscription", 1.0, false, "1.0")) c.oversubscription = *v;
  if (auto v = s.choice("routing", topology::kFabricRoutingNames)) c.routing = *v;
  if (auto v = s.integer("gpus", 1, INT_MAX, "8")) c.gpus = *v;
  const bool overrides_ok = read_gpu_overrides(s);
  s.finish();

  if (node_ok && c.nodes > 1 && c.node.nics == 0)
    error_at_key("cluster.nodes",
                 "nodes = " + std::to_string(c.nodes) + " but node '" + c.node.id + "' has no NICs to connect them",
                 "set nics in [cluster.node], or use nodes = 1");
  if (node_ok && c.gpus > c.total_gpus()) {
    const int per_node = c.node.gpus;
    error_at_key("cluster.gpus",
                 "gpus = " + std::to_string(c.gpus) + " but the cluster has " + std::to_string(c.total_gpus()) +
                     " GPUs (" + std::to_string(c.nodes) + (c.nodes == 1 ? " node x " : " nodes x ") + std::to_string(per_node) + ")",
                 "use at most gpus = " + std::to_string(c.total_gpus()) + ", or nodes = " +
                     std::to_string((c.gpus + per_node - 1) / per_node));
  }
  return node_ok && overrides_ok && error_count() == before;
}

bool Loader::read_node_table(const toml::table& t) {
  const std::size_t before = error_count();
  Section s(*this, &t, "cluster.node", kNodeKeys);
  topology::NodeSpec node;
  node.id = "custom";
  node.intra = IntraKind::Pcie;
  node.nic = "ib-hdr-200";
  const std::optional<bool> have_base = read_node_preset(*this, s, node);
  if (!have_base) {
    s.finish();
    return false;
  }
  const topology::NodeSpec base = node;
  const topology::GpuSpec* gpu = read_node_gpu(*this, s, t, node, *have_base);
  if (gpu) gpu_ = gpu;  // lets [cluster.gpu_overrides] be checked even if other node fields are wrong
  read_node_fields(*this, s, node, *have_base, gpu);
  s.finish();
  if (error_count() != before || !gpu) return false;

  check_node_shape(*this, node, *gpu);
  if (error_count() != before) return false;
  name_node(node, base, *have_base);
  spec_.cluster.node = node;
  return true;
}

bool Loader::read_gpu_overrides(Section& cluster) {
  const std::size_t before = error_count();
  Section s(*this, cluster.subtable("gpu_overrides"), "cluster.gpu_overrides", kGpuOverrideKeys);
  auto& c = spec_.cluster;
  if (auto v = s.number("power_limit_w", 0.0, true, "250")) {
    c.power_limit_w = *v;
    if (gpu_ && gpu_->tdp.value > 0 && *v > gpu_->tdp.value)
      error_at_key("cluster.gpu_overrides.power_limit_w",
                   "power_limit_w = " + format_number(*v) + " exceeds the TDP of " + gpu_->id + " (" +
                       format_number(gpu_->tdp.value) + " W)",
                   "a power limit can only lower the TDP; use at most " + format_number(gpu_->tdp.value));
  }
  if (auto v = s.string("mig", "3g.40gb")) {
    if (auto problem = mig_profile_problem(gpu_, *v)) error_at_key("cluster.gpu_overrides.mig", problem->first, problem->second);
    else c.mig = *v;
  }
  if (auto v = s.boolean("tf32")) c.tf32 = *v;
  // A GPU built with other memory than its catalog entry (Grand Teton's H100 with 96 GB of HBM2e at
  // 2.4 TB/s). A MIG slice divides the catalog GPU's memory, so the two do not combine.
  if (auto v = s.number("memory_gib", 0.0, true, "96")) c.memory_gib = *v;
  if (auto v = s.number("hbm_bandwidth_gbps", 0.0, true, "2400")) c.hbm_bandwidth_gbps = *v;
  if (!c.mig.empty() && (c.memory_gib > 0 || c.hbm_bandwidth_gbps > 0))
    error_at_key("cluster.gpu_overrides.mig", "a MIG profile together with memory_gib / hbm_bandwidth_gbps",
                 "give either the MIG slice of a catalog GPU or the GPU's own memory, not both");
  s.finish();
  return error_count() == before;
}

}  // namespace clustersim::scenarios
