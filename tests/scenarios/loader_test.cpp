#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/loader.h"
#include "scenarios/show_config.h"

using namespace clustersim;
using namespace clustersim::scenarios;
namespace fs = std::filesystem;

namespace {

// Error messages name files as passed in; tests pass paths relative to the repository root.
struct AtSourceRoot {
  AtSourceRoot() { fs::current_path(CLUSTERSIM_SOURCE_DIR); }
};

std::string format_error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    (void)parse_scenario(text, "s.toml", overrides);
  } catch (const ScenarioError& e) {
    return e.format();
  }
  return "(no error)";
}

void check_same(const ScenarioSpec& a, const ScenarioSpec& b) {
  CHECK(a.name == b.name);
  const auto &ca = a.cluster, &cb = b.cluster;
  CHECK(ca.node.id == cb.node.id);
  CHECK(ca.node.gpu == cb.node.gpu);
  CHECK(ca.node.gpus == cb.node.gpus);
  CHECK(ca.node.intra == cb.node.intra);
  CHECK(ca.node.pcie_gen == cb.node.pcie_gen);
  CHECK(ca.node.gpus_per_pcie_switch == cb.node.gpus_per_pcie_switch);
  CHECK(ca.node.sockets == cb.node.sockets);
  CHECK(ca.node.nic == cb.node.nic);
  CHECK(ca.node.nics == cb.node.nics);
  CHECK(ca.nodes == cb.nodes);
  CHECK(ca.resolved_fabric() == cb.resolved_fabric());  // the resolved TOML spells the default out
  CHECK(ca.oversubscription == cb.oversubscription);
  CHECK(ca.resolved_routing() == cb.resolved_routing());
  CHECK(ca.used_gpus() == cb.used_gpus());
  CHECK(ca.power_limit_w == cb.power_limit_w);
  CHECK(ca.mig == cb.mig);
  CHECK(ca.tf32 == cb.tf32);
  CHECK(ca.memory_gib == cb.memory_gib);
  CHECK(ca.hbm_bandwidth_gbps == cb.hbm_bandwidth_gbps);
  const auto &ma = a.model, &mb = b.model;
  CHECK(ma.id == mb.id);
  CHECK(ma.layers == mb.layers);
  CHECK(ma.hidden == mb.hidden);
  CHECK(ma.heads == mb.heads);
  CHECK(ma.kv_heads == mb.kv_heads);
  CHECK(ma.ffn_hidden == mb.ffn_hidden);
  CHECK(ma.seq_len == mb.seq_len);
  CHECK(ma.vocab == mb.vocab);
  CHECK(ma.mlp == mb.mlp);
  CHECK(ma.norm == mb.norm);
  CHECK(ma.tied_embeddings == mb.tied_embeddings);
  CHECK(ma.flash_attention == mb.flash_attention);
  CHECK(ma.trains_with_dropout() == mb.trains_with_dropout());
  CHECK(ma.experts == mb.experts);
  CHECK(ma.experts_per_token == mb.experts_per_token);
  CHECK(ma.moe_ffn_hidden == mb.moe_ffn_hidden);
  CHECK(ma.shared_experts == mb.shared_experts);
  CHECK(ma.first_dense_layers == mb.first_dense_layers);
  CHECK(ma.moe_layer_freq == mb.moe_layer_freq);
  CHECK(ma.capacity_factor == mb.capacity_factor);
  CHECK(a.parallel.ep == b.parallel.ep);
  const auto &pa = a.parallel, &pb = b.parallel;
  CHECK(pa.tp == pb.tp);
  CHECK(pa.pp == pb.pp);
  CHECK(pa.dp == pb.dp);
  CHECK(pa.cp == pb.cp);
  CHECK(pa.cp_comm == pb.cp_comm);
  CHECK(pa.virtual_stages == pb.virtual_stages);
  CHECK(pa.schedule == pb.schedule);
  CHECK(pa.sequence_parallel == pb.sequence_parallel);
  CHECK(pa.zero == pb.zero);
  CHECK(pa.distributed_optimizer == pb.distributed_optimizer);
  CHECK(pa.first_stage_layers == pb.first_stage_layers);
  CHECK(pa.last_stage_layers == pb.last_stage_layers);
  CHECK(pa.zero3_gather == pb.zero3_gather);
  const auto &ta = a.training, &tb = b.training;
  CHECK(ta.global_batch == tb.global_batch);
  CHECK(ta.micro_batch == tb.micro_batch);
  CHECK(ta.precision == tb.precision);
  CHECK(ta.optimizer == tb.optimizer);
  CHECK(ta.recompute == tb.recompute);
  CHECK(ta.grad_dtype == tb.grad_dtype);
  CHECK(ta.optimizer_dtype == tb.optimizer_dtype);
  CHECK(ta.iterations == tb.iterations);
  CHECK(ta.tokens == tb.tokens);
  CHECK(a.sync.algorithm == b.sync.algorithm);
  CHECK(a.sync.bucket_mb == b.sync.bucket_mb);
  CHECK(a.sync.overlap == b.sync.overlap);
  CHECK(a.sync.param_gather_overlapped(a.parallel) == b.sync.param_gather_overlapped(b.parallel));
  CHECK(a.sync.tp_comm_overlap == b.sync.tp_comm_overlap);
  CHECK(a.sync.fsdp_prefetch == b.sync.fsdp_prefetch);
  CHECK(a.model_constants == b.model_constants);
  CHECK(a.cost.gpu_hour_usd == b.cost.gpu_hour_usd);
  CHECK(a.cost.has_gpu_hour == b.cost.has_gpu_hour);
  CHECK(a.cost.electricity_usd_per_kwh == b.cost.electricity_usd_per_kwh);
}

