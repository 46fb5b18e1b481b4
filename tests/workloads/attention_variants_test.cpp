// Multi-head latent attention and sliding-window attention: the published parameter counts of
// DeepSeek-V3, Kimi-K2 and GPT-OSS, MLA's FLOPs and tensor-parallel split counted by hand, the
// window's attended pairs against a brute-force count, and the Hugging Face imports.
#include <doctest/doctest.h>

#include <string>

#include "tests/workloads/op_test_util.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/attention_variants.h"
#include "workloads/model/hf_config.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using namespace clustersim::testing;

namespace {

std::string data(const char* name) { return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/data/" + name; }

const ModelSpec& preset(const char* id) {
  const ModelSpec* m = find_model_preset(id);
  REQUIRE(m != nullptr);
  return *m;
}

// Parameters a token uses, as OpenAI's gpt-oss model card counts them: every MoE layer's routed
// experts replaced by its top-k's share, and the input embedding (a lookup) left out.
double active_without_input_embedding(const ModelSpec& m) {
  return testing::active_parameters(m) - static_cast<double>(m.vocab) * m.hidden;
}

}  // namespace

// DeepSeek-V3 report (arXiv:2412.19437) Sec. 4.2: 671 B total, 37 B activated per token (the MTP
// module excluded; 36.6 B counted as above, 37.5 B with the input embedding). MLA by hand: 1536 x (7168 + 1 + 128 x 192) + 7168 x 576 + 512 + 512 x 128 x 256
// + 128 x 128 x 7168 = 187,107,328 per layer.
TEST_CASE("workloads::MLA: DeepSeek-V3's attention, total and activated parameters are the published ones") {
  const ModelSpec& v3 = preset("deepseek-v3");
  CHECK(v3.is_mla());
  CHECK(v3.attention_parameters() == doctest::Approx(187107328.0).epsilon(1e-12));
  CHECK(v3.tp_replicated_attention_parameters() == doctest::Approx(1536.0 * 7169 + 7168.0 * 576 + 512).epsilon(1e-12));
  CHECK(v3.parameters() == doctest::Approx(671e9).epsilon(0.01));
  CHECK(active_without_input_embedding(v3) == doctest::Approx(37e9).epsilon(0.02));
  // Kimi-K2 (arXiv:2507.20534): 1.04 T total with 64 heads and 384 experts on the same MLA.
  CHECK(preset("kimi-k2").parameters() == doctest::Approx(1.04e12).epsilon(0.02));
}

// OpenAI's gpt-oss model card: 116.83 B total / 5.13 B active (120b), 20.91 B / 3.61 B (20b).
TEST_CASE("workloads::sliding window: GPT-OSS's total and active parameters are the model card's") {
  const ModelSpec& big = preset("gpt-oss-120b");
  CHECK(big.parameters() == doctest::Approx(116.83e9).epsilon(0.01));
  CHECK(active_without_input_embedding(big) == doctest::Approx(5.13e9).epsilon(0.02));
  const ModelSpec& small = preset("gpt-oss-20b");
  CHECK(small.parameters() == doctest::Approx(20.91e9).epsilon(0.01));
  CHECK(active_without_input_embedding(small) == doctest::Approx(3.61e9).epsilon(0.02));
  // Sinks: one logit per head and layer.
  ModelSpec no_sinks = big;
  no_sinks.attention_sinks = false;
  CHECK(big.parameters() - no_sinks.parameters() == doctest::Approx(36.0 * 64));
}

// Forward FLOPs of one dense MLA layer's attention for b = 1, s = 256 at tp 1, term by term:
// projections 2 x tokens x (h r_q + r_q H qk + h (r_kv + rope) + r_kv H (nope + v) + H v h), and the
// core 2 x s^2 x H x (qk + v) (SC'21's full-s^2 count; the compute model runs the causal half).
TEST_CASE("workloads::MLA: projection and attention-core FLOPs equal the formula with DeepSeek-V3's values") {
  ModelSpec m = preset("deepseek-v3");
  OpShape sh;
  sh.seq_len = 256;
  const std::vector<OpCost> ops = layer_ops(m, sh, false);
  const double t = 256, h = 7168, H = 128, rq = 1536, rkv = 512, qk = 192, v = 128;
  CHECK(op_named(ops, "mla_q_down_proj").fwd_flops.value == doctest::Approx(2 * t * h * rq));
  CHECK(op_named(ops, "mla_q_up_proj").fwd_flops.value == doctest::Approx(2 * t * rq * H * qk));
  CHECK(op_named(ops, "mla_kv_down_proj").fwd_flops.value == doctest::Approx(2 * t * h * (rkv + 64)));
  CHECK(op_named(ops, "mla_kv_up_proj").fwd_flops.value == doctest::Approx(2 * t * rkv * H * (128 + v)));
  CHECK(op_named(ops, "attention_out_proj").fwd_flops.value == doctest::Approx(2 * t * H * v * h));
  CHECK(op_named(ops, "flash_attention").fwd_flops.value == doctest::Approx(2 * t * t * H * (qk + v)));
  // Every projection's forward is 2 x tokens x its parameters (the latent norms aside).
  double projections = 0;
  for (const OpCost& op : ops)
    if (op.kind == OpKind::Gemm && op.name.find("mlp") == std::string_view::npos) projections += op.fwd_flops.value;
  CHECK(projections == doctest::Approx(2 * t * (m.attention_parameters() - rq - rkv)));
  // Without query compression Q comes straight from the hidden state.
  m.q_lora_rank = 0;
  const std::vector<OpCost> plain = layer_ops(m, sh, false);
  CHECK(op_named(plain, "mla_q_proj").fwd_flops.value == doctest::Approx(2 * t * h * H * qk));
}

// Megatron-Core's MLASelfAttention: heads split over tp, down-projections duplicated (every rank
// runs them on all tokens, or on its s/tp with sequence parallelism).
TEST_CASE("workloads::MLA: tensor parallelism splits the heads and duplicates the down-projections") {
  const ModelSpec& m = preset("deepseek-v3");
  OpShape one, two;
  one.seq_len = two.seq_len = 512;
  two.tp = 2;
  const std::vector<OpCost> a = layer_ops(m, one, false), b = layer_ops(m, two, false);
  CHECK(op_named(b, "mla_q_up_proj").fwd_flops.value == doctest::Approx(op_named(a, "mla_q_up_proj").fwd_flops.value / 2));
  CHECK(op_named(b, "flash_attention").fwd_flops.value == doctest::Approx(op_named(a, "flash_attention").fwd_flops.value / 2));
  CHECK(op_named(b, "mla_kv_down_proj").fwd_flops.value == doctest::Approx(op_named(a, "mla_kv_down_proj").fwd_flops.value));
  two.sequence_parallel = true;
  const std::vector<OpCost> sp = layer_ops(m, two, false);
  CHECK(op_named(sp, "mla_kv_down_proj").fwd_flops.value ==
        doctest::Approx(op_named(a, "mla_kv_down_proj").fwd_flops.value / 2));
}

// Megatron-Core's fused MLA RoPE (fusions/fused_mla_yarn_rope_apply.py, core_r0.16.0): the
// queries' rope parts rotated in place, and kv_up's output split into new key [H x (nope + rope)]
// and value [H x v] tensors with the shared rope key, per pass; two kernels. DeepSeek-V3 at
// s = 4,096, tp 1, bf16: 134 MB + 604 MB a pass (deepseek-ai/profile-data train.json measures
// 0.32 ms forward on an H800 for this step). At tp 2 half the heads.
TEST_CASE("workloads::MLA: the rotary op copies kv_up's output into key and value, not only the rope parts") {
  const ModelSpec& m = preset("deepseek-v3");
  OpShape one, two;
  one.seq_len = two.seq_len = 4096;
  two.tp = 2;
  const std::vector<OpCost> ops_one = layer_ops(m, one, false), ops_two = layer_ops(m, two, false);
  const OpCost& a = op_named(ops_one, "rotary_embedding");
  const double t = 4096, H = 128, p = 2, rope = 64, nope = 128, v = 128;
  const double q = 2 * t * H * rope * p;
  const double kv = t * (H * (nope + v) + rope) * p + t * H * (nope + rope + v) * p;
  CHECK(a.fwd_bytes.value == doctest::Approx(q + kv));
  CHECK(a.bwd_bytes.value == doctest::Approx(q + kv));
  // More than the rope parts alone (the op's bytes before session 18): 5.5x here.
  CHECK(a.fwd_bytes.value > 5.0 * (t * (H + 1) * rope * 2 * p));
  CHECK(a.fwd_host_ops == doctest::Approx(1.0));
  CHECK(a.bwd_host_ops == doctest::Approx(1.0));
  const OpCost& b = op_named(ops_two, "rotary_embedding");
  const double kv2 = t * (H / 2 * (nope + v) + rope) * p + t * H / 2 * (nope + rope + v) * p;
  CHECK(b.fwd_bytes.value == doctest::Approx(q / 2 + kv2));
}

// What MLA stores with flash attention: per local head Q and K over nope + rope = 192 and V and O
// over 128, and the two latents twice (norm input, up-projection input).
TEST_CASE("workloads::MLA: saved activations follow MLA's head sizes and latents") {
  const ModelSpec& m = preset("deepseek-v3");
  const double s = m.seq_len, e = 2.0;
  double q = 0, v = 0, latents = 0, out = 0;
  for (const SavedTensor& x : saved_layer_tensors(m, 1, 1, false, Recompute::None)) {
    const std::string name = x.name;
    if (name == "Q") q = x.bytes;
    if (name == "V") v = x.bytes;
    if (name.rfind("MLA ", 0) == 0) latents += x.bytes;
    if (name == "attention output (out-projection input)") out = x.bytes;
  }
  CHECK(q == doctest::Approx(e * s * 128 * 192));
  CHECK(v == doctest::Approx(e * s * 128 * 128));
  CHECK(out == doctest::Approx(e * s * 128 * 128));
  CHECK(latents == doctest::Approx(2 * e * s * (1536 + 512)));
}

TEST_CASE("workloads::sliding window: causal_attended_pairs equals a brute-force count") {
  for (const double s : {1.0, 7.0, 128.0, 1000.0}) {
    for (const double w : {1.0, 5.0, 128.0, 4096.0}) {
      double pairs = 0;
      for (double i = 0; i < s; ++i) pairs += std::min(i + 1, w);
      CHECK(causal_attended_pairs(s, w) == doctest::Approx(pairs).epsilon(1e-12));
    }
  }
}

// GPT-OSS at s = 4096, w = 128: a sliding layer attends 128 x 129 / 2 + 3968 x 128 = 516,160 pairs,
// so its op counts 2 x 516,160 / 4096^2 = 6.153% of full attention; alternating layers average it
// with 1. Projections and memory do not change.
TEST_CASE("workloads::sliding window: the attention core shrinks exactly as the attended pairs, memory does not") {
  ModelSpec full = preset("gpt-oss-120b");
  full.sliding_window = 0;
  ModelSpec all_sliding = preset("gpt-oss-120b");
  all_sliding.full_attention_every = 0;
  const ModelSpec& alternating = preset("gpt-oss-120b");
  CHECK(alternating.is_sliding_layer(0));
  CHECK_FALSE(alternating.is_sliding_layer(1));
  OpShape sh;
  sh.seq_len = 4096;
  const double full_flops = op_named(layer_ops(full, sh, true), "flash_attention").fwd_flops.value;
  const double factor = 2.0 * 516160.0 / (4096.0 * 4096.0);
  CHECK(attention_work_factor(all_sliding, true, 4096) == doctest::Approx(factor).epsilon(1e-12));
  CHECK(op_named(layer_ops(all_sliding, sh, true), "flash_attention").fwd_flops.value ==
        doctest::Approx(full_flops * factor).epsilon(1e-12));
  CHECK(op_named(layer_ops(alternating, sh, true), "flash_attention").fwd_flops.value ==
        doctest::Approx(full_flops * (factor + 1.0) / 2.0).epsilon(1e-12));
  CHECK(op_named(layer_ops(alternating, sh, true), "qkv_proj").fwd_flops.value ==
        doctest::Approx(op_named(layer_ops(full, sh, true), "qkv_proj").fwd_flops.value));
  CHECK(activation_bytes_per_layer(alternating, 1, 1, false, Recompute::None).value ==
        doctest::Approx(activation_bytes_per_layer(full, 1, 1, false, Recompute::None).value));
  // A window as long as the sequence is full attention.
  all_sliding.sliding_window = 4096;
  CHECK(attention_work_factor(all_sliding, true, 4096) == 1.0);
}

TEST_CASE("workloads::load_hf_config: DeepSeek-V3's MLA and GPT-OSS's sliding layers are imported") {
  const ModelSpec v3 = load_hf_config(data("deepseek_v3_config.json"));
  CHECK(v3.q_lora_rank == 1536);
  CHECK(v3.kv_lora_rank == 512);
  CHECK(v3.qk_nope_head_dim == 128);
  CHECK(v3.qk_rope_head_dim == 64);
  CHECK(v3.v_head_dim == 128);
  CHECK(v3.attention_parameters() == doctest::Approx(preset("deepseek-v3").attention_parameters()));
  const ModelSpec oss = load_hf_config(data("gpt_oss_120b_config.json"));
  CHECK(oss.sliding_window == 128);
  CHECK(oss.full_attention_every == 2);
  CHECK(oss.attention_sinks);
  CHECK(oss.experts == 128);
  CHECK(oss.experts_per_token == 4);
  CHECK(oss.attention_head_dim == 64);
  CHECK(oss.parameters() == doctest::Approx(preset("gpt-oss-120b").parameters()));
  // A pattern that is not "sliding layers, then one full" is refused by name.
  try {
    parse_hf_config(R"({"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "intermediate_size": 128,
                        "vocab_size": 100, "max_position_embeddings": 64, "sliding_window": 8,
                        "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]})",
                    "inline");
    FAIL("expected an HfConfigError");
  } catch (const HfConfigError& e) {
    CHECK(std::string(e.what()).find("layer_types") != std::string::npos);
  }
  // MLA head sizes without kv_lora_rank are an error, not standard attention.
  try {
    parse_hf_config(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
                        "vocab_size": 100, "max_position_embeddings": 64, "qk_nope_head_dim": 16})",
                    "inline");
    FAIL("expected an HfConfigError");
  } catch (const HfConfigError& e) {
    CHECK(std::string(e.what()).find("qk_nope_head_dim") != std::string::npos);
  }
}
