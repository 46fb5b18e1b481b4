// The [[job]] tables: several training jobs sharing the scenario's cluster (docs/scenario.md,
// "Sharing a cluster"). Each job names the nodes it runs on (`nodes = [0, 1]`) or its GPUs
// (`gpus = "0-15"`, or part of each node: `gpus = "0-3,8-11"`, the same count on every node it
// touches), optionally a MIG slice of its one GPU (`mig = "3g.40gb"`: several MIG jobs may share a
// GPU while their slices fit it, 7 compute and 8 memory slices), and may change the scenario's own
// model, layout and training with `set` (the keys `--set` takes). No two jobs may share a GPU
// except as MIG slices. Each job's own scenario is validated when it runs
// (analysis/shared_cluster.h), by loading the scenario with the job's overrides; an error there
// names the job.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"
#include "scenarios/toml_text.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kJobKeys[] = {"name", "nodes", "gpus", "mig", "set"};

// "0-15,32-47" -> {0..15, 32..47}; nothing on a malformed list.
std::optional<std::vector<int>> parse_ranges(std::string_view text) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    const std::size_t dash = part.find('-');
    int lo = 0, hi = 0;
    const auto num = [](std::string_view s, int& v) {
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc{} && end == s.data() + s.size() && v >= 0;
    };
    if (dash == std::string_view::npos) {
      if (!num(part, lo)) return std::nullopt;
      hi = lo;
    } else if (!num(part.substr(0, dash), lo) || !num(part.substr(dash + 1), hi) || hi < lo || hi - lo > (1 << 20)) {
      return std::nullopt;
    }
    for (int g = lo; g <= hi; ++g) out.push_back(g);
    start = comma + 1;
  }
  return out;
}

// A `set` value as --set takes it; nothing for a table or array.
std::optional<std::string> value_text(const toml::node& v) {
  if (const auto* s = v.as_string()) return quote_str(s->get());
  if (const auto* i = v.as_integer()) return std::to_string(i->get());
  if (const auto* f = v.as_floating_point()) return toml_float(f->get());
  if (const auto* b = v.as_boolean()) return std::string(b->get() ? "true" : "false");
  return std::nullopt;
}

}  // namespace

bool Loader::read_job_nodes(Section& s, JobSpec& job) {
  const int nodes = spec_.cluster.nodes, per_node = spec_.cluster.node.gpus;
  if (s.has("nodes") && s.has("gpus")) {
    error(origin_of("job.gpus", s.find("gpus")->source()), "job '" + job.name + "' gives both nodes and gpus",
          "keep one: nodes = [0, 1] or gpus = \"0-15\"");
    return false;
  }
  if (const toml::node* n = s.find("nodes")) {
    const toml::array* a = n->as_array();
    for (std::size_t i = 0; a && i < a->size(); ++i) {
      const auto* v = (*a)[i].as_integer();
      if (!v || v->get() < 0 || v->get() >= nodes) {
        error(origin_of("job.nodes", n->source()),
              "job '" + job.name + "': nodes must list node indices from 0 to " + std::to_string(nodes - 1),
              "the cluster has " + std::to_string(nodes) + " nodes; for example: nodes = [0, 1]");
        return false;
      }
      for (int g = 0; g < per_node; ++g) job.gpus.push_back(static_cast<int>(v->get()) * per_node + g);
    }
    if (!a || a->empty()) s.wrong_type("nodes", *n, "a non-empty array of node indices", "[0, 1]");
  } else if (auto g = s.string("gpus", "\"0-15\"")) {
    const auto gpus = parse_ranges(*g);
    const KeyOrigin at = spec_.origin_of("job.gpus");
    if (!gpus || gpus->empty()) {
      error(at, "job '" + job.name + "': gpus '" + *g + "' is not a list of GPU ranges", "for example: gpus = \"0-15,32-47\"");
      return false;
    }
    for (int gpu : *gpus) {
      if (gpu / per_node >= nodes) {
        error(at, "job '" + job.name + "': GPU " + std::to_string(gpu) + " is not in the cluster",
              "the cluster has GPUs 0 to " + std::to_string(nodes * per_node - 1));
        return false;
      }
    }
    job.gpus = *gpus;
  } else {
    error(job.origin, "job '" + job.name + "' has no nodes", "add nodes = [0, 1] (node indices) or gpus = \"0-15\"");
    return false;
  }
  std::sort(job.gpus.begin(), job.gpus.end());
  job.gpus.erase(std::unique(job.gpus.begin(), job.gpus.end()), job.gpus.end());
  for (int gpu : job.gpus) job.nodes.push_back(gpu / per_node);
  job.nodes.erase(std::unique(job.nodes.begin(), job.nodes.end()), job.nodes.end());
  // A job's share of each node it touches is the same count of GPUs: its own scenario runs on
  // that many nodes of that many GPUs each (analysis/shared_cluster.cpp).
  for (int node : job.nodes) {
    const auto on = std::count_if(job.gpus.begin(), job.gpus.end(), [&](int x) { return x / per_node == node; });
    if (on * static_cast<long long>(job.nodes.size()) != static_cast<long long>(job.gpus.size())) {
      error(spec_.origin_of("job.gpus"),
            "job '" + job.name + "' uses " + std::to_string(on) + " GPU(s) of node " + std::to_string(node) +
                " but not the same number on every node it touches",
            "give the job the same number of GPUs on each of its nodes (e.g. gpus = \"0-3,8-11\"), as schedulers "
            "place a multi-node job");
      return false;
    }
  }
  return !job.gpus.empty();
}

