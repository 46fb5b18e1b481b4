// LatentMoE (ModelSpec::moe_latent_size; Nemotron 3 Super): the preset's total and active parameter
// counts against its model card, and one LatentMoE layer's parameters, forward FLOPs and
// dispatch bytes against hand counts from Megatron-Core's MoELayer (router and shared expert at
// hidden, fc1_latent_proj before the dispatch, experts latent -> ffn -> latent, fc2_latent_proj
// after the combine).
#include <doctest/doctest.h>

#include <string>

#include "workloads/model/hf_config.h"
#include "tests/workloads/op_test_util.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/mtp.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;
using clustersim::testing::active_parameters;

namespace {

const ModelSpec& super_preset() {
  const ModelSpec* m = find_model_preset("nemotron-3-super-120b-a12b");
  REQUIRE(m != nullptr);
  return *m;
}

OpShape shape_of(int tp, int ep, bool sp) {
  OpShape shape;
  shape.micro_batch = 1;
  shape.seq_len = 8192;
  shape.tp = tp;
  shape.sequence_parallel = sp;
  shape.ep = ep;
  return shape;
}

double gemm_fwd_flops(const std::vector<OpCost>& ops, const std::string& name) {
  double sum = 0.0;
  for (const OpCost& op : ops)
    if (op.name == name) sum += op.fwd_flops.value;
  return sum;
}

}  // namespace

TEST_CASE("workloads::ModelSpec: Nemotron 3 Super has 120.6 B parameters and 12.7 B active, as its card says") {
  const ModelSpec& m = super_preset();
  CHECK(m.layers == 88);
  CHECK(m.layers_of_kind_in(LayerKind::Mamba, 0, 88) == 40);
  CHECK(m.layers_of_kind_in(LayerKind::Moe, 0, 88) == 40);
  CHECK(m.layers_of_kind_in(LayerKind::Attention, 0, 88) == 8);
  CHECK(m.moe_latent_size == 1024);
  // arXiv 2604.12374 / model card: 120.6 B total; 12.7 B active (with embeddings; "A12B").
  CHECK(m.parameters() == doctest::Approx(120.6e9).epsilon(0.002));
  CHECK(active_parameters(m) == doctest::Approx(12.7e9).epsilon(0.01));
  // The same model without the latent (experts at hidden 4096) would hold about 4x the experts.
  ModelSpec plain = m;
  plain.moe_latent_size = 0;
  CHECK(plain.expert_parameters() == doctest::Approx(4.0 * m.expert_parameters()));
}

TEST_CASE("workloads::ModelSpec: a LatentMoE layer is its norm, router, shared expert, latent projections and latent experts") {
  const ModelSpec& m = super_preset();
  const double h = 4096, l = 1024, ffn = 2688;
  // 512 relu2 experts of two l x ffn matrices; the shared expert 2 x h x 5376; the router h x 512;
  // fc1_latent_proj h x l and fc2_latent_proj l x h; the pre-norm h.
  CHECK(m.expert_parameters() == doctest::Approx(512 * 2.0 * l * ffn));
  CHECK(m.latent_projection_parameters() == doctest::Approx(2.0 * h * l));
  CHECK(m.moe_block_parameters() == doctest::Approx(2.0 * h * 5376 + h * 512 + 2.0 * h * l));
  CHECK(m.layer_parameters_of(LayerKind::Moe) == doctest::Approx(512 * 2.0 * l * ffn + 2.0 * h * 5376 + h * 512 + 2.0 * h * l + h));
}

TEST_CASE("workloads::layer_ops_of_kind: a LatentMoE layer's forward FLOPs and dispatch bytes, counted by hand") {
  const ModelSpec& m = super_preset();
  const double tokens = 8192, h = 4096, l = 1024, ffn = 2688, k = 22;
  // tp 1, ep 64: every GEMM over this rank's 8192 tokens; the experts' token-slots k x tokens.
  const std::vector<OpCost> e = layer_ops_of_kind(m, shape_of(1, 64, false), LayerKind::Moe);
  CHECK(gemm_fwd_flops(e, "moe_router") == doctest::Approx(2.0 * tokens * h * 512));
  CHECK(gemm_fwd_flops(e, "moe_fc1_latent_proj") == doctest::Approx(2.0 * tokens * h * l));
  CHECK(gemm_fwd_flops(e, "moe_fc2_latent_proj") == doctest::Approx(2.0 * tokens * l * h));
  CHECK(gemm_fwd_flops(e, "expert_up_gate") == doctest::Approx(2.0 * tokens * k * l * ffn));
  CHECK(gemm_fwd_flops(e, "expert_down") == doctest::Approx(2.0 * tokens * k * ffn * l));
  const double per_token = 2.0 * h * 512 + 2.0 * 2.0 * h * l + 2.0 * 2.0 * k * l * ffn + 2.0 * 2.0 * h * 5376;
  CHECK(sum_ops(e).fwd_matmul_flops.value / tokens == doctest::Approx(per_token));
  // Megatron-Bridge's flop_utils.py moe_layer_flops counts the same forward GEMMs (router aside):
  // 4 x latent x ffn x k + 4 x h x latent routed, 4 x h x shared, per token.
  CHECK(per_token - 2.0 * h * 512 == doctest::Approx(4.0 * l * ffn * k + 4.0 * h * l + 4.0 * h * 5376));
  // The dispatch moves latent-wide token copies: tokens x k x l x 2 bytes (bf16), a quarter of
  // what hidden-wide copies would be.
  CHECK(moe_dispatch_bytes(m, shape_of(1, 64, false)) == doctest::Approx(tokens * k * l * 2.0));
  ModelSpec plain = m;
  plain.moe_latent_size = 0;
  CHECK(moe_dispatch_bytes(plain, shape_of(1, 64, false)) == doctest::Approx(4.0 * moe_dispatch_bytes(m, shape_of(1, 64, false))));
  // tp 2 with sequence parallelism: the duplicated latent projections run over this rank's half of
  // the tokens, at full width; the permutation moves latent-wide copies of that half.
  const std::vector<OpCost> e2 = layer_ops_of_kind(m, shape_of(2, 64, true), LayerKind::Moe);
  CHECK(gemm_fwd_flops(e2, "moe_fc1_latent_proj") == doctest::Approx(2.0 * tokens / 2 * h * l));
  for (const OpCost& op : e2)
    if (op.name == "moe_permute") CHECK(op.fwd_bytes.value == doctest::Approx(tokens / 2 * k * l * 2.0 * 2.0));
}

