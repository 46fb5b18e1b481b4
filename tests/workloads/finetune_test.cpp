// LoRA fine-tuning and ZeRO-Offload in the workloads: adapter parameters against PEFT's published
// count, frozen GEMMs that skip their weight gradients, model states that shrink to the adapters,
// and an offloaded optimizer step whose PCIe time grows with the parameters it moves.
#include <doctest/doctest.h>

#include <string_view>

#include "workloads/compute/compute_model.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/lora.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"
#include "workloads/training/optimizer_offload.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

FinetuneSpec lora(unsigned targets, int rank) {
  FinetuneSpec f;
  f.method = FinetuneMethod::Lora;
  f.lora_targets = targets;
  f.lora_rank = rank;
  return f;
}

ModelSpec llama2_7b() {
  const ModelSpec* m = find_model_preset("llama2-7b");
  REQUIRE(m != nullptr);
  return *m;
}

}  // namespace

TEST_CASE("workloads::lora_parameters: Llama 2 7B at r 8 on q and v has PEFT's 4,194,304 trainable parameters") {
  // PEFT's print_trainable_parameters for meta-llama/Llama-2-7b-hf with LoraConfig(r=8,
  // target_modules=["q_proj","v_proj"]): 2 targets x 8 x (4096 + 4096) x 32 layers.
  const ModelSpec m = llama2_7b();
  CHECK(lora_parameters(m, lora(kLoraQ | kLoraV, 8)) == doctest::Approx(4194304.0));
  // Every linear layer at r 16: attention 4 x 16 x 8192, MLP 3 x 16 x (4096 + 11008), per layer.
  const double all = lora_parameters(m, lora(kLoraQ | kLoraK | kLoraV | kLoraO | kLoraMlpTargets, 16));
  CHECK(all == doctest::Approx(32.0 * (4 * 16 * 8192.0 + 3 * 16 * 15104.0)));
  // Tensor parallelism splits B of column-parallel and A of row-parallel projections.
  CHECK(lora_layer_parameters(m, lora(kLoraQ, 8), 2) == doctest::Approx(8.0 * (4096 + 2048)));
  CHECK(lora_layer_parameters(m, lora(kLoraO, 8), 2) == doctest::Approx(8.0 * (2048 + 4096)));
  CHECK(lora_parameters(m, FinetuneSpec{}) == 0.0);
}

TEST_CASE("workloads::apply_lora: frozen GEMMs run only their data gradient, attention and adapters train") {
  const ModelSpec m = llama2_7b();
  OpShape sh;
  sh.seq_len = 2048;
  const std::vector<OpCost> full = layer_ops(m, sh);
  std::vector<OpCost> tuned = full;
  apply_lora(tuned, m, sh, lora(kLoraQ | kLoraV, 8));
  REQUIRE(tuned.size() == full.size() + 8);  // A, B, the scale and the sum, for q and v
  for (std::size_t i = 0; i < full.size(); ++i) {
    const OpCost& op = tuned[i];
    if (op.kind == OpKind::Gemm) {
      CHECK(op.frozen);
      CHECK(op.bwd_flops.value == doctest::Approx(op.fwd_flops.value));
    } else {
      CHECK(op.bwd_flops.value == doctest::Approx(full[i].bwd_flops.value));  // attention, norms: unchanged
    }
  }
  // The q adapter's A: [tokens, r] from [tokens, 4096]; trained, so backward is 2x its forward.
  const OpCost& a = tuned[full.size()];
  CHECK(std::string_view(a.name) == "lora_q_a");
  CHECK(!a.frozen);
  CHECK(a.fwd_flops.value == doctest::Approx(2.0 * 2048 * 8 * 4096));
  CHECK(a.bwd_flops.value == doctest::Approx(2.0 * a.fwd_flops.value));
  // Its eager elementwise kernels: the alpha / r scale reads and writes [tokens, 4096] bf16 both
  // ways; the sum of the two outputs reads two and writes one forward, and backward adds the two
  // input gradients (two reads and a write of [tokens, 4096]).
  const OpCost& scale = tuned[full.size() + 2];
  const OpCost& sum = tuned[full.size() + 3];
  CHECK(std::string_view(scale.name) == "lora_q_scale");
  CHECK(std::string_view(sum.name) == "lora_q_sum");
  CHECK(scale.kind == OpKind::Elementwise);
  CHECK(scale.fwd_bytes.value == doctest::Approx(2.0 * 2.0 * 2048 * 4096));
  CHECK(scale.bwd_bytes.value == doctest::Approx(scale.fwd_bytes.value));
  CHECK(sum.fwd_bytes.value == doctest::Approx(3.0 * 2.0 * 2048 * 4096));
  CHECK(sum.bwd_bytes.value == doctest::Approx(3.0 * 2.0 * 2048 * 4096));

  // On a GPU: a layer's backward takes about its forward time instead of twice it, never less
  // than the frozen GEMMs' data gradients.
  const topology::GpuSpec* gpu = topology::find_gpu("rtx-4090");
  REQUIRE(gpu != nullptr);
  const ComputeModel cm(*gpu, {}, topology::Precision::Bf16, ComputeConstants{});
  const double fwd = cm.ops_time(full, Pass::Forward).seconds();
  const double bwd_full = cm.ops_time(full, Pass::Backward).seconds();
  const double bwd_lora = cm.ops_time(tuned, Pass::Backward).seconds();
  CHECK(bwd_full > 1.8 * fwd);
  CHECK(bwd_lora < 0.75 * bwd_full);
  CHECK(bwd_lora > 0.9 * fwd);
  // The whole model's matmul FLOPs: forward 1x, backward of frozen weights 1x, attention 2x.
  const double model = model_flops_per_iteration(m, 16).value;
  const double tuned_flops = lora_flops_per_iteration(m, lora(kLoraQ | kLoraV, 8), 16).value;
  CHECK(tuned_flops < 0.75 * model);
  CHECK(tuned_flops > 0.6 * model);
}