std::vector<std::string> library_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(CLUSTERSIM_SOURCE_DIR) / "scenarios/library"))
    if (e.path().extension() == ".toml") files.push_back("scenarios/library/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Every key of docs/scenario.md set to a value other than its default.
constexpr const char* kAllKeys = R"(
name = "every key"

[cluster]
nodes = 4
fabric = "rail-optimized"
oversubscription = 2.0
routing = "flow-hash"
gpus = 16

[cluster.node]
gpu = "a100-sxm4-40gb"
gpus = 8
intra = "nvswitch"
pcie = "gen3"
gpus_per_pcie_switch = 4
sockets = 1
nic = "roce-200"
nics = 4

[cluster.gpu_overrides]
power_limit_w = 250
mig = "3g.20gb"
tf32 = false

[model]
layers = 24
hidden = 2048
heads = 16
kv_heads = 4
ffn_hidden = 5632
seq_len = 4096
vocab = 32000
mlp = "swiglu"
norm = "rmsnorm"
tied_embeddings = false
flash_attention = false
dropout = true

[parallelism]
tp = 2
pp = 2
dp = 4
virtual_stages = 3
schedule = "interleaved"
sequence_parallel = true
zero = 2
distributed_optimizer = true
first_stage_layers = 9
last_stage_layers = 15
zero3_gather = "module"

[training]
global_batch = 64
micro_batch = 2
precision = "fp16"
optimizer = "sgd-momentum"
recompute = "full"
grad_dtype = "bf16"
optimizer_dtype = "fp16"
iterations = 3
tokens = 1.5e12

[sync]
algorithm = "hierarchical"
bucket_mb = 50.5
overlap = false

[model_constants]
gemm_efficiency_max = 0.75

[cost]
gpu_hour_usd = 1.75
electricity_usd_per_kwh = 0.2
)";

}  // namespace

TEST_CASE("scenarios::load_scenario: every library scenario loads and is consistent") {
  AtSourceRoot root;
  const auto files = library_files();
  CHECK(files.size() >= 7);
  for (const auto& f : files) {
    CAPTURE(f);
    try {
      const ScenarioSpec s = load_scenario(f);
      CHECK(s.parallel.tp * s.parallel.cp * s.parallel.pp * s.parallel.dp == s.cluster.used_gpus());
      CHECK(s.training.global_batch % (s.training.micro_batch * s.parallel.dp) == 0);
      CHECK(s.model.heads % s.parallel.tp == 0);
      if (!s.parallel.uneven_stages()) CHECK(s.model.layers % s.parallel.pp == 0);
      CHECK(!s.name.empty());
    } catch (const ScenarioError& e) {
      FAIL(e.format());
    }
  }
}

TEST_CASE("scenarios::load_scenario: the flagship is GPT-3 175B on 1024 A100 with tp 8, pp 8, dp 16") {
  AtSourceRoot root;
  const ScenarioSpec s = load_scenario("scenarios/library/gpt3-175b-dgx-a100.toml");
  CHECK(s.cluster.node.id == "dgx-a100-80gb");
  CHECK(s.cluster.used_gpus() == 1024);
  CHECK(s.model.id == "gpt3-175b");
  CHECK(s.parallel.tp == 8);
  CHECK(s.parallel.pp == 8);
  CHECK(s.parallel.dp == 16);
  CHECK(s.training.global_batch == 1536);
  CHECK(s.training.micro_batches_per_replica(s.parallel.dp) == 96);
  CHECK(s.training.precision == topology::Precision::Fp16);
  CHECK(s.training.tokens == 300e9);
  CHECK(s.origins.at("parallelism.tp").where.line > 0);
  CHECK(s.origins.at("parallelism.tp").source_line == "tp = 8");
}

