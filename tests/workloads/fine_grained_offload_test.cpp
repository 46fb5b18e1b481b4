// Fine-grained activation offloading ([training] offload_modules, Megatron-Core
// fine_grained_activation_offload.py): which saved tensors leave the device, what stays, and what
// the host copies cost in time.
#include <doctest/doctest.h>

#include "iteration_fixture.h"
#include "workloads/compute/compute_model.h"
#include "workloads/memory/activation_offload.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"
#include "workloads/training/stage_costs.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {
// Mixtral 8x7B (every layer MoE, top-2, hidden 4096, SwiGLU experts 14336 wide) on one GPU's
// worth of layout: tp 1, pp 1 (one micro-batch in flight), seq 4096, micro-batch 1.
MemoryRequest mixtral(unsigned offload, double min_elements = 1024.0 * 1024.0) {
  MemoryRequest q;
  q.model = *find_model_preset("mixtral-8x7b");
  q.parallel.dp = 8;
  q.parallel.ep = 8;
  q.training.global_batch = 8;
  q.training.micro_batch = 1;
  q.training.offload_modules = offload;
  q.training.offload_min_tensor_elements = min_elements;
  q.capacity = sim::Bytes{80.0 * 1073741824.0};
  return q;
}
}  // namespace

TEST_CASE("workloads::fine-grained offload: expert_fc1 moves the dispatched tokens of all but two groups to the host") {
  const MemoryBreakdown none = estimate_memory(mixtral(0));
  const MemoryBreakdown off = estimate_memory(mixtral(kOffloadExpertFc1));
  // fc1's input: s x b x k token-slots x hidden, bf16: 4096 x 2 x 4096 x 2 B = 64 MiB per layer;
  // 32 groups, two kept (the margin group and the one in flight).
  const double group = 4096.0 * 2 * 4096 * 2;
  CHECK(none.activations.value - off.activations.value == doctest::Approx(30.0 * group));
  CHECK(off.host.value - none.host.value == doctest::Approx(30.0 * group));
  // moe_act: fc1's output, gate and up (2 x 14336 wide per token-slot).
  const MemoryBreakdown act = estimate_memory(mixtral(kOffloadMoeAct));
  CHECK(none.activations.value - act.activations.value == doctest::Approx(30.0 * 4096 * 2 * 2 * 14336 * 2));
}

TEST_CASE("workloads::fine-grained offload: tensors below min_offloaded_tensor_size stay on the device") {
  const MemoryRequest q = mixtral(kOffloadExpertFc1 | kOffloadMoeAct);
  // fc1's input has 4096 x 2 x 4096 = 33.6 M elements, its output 234.9 M: a 100 M threshold keeps
  // the input and offloads the output.
  const OffloadGroupBytes all = fine_grained_offload_bytes(q.model, q.training, 1, false, 1.0);
  TrainingSpec big = q.training;
  big.offload_min_tensor_elements = 100e6;
  const OffloadGroupBytes some = fine_grained_offload_bytes(q.model, big, 1, false, 1.0);
  CHECK(all.moe == doctest::Approx(2.0 * 4096 * 2 * (4096 + 2 * 14336)));
  CHECK(some.moe == doctest::Approx(2.0 * 4096 * 2 * 2 * 14336));
  big.offload_min_tensor_elements = 1e9;
  CHECK(fine_grained_offload_bytes(q.model, big, 1, false, 1.0).moe == 0.0);
  CHECK(estimate_memory(mixtral(kOffloadExpertFc1, 1e9)).activations.value ==
        doctest::Approx(estimate_memory(mixtral(0)).activations.value));
  // recompute_modules "moe" keeps none of the experts' tensors: nothing to offload.
  big.offload_min_tensor_elements = 0;
  big.recompute_modules = kRecomputeMoe;
  CHECK(fine_grained_offload_bytes(q.model, big, 1, false, 1.0).moe == 0.0);
}

