// Activation CPU offloading ([training] activation_offload_layers, Megatron-Core
// cpu_offloading_num_layers): what leaves the GPU, what the copies cost, and that Megatron-Bridge's
// GB200 Llama 3 70B Megatron-FSDP recipe fits only with it.
#include <doctest/doctest.h>

#include "topology/catalog.h"
#include "workloads/memory/activation_offload.h"
#include "workloads/memory/fit.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"

using namespace clustersim::workloads;
using clustersim::sim::Bytes;
using clustersim::sim::BytesPerSec;

namespace {
// Megatron-Bridge 25.11, Llama3-70B, GB200 FP8-CS, 64 GPUs: tp 1, Megatron-FSDP over 64, mbs 2,
// GBS 256 (training_megatron_bridge.csv:490); LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 offloads
// 40 layers.
MemoryRequest gb200_llama3_70b_fsdp(int offload) {
  MemoryRequest q;
  q.model = *find_model_preset("llama3-70b");
  q.model.seq_len = 8192;
  q.parallel.dp = 64;
  q.parallel.zero = 3;
  q.training.global_batch = 256;
  q.training.micro_batch = 2;
  q.training.precision = clustersim::topology::Precision::Fp8;
  q.training.grad_dtype = StateDtype::Bf16;
  q.training.activation_offload_layers = offload;
  q.capacity = Bytes{186.0 * 1073741824.0};  // the catalog's 186 GiB (gpu_memory_capacity)
  return q;
}
}  // namespace

TEST_CASE("workloads::activation offload: a chunk keeps its last layer and offloads at most the rest") {
  CHECK(offloaded_layers_in_chunk(80, 40) == 40);
  CHECK(offloaded_layers_in_chunk(80, 79) == 79);
  CHECK(offloaded_layers_in_chunk(10, 40) == 9);  // a pipeline chunk of 10 layers
  CHECK(offloaded_layers_in_chunk(1, 5) == 0);
  CHECK(offloaded_layers_in_chunk(80, 0) == 0);
}

TEST_CASE("workloads::activation offload: only the copy time beyond the overlapped layer is exposed") {
  // 1 GB over 50 GB/s = 20 ms: behind a 30 ms forward nothing shows, behind a 5 ms backward 15 ms.
  const OffloadExposure e = offload_exposure(Bytes{1e9}, BytesPerSec{50e9}, 0.030, 0.005);
  CHECK(e.fwd_s == 0.0);
  CHECK(e.bwd_s == doctest::Approx(0.015));
  // GB200 reaches its Grace over NVLink-C2C, B200 its host over PCIe Gen5 x16.
  CHECK(host_link_bandwidth(*clustersim::topology::find_gpu("gb200")).value == doctest::Approx(225e9));
  CHECK(host_link_bandwidth(*clustersim::topology::find_gpu("b200")).value ==
        clustersim::topology::pcie_x16_bandwidth(5).value);
}

TEST_CASE("workloads::activation offload: offloaded layers' activations move to host memory") {
  const MemoryBreakdown off = estimate_memory(gb200_llama3_70b_fsdp(40));
  const MemoryBreakdown none = estimate_memory(gb200_llama3_70b_fsdp(0));
  const MemoryRequest q = gb200_llama3_70b_fsdp(40);
  const double per_layer = activation_bytes_per_layer(q.model, 2, 1, false, Recompute::None,
                                                      activation_bytes_for(q.training.precision)).value;
  // 40 of 80 layers leave the GPU (one micro-batch in flight without a pipeline); one offloaded
  // layer stays while it copies (double buffer); the host holds the 40.
  CHECK(none.activations.value - off.activations.value == doctest::Approx(39.0 * per_layer));
  CHECK(off.host.value == doctest::Approx(40.0 * per_layer));
  CHECK(none.host.value == 0.0);
  // The published run fits only with the recipe's offloading (formula and allocator replay).
  CHECK(fit_memory(gb200_llama3_70b_fsdp(40), false).fits);
  CHECK_FALSE(fit_memory(gb200_llama3_70b_fsdp(0), false).fits);
}