TEST_CASE("scenarios::show_config: every library scenario round-trips through its resolved TOML") {
  AtSourceRoot root;
  for (const auto& f : library_files()) {
    CAPTURE(f);
    const ScenarioSpec a = load_scenario(f);
    const std::string shown = show_config(a);
    try {
      const ScenarioSpec b = parse_scenario(shown, f);
      check_same(a, b);
      CHECK(show_config(b) == shown);
    } catch (const ScenarioError& e) {
      const std::string message = e.format() + "\n" + shown;
      FAIL(message);
    }
  }
}

TEST_CASE("scenarios::parse_scenario: every key is read and round-trips through show_config") {
  const ScenarioSpec a = parse_scenario(kAllKeys, "all.toml");
  CHECK(a.name == "every key");
  CHECK(a.cluster.nodes == 4);
  CHECK(a.cluster.fabric == topology::Fabric::RailOptimized);
  CHECK(a.cluster.oversubscription == 2.0);
  CHECK(a.cluster.routing == topology::FabricRouting::FlowHash);
  CHECK(a.cluster.gpus == 16);
  CHECK(a.cluster.node.id == "custom");
  CHECK(a.cluster.node.gpu == "a100-sxm4-40gb");
  CHECK(a.cluster.node.intra == topology::IntraKind::NvSwitch);
  CHECK(a.cluster.node.pcie_gen == 3);
  CHECK(a.cluster.node.gpus_per_pcie_switch == 4);
  CHECK(a.cluster.node.sockets == 1);
  CHECK(a.cluster.node.nic == "roce-200");
  CHECK(a.cluster.node.nics == 4);
  CHECK(a.cluster.power_limit_w == 250);
  CHECK(a.cluster.mig == "3g.20gb");
  CHECK(a.cluster.tf32 == false);
  CHECK(a.model.id == "custom");
  CHECK(a.model.layers == 24);
  CHECK(a.model.hidden == 2048);
  CHECK(a.model.heads == 16);
  CHECK(a.model.kv_heads == 4);
  CHECK(a.model.ffn_hidden == 5632);
  CHECK(a.model.seq_len == 4096);
  CHECK(a.model.vocab == 32000);
  CHECK(a.model.mlp == workloads::MlpKind::SwiGlu);
  CHECK(a.model.norm == workloads::NormKind::RmsNorm);
  CHECK(a.model.tied_embeddings == false);
  CHECK(a.model.flash_attention == false);
  CHECK(a.parallel.tp == 2);
  CHECK(a.parallel.pp == 2);
  CHECK(a.parallel.dp == 4);
  CHECK(a.parallel.virtual_stages == 3);
  CHECK(a.parallel.schedule == workloads::Schedule::Interleaved);
  CHECK(a.parallel.sequence_parallel == true);
  CHECK(a.parallel.zero == 2);
  CHECK(a.parallel.distributed_optimizer == true);
  CHECK(a.parallel.first_stage_layers == 9);
  CHECK(a.parallel.last_stage_layers == 15);
  CHECK(a.training.global_batch == 64);
  CHECK(a.training.micro_batch == 2);
  CHECK(a.training.precision == topology::Precision::Fp16);
  CHECK(a.training.optimizer == workloads::Optimizer::SgdMomentum);
  CHECK(a.training.recompute == workloads::Recompute::Full);
  CHECK(a.training.iterations == 3);
  CHECK(a.training.tokens == 1.5e12);
  CHECK(a.sync.algorithm == workloads::CollectiveAlgo::Hierarchical);
  CHECK(a.sync.bucket_mb == 50.5);
  CHECK(a.sync.overlap == false);
  CHECK(a.model_constants.at("gemm_efficiency_max") == 0.75);
  CHECK(a.cost.has_gpu_hour);
  CHECK(a.cost.gpu_hour_usd == 1.75);
  CHECK(a.cost.electricity_usd_per_kwh == 0.2);

  const ScenarioSpec b = parse_scenario(show_config(a), "all.toml");
  check_same(a, b);
}