TEST_CASE("workloads::fine-grained offload: core_attn and attn_proj offload Q, K, V and the attention output") {
  MemoryRequest q;
  q.model = *find_model_preset("llama3-8b");  // 32 layers, 32 heads, 8 KV heads, hidden 4096
  q.model.seq_len = 8192;
  q.parallel.dp = 8;
  q.training.global_batch = 8;
  q.training.micro_batch = 1;
  const MemoryBreakdown none = estimate_memory(q);
  q.training.offload_modules = kOffloadCoreAttn | kOffloadAttnProj;
  const MemoryBreakdown off = estimate_memory(q);
  // Q 8192 x 4096, K and V 8192 x 1024 each, the output 8192 x 4096, bf16; the softmax statistics
  // (32 x 8192 fp32 = 262144 elements) are under the 1 Mi-element threshold.
  const double group = 2.0 * 8192 * (4096 + 1024 + 1024 + 4096);
  CHECK(none.activations.value - off.activations.value == doctest::Approx(30.0 * group));
  CHECK(off.host.value - none.host.value == doctest::Approx(30.0 * group));
}

TEST_CASE("workloads::fine-grained offload: a copy shows only where it outlasts the compute until the next group") {
  // 1 GB over 50 GB/s = 20 ms per group; 4 groups in a 200 ms forward (50 ms apart): hidden; in a
  // 40 ms backward (10 ms apart): 4 x 10 ms exposed.
  const OffloadExposure e = fine_grained_exposure(1e9, 4, sim::BytesPerSec{50e9}, 0.200, 0.040);
  CHECK(e.fwd_s == 0.0);
  CHECK(e.bwd_s == doctest::Approx(0.040));
  CHECK(fine_grained_exposure(0.0, 4, sim::BytesPerSec{50e9}, 0.0, 0.0).bwd_s == 0.0);
  CHECK(fine_grained_exposure(1e9, 0, sim::BytesPerSec{50e9}, 0.0, 0.0).fwd_s == 0.0);
}

TEST_CASE("workloads::plan_stage_costs: offload_modules adds the exposed copy time to the chunk's compute") {
  topology::ClusterSpec spec = testing::nodes_of("dgx-h100");
  spec.gpus = 8;
  const testing::BuiltCluster cluster(spec);
  ModelSpec model = *find_model_preset("mixtral-8x7b");
  model.layers = 4;
  TrainingSpec tr;
  tr.global_batch = 8;
  tr.micro_batch = 4;  // big groups: 4 x 4096 x 2 slots x (4096 + 2 x 14336) x 2 B = 2.4 GB each
  ParallelSpec par;
  par.dp = 8;
  par.ep = 8;
  const ParallelLayout layout{par.tp, par.dp, par.pp};
  const auto plan = [&](unsigned offload) {
    TrainingSpec t = tr;
    t.offload_modules = offload;
    const ComputeModel compute = cluster.compute(t.precision);
    CollectiveMemo memo(cluster.collectives());
    return plan_stage_costs(StageCostInputs{model, par, t, compute, layout, memo, CollectiveAlgo::Ring, 1, 1}).chunks.at(0);
  };
  const ChunkCost none = plan(0), off = plan(kOffloadExpertFc1 | kOffloadMoeAct);
  CHECK(none.offload_groups == 0);
  CHECK(off.offload_groups == 4);
  // H100 reaches the host over PCIe Gen5 x16.
  const ComputeModel compute = cluster.compute(tr.precision);
  const double link = host_link_bandwidth(cluster.gpu).value;
  CHECK(off.offload_copy_s > 0);
  CHECK(off.offload_copy_s * link == doctest::Approx(2.0 * 4 * 4096 * 2 * (4096 + 2 * 14336) *
                                                     moe_load_factor(model, compute)));
  // The exposed seconds are what the chunk's passes grew by.
  CHECK(off.offload_fwd_exposed + off.offload_bwd_exposed > 0);  // PCIe cannot hide 2.4 GB behind one small layer
  CHECK(off.fwd_compute - none.fwd_compute == doctest::Approx(off.offload_fwd_exposed));
  CHECK(off.bwd_compute - none.bwd_compute == doctest::Approx(off.offload_bwd_exposed));
  // The windows are the layers' passes; the chunk's totals here add the embedding and the output
  // layer, so the formula over them gives a little less, and no window gives more than 4 copies.
  const OffloadExposure e = fine_grained_exposure(off.offload_copy_s * link, 4, sim::BytesPerSec{link},
                                                  none.fwd_compute + none.fwd_comm, none.bwd_compute + none.bwd_comm);
  CHECK(off.offload_fwd_exposed >= e.fwd_s);
  CHECK(off.offload_bwd_exposed >= e.bwd_s);
  CHECK(off.offload_fwd_exposed < 4 * off.offload_copy_s);
  CHECK(off.offload_bwd_exposed < 4 * off.offload_copy_s);
}