TEST_CASE("workloads::mtp: a hybrid MoE model's MTP module is an attention and a LatentMoE block") {
  const ModelSpec& m = super_preset();
  CHECK(mtp_layer_is_moe(m));
  const double h = 4096;
  const double attention = h * (4096 + 2 * 2 * 128) + 4096 * h + h;
  CHECK(mtp_layer_dense_parameters(m) == doctest::Approx(attention + m.moe_layer_dense_parameters()));
  CHECK(mtp_module_parameters(m) ==
        doctest::Approx(2.0 * h * h + 3.0 * h + attention + m.moe_layer_dense_parameters() + m.expert_parameters()));
}

TEST_CASE("workloads::parse_hf_config: a Nemotron 3 Super config.json imports the 'E' layers and moe_latent_size") {
  // The fields of nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16's config.json that clustersim reads
  // (as Megatron-Bridge's nemotron_h_bridge.py maps them).
  const std::string json = R"({"model_type": "nemotron_h", "hidden_size": 4096, "num_hidden_layers": 88,
    "num_attention_heads": 32, "num_key_value_heads": 2, "intermediate_size": 2688, "vocab_size": 131072,
    "max_position_embeddings": 8192, "tie_word_embeddings": false, "mlp_hidden_act": "relu2",
    "hybrid_override_pattern": "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
    "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
    "chunk_size": 128, "n_routed_experts": 512, "num_experts_per_tok": 22, "moe_intermediate_size": 2688,
    "moe_shared_expert_intermediate_size": 5376, "moe_latent_size": 1024, "n_group": 1, "topk_group": 1})";
  const ModelSpec m = parse_hf_config(json, "config.json");
  CHECK(m.moe_latent_size == 1024);
  CHECK(m.shared_experts == 2);
  CHECK(m.experts == 512);
  CHECK(m.parameters() == doctest::Approx(super_preset().parameters()));
  std::string wide = json;
  wide.replace(wide.find("\"moe_latent_size\": 1024"), 23, "\"moe_latent_size\": 4096");
  CHECK_THROWS_WITH_AS(parse_hf_config(wide, "config.json"), doctest::Contains("narrower than hidden_size"), HfConfigError);
}

// Nemotron 3 Ultra 550B-A55B (model_presets.cpp names the sources: Megatron-LM's ModelOpt script
// NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh, Megatron-Core's Mamba defaults, the model card).
namespace {

const ModelSpec& ultra_preset() {
  const ModelSpec* m = find_model_preset("nemotron-3-ultra-550b-a55b");
  REQUIRE(m != nullptr);
  return *m;
}

}  // namespace