TEST_CASE("workloads::apply_lora: qkv is one adapter over the fused projection, A shared by q, k and v") {
  // Llama 3 8B (GQA: 32 query heads, 8 key/value heads of 128): linear_qkv maps 4096 -> 4096 + 2 x 1024.
  const ModelSpec* preset = find_model_preset("llama3-8b");
  REQUIRE(preset != nullptr);
  const ModelSpec m = *preset;
  CHECK(lora_layer_parameters(m, lora(kLoraQkv, 8), 1) == doctest::Approx(8.0 * (4096 + 6144)));
  // Separate q, k, v adapters repeat A twice more.
  CHECK(lora_layer_parameters(m, lora(kLoraQ | kLoraK | kLoraV, 8), 1) ==
        doctest::Approx(8.0 * (3 * 4096 + 6144)));
  // Column-parallel over tp 2: A whole, B's columns split.
  CHECK(lora_layer_parameters(m, lora(kLoraQkv, 8), 2) == doctest::Approx(8.0 * (4096 + 3072)));
  OpShape sh;
  sh.seq_len = 4096;
  const std::vector<OpCost> full = layer_ops(m, sh);
  std::vector<OpCost> tuned = full;
  apply_lora(tuned, m, sh, lora(kLoraQkv, 8));
  REQUIRE(tuned.size() == full.size() + 4);
  CHECK(std::string_view(tuned[full.size()].name) == "lora_qkv_a");
  const OpCost& b = tuned[full.size() + 1];
  CHECK(std::string_view(b.name) == "lora_qkv_b");
  CHECK(b.n == 6144);
  CHECK(b.k == 8);
  std::vector<OpCost> separate = full;
  apply_lora(separate, m, sh, lora(kLoraQ | kLoraK | kLoraV, 8));
  CHECK(sum_ops(tuned).fwd_matmul_flops.value < sum_ops(separate).fwd_matmul_flops.value);
}

TEST_CASE("workloads::layer_ops: a packed sequence's attention does sum l^2 / s^2 of the work, its linears all of it") {
  const ModelSpec* preset = find_model_preset("llama3-8b");
  REQUIRE(preset != nullptr);
  ModelSpec unpacked = *preset;
  unpacked.seq_len = 4096;
  ModelSpec packed = unpacked;
  packed.packed_sample_len = 842603.0 / 4096;  // packed SQuAD (Megatron-Bridge _LORA_SEQ_STATS)
  OpShape sh;
  sh.seq_len = 4096;
  const std::vector<OpCost> a = layer_ops(unpacked, sh);
  const std::vector<OpCost> b = layer_ops(packed, sh);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(b[i].fwd_bytes.value == doctest::Approx(a[i].fwd_bytes.value));  // Q, K, V, O and every activation
    if (std::string_view(a[i].name) == "flash_attention") {
      CHECK(b[i].fwd_flops.value == doctest::Approx(a[i].fwd_flops.value * 842603.0 / (4096.0 * 4096.0)));
      CHECK(b[i].bwd_flops.value == doctest::Approx(2.0 * b[i].fwd_flops.value));
    } else {
      CHECK(b[i].fwd_flops.value == doctest::Approx(a[i].fwd_flops.value));
    }
  }
  // A sliding window applies within each sample: a window wider than the samples changes nothing.
  ModelSpec windowed = packed;
  windowed.sliding_window = 1024;
  const auto attention = [&](const ModelSpec& m) {
    for (const OpCost& op : layer_ops(m, sh))
      if (std::string_view(op.name) == "flash_attention") return op.fwd_flops.value;
    return 0.0;
  };
  CHECK(attention(windowed) == doctest::Approx(attention(packed)));
  windowed.sliding_window = 32;
  CHECK(attention(windowed) < 0.5 * attention(packed));
}