TEST_CASE("scenarios::parse_scenario: absent keys take the documented defaults") {
  const ScenarioSpec s = parse_scenario("[cluster]\nnode = \"hgx-h100-8x\"\n[model]\npreset = \"gpt3-1.3b\"\n", "dir/min.toml");
  CHECK(s.name == "min");
  CHECK(s.cluster.nodes == 1);
  CHECK_FALSE(s.cluster.fabric.has_value());
  CHECK(s.cluster.resolved_fabric() == topology::Fabric::RailOptimized);  // 8 NICs per node
  CHECK(s.cluster.oversubscription == 1.0);
  CHECK(s.cluster.gpus == 0);
  CHECK(s.cluster.used_gpus() == 8);
  CHECK(s.parallel.tp == 1);
  CHECK(s.parallel.pp == 1);
  CHECK(s.parallel.dp == 8);
  CHECK(s.dp_derived);
  CHECK(s.parallel.schedule == workloads::Schedule::OneFOneB);
  CHECK(s.parallel.zero == 0);
  CHECK(s.training.micro_batch == 1);
  CHECK(s.training.global_batch == 8);
  CHECK(s.training.precision == topology::Precision::Bf16);
  CHECK(s.training.optimizer == workloads::Optimizer::Adam);
  CHECK(s.training.recompute == workloads::Recompute::None);
  CHECK(s.training.iterations == 1);
  CHECK(s.training.tokens == 0.0);
  CHECK(s.sync.algorithm == workloads::CollectiveAlgo::Ring);
  CHECK(s.sync.bucket_mb == 25.0);
  CHECK(s.sync.overlap);
  CHECK(s.model_constants.empty());
  CHECK(!s.cost.has_gpu_hour);
  CHECK(s.cost.electricity_usd_per_kwh == 0.12);
  CHECK(s.origins.count("parallelism.tp") == 0);
}

TEST_CASE("scenarios::parse_scenario: a model described by fields derives kv_heads and ffn_hidden") {
  const ScenarioSpec gelu = parse_scenario(
      "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\nlayers = 4\nhidden = 512\nheads = 8\n", "m.toml");
  CHECK(gelu.model.kv_heads == 8);
  CHECK(gelu.model.ffn_hidden == 2048);
  const ScenarioSpec swiglu = parse_scenario(
      "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\nlayers = 4\nhidden = 4096\nheads = 32\nmlp = \"swiglu\"\n", "m.toml");
  CHECK(swiglu.model.ffn_hidden == 11008);  // Llama 2 7B's intermediate size
}

TEST_CASE("scenarios::parse_scenario: a preset field that is overridden marks the model custom") {
  const ScenarioSpec same = parse_scenario(
      "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\npreset = \"gpt3-1.3b\"\nlayers = 24\n", "m.toml");
  CHECK(same.model.id == "gpt3-1.3b");
  const ScenarioSpec changed = parse_scenario(
      "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\npreset = \"gpt3-1.3b\"\nlayers = 12\n", "m.toml");
  CHECK(changed.model.id == "custom");
  CHECK(changed.model.layers == 12);
  CHECK(changed.model.hidden == 2048);
  CHECK(changed.model_preset == "gpt3-1.3b");
}

TEST_CASE("scenarios::parse_scenario: virtual_stages > 1 selects the interleaved schedule") {
  const ScenarioSpec s = parse_scenario(
      "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\npreset = \"gpt3-1.3b\"\n"
      "[parallelism]\npp = 4\nvirtual_stages = 2\n[training]\nglobal_batch = 16\n", "m.toml");
  CHECK(s.parallel.schedule == workloads::Schedule::Interleaved);
  CHECK(s.parallel.dp == 2);
  const ScenarioSpec d = parse_scenario(
      "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\npreset = \"gpt3-1.3b\"\n"
      "[parallelism]\npp = 4\nvirtual_stages = 2\n", "m.toml");
  CHECK(d.training.global_batch == 8);  // default: pp micro-batches per replica
}

TEST_CASE("scenarios::parse_scenario: V100 defaults to fp16 because it has no bf16") {
  const ScenarioSpec s = parse_scenario(
      "[cluster.node]\ngpu = \"v100-sxm2-32gb\"\nintra = \"nvswitch\"\n[model]\npreset = \"gpt3-1.3b\"\n", "v.toml");
  CHECK(s.training.precision == topology::Precision::Fp16);
}

