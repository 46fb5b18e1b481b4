#include <doctest/doctest.h>

#include <algorithm>
#include <string_view>

#include "tests/workloads/op_test_util.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {
// SC'21 (Narayanan et al.) Eq. 2 and Eq. 3 with B sequences.
double sc21_model_flops(double B, double s, double l, double h, double V) {
  return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
}
double sc21_full_recompute_flops(double B, double s, double l, double h, double V) {
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}
}  // namespace

TEST_CASE("workloads::transformer ops: GPT model FLOPs per iteration equal the SC'21 formula exactly") {
  for (const char* id : {"gpt3-125m", "gpt3-1.3b", "gpt3-175b", "megatron-1t"}) {
    ModelSpec m = *find_model_preset(id);
    for (bool flash : {true, false}) {
      m.flash_attention = flash;
      const double B = 1536;
      const double expected = sc21_model_flops(B, m.seq_len, m.layers, m.hidden, m.vocab);
      CHECK(model_flops_per_iteration(m, 1536).value == doctest::Approx(expected).epsilon(1e-12));
    }
  }
}

TEST_CASE("workloads::transformer ops: full recompute adds one forward, matching SC'21 Eq. 3") {
  const ModelSpec m = *find_model_preset("gpt3-175b");
  const double expected = sc21_full_recompute_flops(1536, m.seq_len, m.layers, m.hidden, m.vocab);
  CHECK(hardware_flops_per_iteration(m, 1536, Recompute::Full).value ==
        doctest::Approx(expected).epsilon(1e-12));
  // Selective recompute adds only the attention core's forward: 4*B*s^2*h per layer.
  const double selective_extra = 4.0 * 1536 * 2048.0 * 2048.0 * 12288.0 * 96;
  CHECK(hardware_flops_per_iteration(m, 1536, Recompute::Selective).value ==
        doctest::Approx(model_flops_per_iteration(m, 1536).value + selective_extra).epsilon(1e-12));
}

TEST_CASE("workloads::transformer ops: GEMMs record their per-GPU shape under tensor parallelism") {
  const ModelSpec m = *find_model_preset("gpt3-175b");
  OpShape sh;
  sh.micro_batch = 2;
  sh.seq_len = 2048;
  sh.tp = 8;
  const auto ops = layer_ops(m, sh);
  const OpCost& qkv = op_named(ops, "qkv_proj");
  CHECK(qkv.m == 4096);
  CHECK(qkv.n == 3 * 12288 / 8);
  CHECK(qkv.k == 12288);
  CHECK(qkv.fp8_eligible);
  CHECK(qkv.bwd_flops.value == 2.0 * qkv.fwd_flops.value);
  const OpCost& fc2 = op_named(ops, "mlp_fc2");
  CHECK(fc2.n == 12288);
  CHECK(fc2.k == 4 * 12288 / 8);
  const OpCost& attn = op_named(ops, "flash_attention");
  CHECK(attn.kind == OpKind::Attention);
  CHECK(attn.batch == 2 * 96 / 8);
  CHECK_FALSE(attn.fp8_eligible);
  CHECK(op_named(head_ops(m, sh), "logits").n == 51200 / 8);
}

TEST_CASE("workloads::transformer ops: GQA shrinks the QKV projection to the KV heads") {
  const ModelSpec m = *find_model_preset("llama3-70b");  // 64 query heads, 8 KV heads, head dim 128
  OpShape sh;
  sh.seq_len = 8192;
  sh.tp = 8;
  const auto ops = layer_ops(m, sh);
  CHECK(op_named(ops, "qkv_proj").n == (8 + 2 * 1) * 128);
  // SwiGLU: three GEMMs and no dropout.
  CHECK(op_named(ops, "mlp_gate").n == 28672 / 8);
  CHECK(op_named(ops, "mlp_up").n == 28672 / 8);
  CHECK(op_named(ops, "mlp_down").k == 28672 / 8);
  CHECK(std::none_of(ops.begin(), ops.end(), [](const OpCost& o) { return o.name == "mlp_dropout"; }));
}

TEST_CASE("workloads::transformer ops: rotary models rotate Q and K in one memory-bound kernel, GPT models do not") {
  const ModelSpec llama = *find_model_preset("llama3-70b");  // 64 query heads, 8 KV heads, head dim 128
  OpShape sh;
  sh.seq_len = 8192;
  sh.tp = 8;
  const auto ops = layer_ops(llama, sh);
  const OpCost& rope = op_named(ops, "rotary_embedding");
  CHECK(rope.kind == OpKind::Elementwise);
  // Q (8 heads) and K (1 KV head) on this rank: read and written once each way in bf16.
  const double elements = 8192.0 * (8 + 1) * 128;
  CHECK(rope.fwd_bytes.value == doctest::Approx(2.0 * 2 * elements));
  CHECK(rope.bwd_bytes.value == doctest::Approx(2.0 * 2 * elements));
  // Right after the QKV projection, before attention; not model FLOPs.
  const auto at = [&](std::string_view n) {
    return std::find_if(ops.begin(), ops.end(), [&](const OpCost& o) { return o.name == n; }) - ops.begin();
  };
  CHECK(at("qkv_proj") + 1 == at("rotary_embedding"));
  CHECK(at("rotary_embedding") + 1 == at("flash_attention"));
  const auto gpt = layer_ops(*find_model_preset("gpt3-13b"), sh);
  CHECK(std::none_of(gpt.begin(), gpt.end(), [](const OpCost& o) { return o.name == "rotary_embedding"; }));
}

TEST_CASE("workloads::transformer ops: without flash attention the s x s scores are HBM traffic") {
  ModelSpec m = *find_model_preset("gpt3-1.3b");
  OpShape sh;
  sh.seq_len = 2048;
  sh.flash_attention = false;
  const auto plain = layer_ops(m, sh);
  const OpCost& softmax = op_named(plain, "softmax");
  const double scores = 1.0 * 16 * 2048.0 * 2048.0;  // b * a * s^2
  CHECK(softmax.fwd_bytes.value == doctest::Approx(2.0 * 2 * scores));
  sh.flash_attention = true;
  const OpTotals flash = sum_ops(layer_ops(m, sh));
  const OpTotals no_flash = sum_ops(plain);
  CHECK(flash.fwd_matmul_flops.value == doctest::Approx(no_flash.fwd_matmul_flops.value));
  CHECK(flash.fwd_bytes.value < 0.5 * no_flash.fwd_bytes.value);
}

TEST_CASE("workloads::transformer ops: sequence parallelism shards norm and dropout traffic over tp") {
  const ModelSpec m = *find_model_preset("gpt3-175b");
  OpShape sh;
  sh.tp = 8;
  const double replicated = op_named(layer_ops(m, sh), "input_norm").fwd_bytes.value;
  sh.sequence_parallel = true;
  CHECK(op_named(layer_ops(m, sh), "input_norm").fwd_bytes.value == doctest::Approx(replicated / 8));
}