TEST_CASE("workloads::estimate_memory: LoRA keeps frozen weights and activations, shrinks gradients and states") {
  MemoryRequest r;
  r.model = llama2_7b();
  r.model.seq_len = 2048;
  r.parallel.dp = 2;
  r.parallel.zero = 2;
  r.training.global_batch = 16;
  r.capacity = sim::Bytes{24.0 * 1073741824.0};
  const MemoryBreakdown full = estimate_memory(r);
  MemoryRequest t = r;
  t.training.finetune = lora(kLoraQ | kLoraK | kLoraV | kLoraO, 16);
  const MemoryBreakdown tuned = estimate_memory(t);
  CHECK(tuned.params.value > full.params.value);  // the frozen weights plus the adapters
  CHECK(tuned.params.value < full.params.value * 1.01);
  CHECK(tuned.activations.value == doctest::Approx(full.activations.value));
  // Adapters: 16.8M params x 4 B fp32 gradients / 2 and x 12 B Adam / 2.
  const double adapters = lora_parameters(t.model, t.training.finetune);
  CHECK(tuned.grads.value == doctest::Approx(adapters * 4 / 2));
  CHECK(tuned.optimizer.value == doctest::Approx(adapters * 12 / 2));
  CHECK(tuned.total.value < full.total.value - 40e9);
  CHECK(!full.fits());
  CHECK(tuned.fits());
}

TEST_CASE("workloads::estimate_memory: ZeRO-Offload moves gradients and optimizer states to host memory") {
  MemoryRequest r;
  r.model = llama2_7b();
  r.model.seq_len = 2048;
  r.parallel.dp = 2;
  r.parallel.zero = 2;
  r.training.global_batch = 16;
  r.training.recompute = Recompute::Full;
  r.capacity = sim::Bytes{24.0 * 1073741824.0};
  const MemoryBreakdown full = estimate_memory(r);
  r.sync.offload_optimizer = OffloadDevice::Cpu;
  const MemoryBreakdown off = estimate_memory(r);
  CHECK(!full.fits());
  CHECK(off.fits());
  CHECK(off.grads.value == 0.0);
  CHECK(off.optimizer.value == 0.0);
  CHECK(off.host.value == doctest::Approx(full.grads.value + full.optimizer.value));
  CHECK(off.total.value == doctest::Approx(full.total.value - full.grads.value - full.optimizer.value));
  CHECK(off.find_line("layers: optimizer states (host, ZeRO-Offload)") != nullptr);
}

TEST_CASE("workloads::offload_step: PCIe time is the gradients down and the parameters up, linear in the parameters") {
  TrainingSpec tr;  // bf16: 2 B each way
  const sim::BytesPerSec gen4 = topology::pcie_x16_bandwidth(4);
  const OffloadStep s7 = offload_step(3.5e9, tr, 2, gen4, 4.5e9);
  CHECK(s7.d2h_s == doctest::Approx(3.5e9 * 2 / gen4.value));
  CHECK(s7.h2d_s == doctest::Approx(s7.d2h_s));
  CHECK(s7.pcie_bytes == doctest::Approx(4 * 3.5e9));
  CHECK(s7.cpu_adam_s == doctest::Approx(3.5e9 * 2 / 4.5e9));  // two GPUs share the host's CPU-Adam
  const OffloadStep s13 = offload_step(6.5e9, tr, 2, gen4, 4.5e9);
  CHECK(s13.pcie_s() == doctest::Approx(s7.pcie_s() * 6.5 / 3.5));
  CHECK(s13.total_s() > s7.total_s());
  // A faster link halves the PCIe part, not the CPU part.
  const OffloadStep gen5 = offload_step(3.5e9, tr, 2, topology::pcie_x16_bandwidth(5), 4.5e9);
  CHECK(gen5.pcie_s() == doctest::Approx(s7.pcie_s() / 2));
  CHECK(gen5.cpu_adam_s == doctest::Approx(s7.cpu_adam_s));
}

TEST_CASE("workloads::offload_step: the delayed update exposes only the copy down and what the next iteration cannot hide") {
  TrainingSpec tr;
  const OffloadStep s = offload_step(3.5e9, tr, 2, topology::pcie_x16_bandwidth(4), 4.5e9);
  CHECK(s.exposed_after_backward_s(false, 100.0) == doctest::Approx(s.total_s()));
  // A window longer than CPU-Adam plus the copy up hides both.
  CHECK(s.exposed_after_backward_s(true, 100.0) == doctest::Approx(s.d2h_s));
  // A short window hides only its own length.
  const double window = 0.5 * s.cpu_adam_s;
  CHECK(s.exposed_after_backward_s(true, window) == doctest::Approx(s.total_s() - window));
  CHECK(s.exposed_after_backward_s(true, 0.0) == doctest::Approx(s.total_s()));
}