TEST_CASE("scenarios::parse_scenario: tp larger than a node is allowed") {
  const ScenarioSpec s = parse_scenario(
      "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 2\n[model]\npreset = \"gpt3-175b\"\n[parallelism]\ntp = 16\n", "t.toml");
  CHECK(s.parallel.tp == 16);
  CHECK(s.parallel.dp == 1);
}

TEST_CASE("scenarios::--set: overrides a key and records where the value came from") {
  AtSourceRoot root;
  const ScenarioSpec s = load_scenario("scenarios/library/gpt3-175b-dgx-a100.toml",
                                       {"parallelism.tp=4", "parallelism.dp=32", "training.precision=bf16",
                                        "sync.algorithm=\"tree\"", "training.tokens=1e12", "name=my run"});
  CHECK(s.parallel.tp == 4);
  CHECK(s.parallel.dp == 32);
  CHECK(s.training.precision == topology::Precision::Bf16);
  CHECK(s.sync.algorithm == workloads::CollectiveAlgo::Tree);
  CHECK(s.training.tokens == 1e12);
  CHECK(s.name == "my run");
  CHECK(s.origins.at("parallelism.tp").where.file == "--set parallelism.tp=4");
  CHECK(s.origins.at("parallelism.pp").where.file == "scenarios/library/gpt3-175b-dgx-a100.toml");
}

TEST_CASE("scenarios::--set: can change one field of a node preset and add a missing section") {
  AtSourceRoot root;
  const ScenarioSpec s = load_scenario("scenarios/library/gpt3-175b-dgx-a100.toml",
                                       {"cluster.node.nics=4", "cost.gpu_hour_usd=1.5"});
  CHECK(s.cluster.node.nics == 4);
  CHECK(s.cluster.node.gpu == "a100-sxm4-80gb");
  CHECK(s.cluster.node.id == "custom");
  CHECK(s.node_preset == "dgx-a100-80gb");
  CHECK(s.cost.has_gpu_hour);
  CHECK(s.cost.gpu_hour_usd == 1.5);
}

TEST_CASE("scenarios::--set: a bad override is validated and the error names the override") {
  const std::string base = "[cluster]\nnode = \"hgx-h100-8x\"\n[model]\npreset = \"gpt3-1.3b\"\n";
  CHECK(format_error_of(base, {"parallelism.tp=abc"}) ==
        "--set parallelism.tp=abc: error: 'tp' in [parallelism] must be an integer, not a string\n"
        "    hint: for example: tp = 8\n");
  CHECK(format_error_of(base, {"sync.bucket_mb=-1"}) ==
        "--set sync.bucket_mb=-1: error: 'bucket_mb' in [sync] must be greater than 0, got -1\n"
        "    hint: for example: bucket_mb = 25\n");
  CHECK(format_error_of(base, {"sync.bukcet_mb=5"}) ==
        "--set sync.bukcet_mb=5: error: unknown key 'bukcet_mb' in [sync]; did you mean 'bucket_mb'?\n"
        "    hint: valid keys in [sync]: algorithm, bucket_mb, bucket_params, bucketing, overlap, overlap_grad_reduce, overlap_param_gather, "
        "tp_comm_overlap, fsdp_prefetch, zero3_impl, offload_optimizer, offload_delayed_update, fp8_param_gather, "
        "fp8_amax_reduction, tp_async_dgrad_allreduce\n");
  CHECK(format_error_of(base, {"parallelism.tp=3"}).rfind("--set parallelism.tp=3: error: tp = 3 does not divide heads = 16", 0) == 0);
  CHECK(format_error_of(base, {"tp"}) ==
        "--set tp: error: an override must look like section.key=value\n"
        "    hint: for example: --set parallelism.tp=4\n");
  CHECK(format_error_of(base, {"model.preset.x=1"}).rfind("--set model.preset.x=1: error: 'model.preset' is not a table", 0) == 0);
}

TEST_CASE("scenarios::parse_scenario: all errors of a scenario are reported together, in file order") {
  AtSourceRoot root;
  try {
    (void)load_scenario("tests/scenarios/bad/multiple-errors.toml");
    FAIL("expected a ScenarioError");
  } catch (const ScenarioError& e) {
    REQUIRE(e.diagnostics().size() == 8);
    int last_line = 0;
    for (const auto& d : e.diagnostics()) {
      CHECK(d.where.file == "tests/scenarios/bad/multiple-errors.toml");
      CHECK(d.where.line >= last_line);
      last_line = d.where.line;
    }
  }
}