// `mig = "3g.40gb"`: the job runs on that MIG slice of its one GPU. MIG gives no GPU-to-GPU
// path between instances (NVIDIA MIG user guide: no peer-to-peer over PCIe or NVLink), so a MIG
// job is a one-GPU job.
bool Loader::read_job_mig(Section& s, JobSpec& job) {
  const auto mig = s.string("mig", "\"3g.40gb\"");
  if (!mig) return !s.has("mig");
  const KeyOrigin at = origin_of("job.mig", s.find("mig")->source());
  if (job.gpus.size() != 1) {
    error(at, "job '" + job.name + "': a MIG job runs on one GPU, but it has " + std::to_string(job.gpus.size()),
          "MIG instances have no GPU-to-GPU path (no NVLink or PCIe peer-to-peer); give the job one GPU, "
          "e.g. gpus = \"0\", or remove mig");
    return false;
  }
  if (!gpu_) return false;
  if (auto problem = mig_profile_problem(gpu_, *mig)) {
    error(at, "job '" + job.name + "': " + problem->first, problem->second);
    return false;
  }
  job.mig = *mig;
  return true;
}

void Loader::read_job_set(Section& s, JobSpec& job) {
  const toml::table* set = s.subtable("set");
  if (!set) return;
  for (auto&& [k, v] : *set) {
    const std::string key(k.str());
    const KeyOrigin at = origin_of("job.set", v.source());
    if (key.find('.') == std::string::npos) {
      error(at, "job '" + job.name + "': set key '" + key + "' must be section.key", "for example: set = { \"parallelism.tp\" = 4 }");
      continue;
    }
    if (key.rfind("cluster.", 0) == 0 || key == "job") {
      error(at, "job '" + job.name + "': set cannot change '" + key + "'; the jobs share the scenario's cluster",
            "give the job's share of it with nodes = [...]");
      continue;
    }
    const auto text = value_text(v);
    if (!text) {
      error(at, "job '" + job.name + "': set '" + key + "' must be a string, number or boolean", "for example: \"model.preset\" = \"gpt3-13b\"");
      continue;
    }
    job.overrides.push_back(key + "=" + *text);
  }
}

// A GPU is one job's, or shared by MIG jobs whose slices fit it (7 compute, 8 memory slices).
void Loader::claim_job_gpus(const JobSpec& job, std::map<int, GpuShare>& owner) {
  for (int gpu : job.gpus) {
    GpuShare& share = owner[gpu];
    const bool whole = job.mig.empty();
    if (!share.jobs.empty() && (whole || share.whole)) {
      error(job.origin, "jobs '" + share.jobs.front() + "' and '" + job.name + "' both use GPU " + std::to_string(gpu) +
                            " (node " + std::to_string(gpu / spec_.cluster.node.gpus) + ")",
            "give each job its own GPUs, or give both a MIG slice (mig = \"3g.40gb\") of it");
      return;
    }
    share.whole = whole;
    share.jobs.push_back(job.name);
    if (whole || !gpu_) continue;
    const topology::MigSlice slice = topology::resolve_mig(*gpu_, job.mig);
    share.compute += slice.compute_slices;
    share.memory += slice.memory_slices;
    if (share.compute > 7 || share.memory > 8)
      error(job.origin, "the MIG slices on GPU " + std::to_string(gpu) + " add up to " + std::to_string(share.compute) +
                            " compute and " + std::to_string(share.memory) + " memory slices (jobs " + [&] {
                              std::string names;
                              for (const auto& n : share.jobs) names += (names.empty() ? "'" : ", '") + n + "'";
                              return names;
                            }() + "); a GPU has 7 and 8",
            "use smaller profiles (`nvidia-smi mig -lgip` lists a GPU's) or put a job on another GPU");
  }
}

void Loader::read_jobs(const toml::node* node) {
  if (node == nullptr) return;
  const toml::array* jobs = node->as_array();
  if (jobs == nullptr) {
    error(origin_of("job", node->source()), "'job' must be an array of tables", "write each job as a [[job]] table with name and nodes");
    return;
  }
  std::map<int, GpuShare> owner;  // GPU id -> the jobs on it and the MIG slices they hold
  for (const toml::node& item : *jobs) {
    const toml::table* t = item.as_table();
    if (t == nullptr) {
      error(origin_of("job", item.source()), "'job' must be an array of tables", "write each job as a [[job]] table");
      continue;
    }
    Section s(*this, t, "job", kJobKeys);
    JobSpec job;
    job.origin = origin_of("job", t->source());
    if (auto n = s.string("name", "\"pretrain\"")) job.name = *n;
    else if (!s.has("name")) error(job.origin, "a [[job]] has no name", "add name = \"pretrain\"");
    for (const JobSpec& other : spec_.jobs)
      if (!job.name.empty() && other.name == job.name) error(job.origin, "two jobs are named '" + job.name + "'", "give each [[job]] its own name");
    const bool nodes_ok = cluster_ok_ && read_job_nodes(s, job) && read_job_mig(s, job);
    read_job_set(s, job);
    s.finish();
    if (nodes_ok) claim_job_gpus(job, owner);
    spec_.jobs.push_back(std::move(job));
  }
}

}  // namespace clustersim::scenarios