TEST_CASE("workloads::ModelSpec: Nemotron 3 Ultra's 108 layers hold 549.3 B parameters, 56.1 B active, by hand") {
  const ModelSpec& m = ultra_preset();
  CHECK(m.layers == 108);
  CHECK(m.layers_of_kind_in(LayerKind::Mamba, 0, 108) == 48);
  CHECK(m.layers_of_kind_in(LayerKind::Moe, 0, 108) == 48);
  CHECK(m.layers_of_kind_in(LayerKind::Attention, 0, 108) == 12);
  CHECK(m.moe_latent_size == 2048);
  CHECK(m.shared_experts == 2);
  // A Mamba-2 layer: hidden 8192, d_inner 16384 (256 heads of 64), G 8, N 128, d_conv 4:
  //   in_proj 8192 x (2*16384 + 2*8*128 + 256) = 8192 x 35072 = 287,309,824
  //   conv1d  (16384 + 2048) x (4 taps + bias)               =      92,160
  //   A_log, D, dt_bias 3 x 256 = 768; gated RMSNorm 16384; out_proj 16384 x 8192 = 134,217,728;
  //   pre-norm 8192
  const double mamba = 287309824.0 + 92160 + 768 + 16384 + 134217728.0 + 8192;
  CHECK(m.layer_parameters_of(LayerKind::Mamba) == doctest::Approx(mamba));
  // A LatentMoE layer: 512 experts of 2 x 2048 x 5120, shared expert 2 x 8192 x 10240, router
  // 8192 x 512, fc1/fc2_latent_proj 2 x 8192 x 2048, pre-norm 8192.
  const double experts = 512 * 2.0 * 2048 * 5120, dense_moe = 2.0 * 8192 * 10240 + 8192.0 * 512 + 2.0 * 8192 * 2048;
  CHECK(m.expert_parameters() == doctest::Approx(experts));
  CHECK(m.layer_parameters_of(LayerKind::Moe) == doctest::Approx(experts + dense_moe + 8192));
  // An attention layer: 64 query heads and 2 KV groups of 128, output 8192 x 8192, pre-norm.
  const double attention = 8192.0 * 8192 + 2.0 * 8192 * 256 + 8192.0 * 8192 + 8192;
  CHECK(m.layer_parameters_of(LayerKind::Attention) == doctest::Approx(attention));
  // Untied input and output embeddings of 131072 x 8192, final norm.
  const double embeddings = 2.0 * 131072 * 8192;
  const double total = 48 * mamba + 48 * (experts + dense_moe + 8192) + 12 * attention + embeddings + 8192;
  CHECK(m.parameters() == doctest::Approx(total));
  CHECK(total == doctest::Approx(549308968960.0));
  // The card's "550B total" and "A55B": 549.3 B, and 56.1 B active with both embeddings (53.9 B
  // without them; the card's rounding does not say which it counts).
  CHECK(m.parameters() == doctest::Approx(550e9).epsilon(0.002));
  const double active = total - 48 * experts * (1.0 - 22.0 / 512);
  CHECK(active_parameters(m) == doctest::Approx(active));
  CHECK(active == doctest::Approx(56058818560.0));
  CHECK(active_parameters(m) == doctest::Approx(55e9).epsilon(0.02));
}

TEST_CASE("workloads::layer_ops_of_kind: a Nemotron 3 Ultra LatentMoE layer at tp 2 with sequence parallelism, by hand") {
  // The GB200 row's layout (tp 2 + SP, EP 64): each tp rank's 4096 tokens go through the router,
  // the duplicated latent projections and the latent-wide dispatch; the experts see k x tokens slots.
  const ModelSpec& m = ultra_preset();
  const double tokens = 8192 / 2.0, h = 8192, l = 2048, ffn = 5120, k = 22;
  const std::vector<OpCost> e = layer_ops_of_kind(m, shape_of(2, 64, true), LayerKind::Moe);
  CHECK(gemm_fwd_flops(e, "moe_fc1_latent_proj") == doctest::Approx(2.0 * tokens * h * l));
  CHECK(gemm_fwd_flops(e, "moe_fc2_latent_proj") == doctest::Approx(2.0 * tokens * l * h));
  CHECK(gemm_fwd_flops(e, "expert_up_gate") == doctest::Approx(2.0 * tokens * k * l * ffn));
  CHECK(gemm_fwd_flops(e, "expert_down") == doctest::Approx(2.0 * tokens * k * ffn * l));
  CHECK(moe_dispatch_bytes(m, shape_of(2, 64, true)) == doctest::Approx(tokens * k * l * 2.0));
}

TEST_CASE("workloads::parse_hf_config: Nemotron 3 Ultra's shape under the nemotron_h config.json names imports as the preset") {
  // Ultra's config.json was not at hand: these are the Megatron-LM ModelOpt script's values (and
  // Megatron-Core's Mamba defaults) under the field names Megatron-Bridge's nemotron_h_bridge.py maps.
  const std::string json = R"({"model_type": "nemotron_h", "hidden_size": 8192, "num_hidden_layers": 108,
    "num_attention_heads": 64, "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 5120,
    "vocab_size": 131072, "max_position_embeddings": 8192, "tie_word_embeddings": false, "mlp_hidden_act": "relu2",
    "hybrid_override_pattern": "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "mamba_num_heads": 256, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
    "chunk_size": 128, "n_routed_experts": 512, "num_experts_per_tok": 22, "moe_intermediate_size": 5120,
    "moe_shared_expert_intermediate_size": 10240, "moe_latent_size": 2048, "n_group": 1, "topk_group": 1})";
  const ModelSpec m = parse_hf_config(json, "config.json");
  CHECK(m.layers == 108);
  CHECK(m.moe_latent_size == 2048);
  CHECK(m.shared_experts == 2);
  CHECK(m.mamba_heads == 256);
  CHECK(m.parameters() == doctest::Approx(ultra_preset().parameters()));
}