TEST_CASE("scenarios::model_constants: include is read relative to the scenario and inline values win") {
  AtSourceRoot root;
  const ScenarioSpec s = load_scenario("tests/scenarios/data/with-constants.toml");
  CHECK(s.constants_include == "tests/scenarios/data/constants.toml");
  CHECK(s.model_constants.at("gemm_efficiency_max") == 0.9);
  CHECK(s.model_constants.at("gemm_half_size_flops") == 2.5e9);
  CHECK(s.model_constants.at("nic_efficiency") == 1.0);
  CHECK(s.origins.at("model_constants.gemm_half_size_flops").where.file == "tests/scenarios/data/constants.toml");
}

TEST_CASE("scenarios::check_model_constant_names: unknown names are errors at their line with a suggestion") {
  AtSourceRoot root;
  const ScenarioSpec s = load_scenario("tests/scenarios/data/with-constants.toml");
  constexpr std::array<std::string_view, 3> known{"gemm_efficiency_max", "gemm_half_size_flops", "nic_efficiency"};
  CHECK_NOTHROW(check_model_constant_names(s, known));
  constexpr std::array<std::string_view, 2> fewer{"gemm_efficiency_max", "gemm_half_size_flop"};
  try {
    check_model_constant_names(s, fewer);
    FAIL("expected a ScenarioError");
  } catch (const ScenarioError& e) {
    CHECK(e.format() ==
          "tests/scenarios/data/constants.toml:3:24: error: unknown model constant 'gemm_half_size_flops'; did you mean 'gemm_half_size_flop'?\n"
          "    gemm_half_size_flops = 2.5e9\n"
          "                           ^\n"
          "    hint: known constants: gemm_efficiency_max, gemm_half_size_flop\n"
          "tests/scenarios/data/with-constants.toml:10:18: error: unknown model constant 'nic_efficiency'\n"
          "    nic_efficiency = 1\n"
          "                     ^\n"
          "    hint: known constants: gemm_efficiency_max, gemm_half_size_flop\n");
  }
}

TEST_CASE("scenarios::parse_scenario: hf_config imports a Hugging Face config relative to the scenario") {
  AtSourceRoot root;
  const ScenarioSpec s = load_scenario("tests/scenarios/data/with-hf-config.toml");
  CHECK(s.hf_config == "tests/scenarios/data/llama-tiny-config.json");
  CHECK(s.model.layers == 8);
  CHECK(s.model.hidden == 1024);
  CHECK(s.model.kv_heads == 4);
  CHECK(s.model.ffn_hidden == 2816);
  CHECK(s.model.mlp == workloads::MlpKind::SwiGlu);
  CHECK(s.model.seq_len == 1024);
}

TEST_CASE("scenarios::load_scenario: a missing file is a ScenarioError naming the path") {
  CHECK_THROWS_AS((void)load_scenario("no/such/file.toml"), ScenarioError);
}

TEST_CASE("scenarios::parse_scenario: malformed input of any shape is a ScenarioError, never a crash") {
  const std::string ok_model = "\n[model]\npreset = \"gpt3-125m\"\n";
  const std::vector<std::string> inputs = {
      "",
      "x",
      "name = 5\n[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model,
      "cluster = 5\nmodel = [1, 2]\n",
      "[cluster]\nnode = 3" + ok_model,
      "[cluster]\nnode = [\"dgx-a100-80gb\"]" + ok_model,
      "[cluster]\nnode = { gpu = 1 }" + ok_model,
      "[cluster]\nnodes = 2" + ok_model,
      "[cluster.node]\ngpu = \"rtx-4090\"\nintra = \"nvswitch\"" + ok_model,
      "[cluster.node]\ngpu = \"a100-pcie-40gb\"\ngpus = 3\nintra = \"nvlink-bridge\"" + ok_model,
      "[cluster.node]\ngpu = \"a100-pcie-40gb\"\ngpus = 6\nsockets = 4" + ok_model,
      "[cluster.node]\npreset = \"nope\"\ngpu = \"nope\"" + ok_model,
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[cluster.gpu_overrides]\nmig = \"9g.1gb\"" + ok_model,
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[cluster.gpu_overrides]\nmig = \"7g.200gb\"" + ok_model,
      "[cluster]\nnode = \"2x-rtx4090-pcie4\"\n[cluster.gpu_overrides]\nmig = \"1g.10gb\"" + ok_model,
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[cluster.gpu_overrides]\npower_limit_w = 1000" + ok_model,
      "[cluster]\nnode = \"dgx-a100-80gb\"\ngpus = 0\noversubscription = 0.5" + ok_model,
      "[cluster]\nnode = \"dgx-a100-80gb\"\nrouting = \"adaptive\"" + ok_model,
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\nlayers = 0\nhidden = 100\nheads = 7\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\nhidden = 128\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\nlayers = 2\nhidden = 128\nheads = 8\nkv_heads = 3\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\npreset = \"gpt3-125m\"\nhf_config = \"x.json\"\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"\n[model]\nhf_config = \"does/not/exist.json\"\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[parallelism]\ntp = 99999999999\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[parallelism]\nschedule = \"interleaved\"\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[parallelism]\nvirtual_stages = 2\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[parallelism]\npp = 4\nvirtual_stages = 2\nschedule = \"gpipe\"\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[parallelism]\ntp = 16\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[training]\ntokens = inf\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[training]\ntokens = nan\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[model_constants]\ninclude = \"missing.toml\"\nx = \"y\"\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[cost]\ngpu_hour_usd = -1\nfoo = 1\n",
      "[cluster]\nnode = \"dgx-a100-80gb\"" + ok_model + "[sync]\nalgorithm = 3\n",
  };
  for (const auto& text : inputs) {
    CAPTURE(text);
    CHECK_THROWS_AS((void)parse_scenario(text, "s.toml"), ScenarioError);
  }
}

TEST_CASE("scenarios::[sync] overlap keys: the frameworks' defaults, the older name, and --set over the file") {
  const std::string base = "[cluster]\nnode = \"dgx-h100\"\n[model]\npreset = \"llama3-8b\"\n"
                           "[parallelism]\ntp = 2\nsequence_parallel = true\n";
  const ScenarioSpec d = parse_scenario(base, "s.toml");
  CHECK(d.sync.overlap);               // overlap_grad_reduce: DDP and the NeMo recipes overlap
  CHECK(!d.sync.overlap_param_gather.has_value());
  CHECK(!d.sync.param_gather_overlapped(d.parallel));  // no distributed optimizer: gathered after the step
  CHECK(!d.sync.tp_comm_overlap);      // Megatron-LM's --tp-comm-overlap is opt-in
  CHECK(d.sync.fsdp_prefetch);         // PyTorch FSDP prefetches by default
  const ScenarioSpec dist = parse_scenario(base + "distributed_optimizer = true\n", "s.toml");
  CHECK(dist.sync.param_gather_overlapped(dist.parallel));  // Megatron/NeMo recipes with the distributed optimizer
  const ScenarioSpec off = parse_scenario(base + "distributed_optimizer = true\n[sync]\noverlap_param_gather = false\n"
                                                 "overlap_grad_reduce = false\ntp_comm_overlap = true\nfsdp_prefetch = false\n",
                                          "s.toml");
  CHECK(!off.sync.param_gather_overlapped(off.parallel));
  CHECK(!off.sync.overlap);
  CHECK(off.sync.tp_comm_overlap);
  CHECK(!off.sync.fsdp_prefetch);
  // The older name and the new one agree, or the command line overrides the file's.
  CHECK(!parse_scenario(base + "[sync]\noverlap = false\n", "s.toml").sync.overlap);
  CHECK(!parse_scenario(base + "[sync]\noverlap = true\n", "s.toml", {"sync.overlap_grad_reduce=false"}).sync.overlap);
  CHECK(parse_scenario(base + "[sync]\noverlap_grad_reduce = false\n", "s.toml", {"sync.overlap=true"}).sync.overlap);
  CHECK(format_error_of(base + "[sync]\noverlap = true\noverlap_grad_reduce = false\n").find(
            "overlap_grad_reduce = false contradicts overlap = true") != std::string::npos);
  // Resolved values are shown.
  const std::string shown = show_config(dist);
  CHECK(shown.find("overlap_param_gather = true\n") != std::string::npos);
  CHECK(shown.find("tp_comm_overlap = false\n") != std::string::npos);
}

TEST_CASE("scenarios::[sync] tp_comm_overlap needs sequence parallelism, except with nothing to overlap (tp = 1)") {
  const std::string base = "[cluster]\nnode = \"dgx-h100\"\n[model]\npreset = \"llama3-8b\"\n";
  CHECK(format_error_of(base + "[parallelism]\ntp = 2\n", {"sync.tp_comm_overlap=true"}) ==
        "--set sync.tp_comm_overlap=true: error: tp_comm_overlap = true needs sequence parallelism, but [parallelism] "
        "sequence_parallel = false\n"
        "    hint: Transformer Engine overlaps the sequence-parallel all-gathers and reduce-scatters with their GEMMs: set "
        "[parallelism] sequence_parallel = true, or tp_comm_overlap = false\n");
  CHECK(format_error_of(base + "[parallelism]\ntp = 1\n", {"sync.tp_comm_overlap=true"}) == "(no error)");
}

TEST_CASE("scenarios::parse_scenario: the memory keys (dropout, zero3_gather, grad_dtype, optimizer_dtype) parse") {
  const std::string base = "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 1\n[model]\npreset = \"gpt3-1.3b\"\n";
  const ScenarioSpec defaults = parse_scenario(base, "s.toml");
  CHECK(defaults.model.trains_with_dropout());  // inferred: GELU
  CHECK(defaults.model.id == "gpt3-1.3b");
  CHECK(defaults.parallel.zero3_gather == workloads::Zero3Gather::Block);
  CHECK(defaults.training.grad_dtype == workloads::StateDtype::Fp32);
  CHECK(defaults.training.optimizer_dtype == workloads::StateDtype::Fp32);
  const ScenarioSpec s = parse_scenario(base + "dropout = false\n[parallelism]\nzero = 3\nzero3_gather = \"module\"\n"
                                               "[training]\ngrad_dtype = \"bf16\"\noptimizer_dtype = \"bf16\"\n",
                                        "s.toml");
  CHECK_FALSE(s.model.trains_with_dropout());
  CHECK(s.model.id == "custom");
  CHECK(s.parallel.zero3_gather == workloads::Zero3Gather::Module);
  CHECK(s.training.grad_dtype == workloads::StateDtype::Bf16);
  CHECK(s.training.optimizer_dtype == workloads::StateDtype::Bf16);
  // show_config spells every one out, and re-parses to the same values.
  const std::string shown = show_config(s);
  CHECK(shown.find("dropout = false") != std::string::npos);
  CHECK(shown.find("zero3_gather = \"module\"") != std::string::npos);
  CHECK(shown.find("grad_dtype = \"bf16\"") != std::string::npos);
  check_same(s, parse_scenario(shown, "s.toml"));
}

TEST_CASE("scenarios::parse_scenario: bad memory-key values are errors at the key with the valid values") {
  const std::string base = "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 1\n[model]\npreset = \"gpt3-1.3b\"\n";
  const std::string gather = format_error_of(base + "[parallelism]\nzero = 3\nzero3_gather = \"deepspeed\"\n");
  CHECK(gather.find("s.toml:8:") != std::string::npos);
  CHECK(gather.find("unknown value \"deepspeed\" for 'zero3_gather' in [parallelism]") != std::string::npos);
  CHECK(gather.find("hint: valid values: \"block\", \"module\"") != std::string::npos);
  const std::string grad = format_error_of(base + "[training]\ngrad_dtype = \"fp8\"\n");
  CHECK(grad.find("s.toml:7:") != std::string::npos);
  CHECK(grad.find("hint: valid values: \"fp32\", \"bf16\", \"fp16\"") != std::string::npos);
  const std::string dropout = format_error_of(base + "dropout = 0.1\n");
  CHECK(dropout.find("s.toml:6:") != std::string::npos);
  CHECK(dropout.find("dropout") != std::string::npos);
}

TEST_CASE("scenarios::check_batch: a global_batch hint never suggests a value the key cannot take") {
  // Issue #14 item 8: 2147483647 over micro_batch * dp = 2 used to suggest "2147483646 or
  // 2147483648": the second is past the key's int range and the first is refused by the work
  // budget (docs/cli.md, Limits). Every suggestion now passes the loader, so neither is offered.
  const std::string base = "[cluster]\nnode = \"dgx-a100-80gb\"\nnodes = 1\n[model]\npreset = \"gpt3-1.3b\"\n"
                           "[parallelism]\ntp = 4\ndp = 2\n[training]\nmicro_batch = 1\nglobal_batch = ";
  const std::string error = format_error_of(base + "2147483647\n");
  CHECK(error.find("2147483646") == std::string::npos);
  CHECK(error.find("2147483648") == std::string::npos);
  CHECK(error.find("use a multiple of micro_batch * dp = 2 that the other checks allow") != std::string::npos);
  CHECK(format_error_of(base + "2147483646\n").find("not divisible") == std::string::npos);
  // Both neighbours when both fit.
  CHECK(format_error_of(base + "9\n").find("use global_batch = 8, 10") != std::string::npos);
}
