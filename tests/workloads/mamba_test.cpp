// Hybrid Mamba models: Nemotron-H's parameter counts against the published sizes, a Mamba-2 layer's
// parameters and SSD FLOPs counted by hand, tensor-parallel sharding of its ops, the layer kinds a
// pattern gives, and the activation memory of a hybrid against its kinds' tensors.
#include <doctest/doctest.h>

#include <string>

#include "workloads/memory/mamba_memory.h"
#include "workloads/model/hf_config.h"
#include "workloads/memory/memory_model.h"
#include "workloads/model/mamba_ops.h"
#include "workloads/model/model_presets.h"
#include "workloads/model/transformer_ops.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

const ModelSpec& preset(const char* id) {
  const ModelSpec* m = find_model_preset(id);
  REQUIRE(m != nullptr);
  return *m;
}

double matmul_fwd_flops(const std::vector<OpCost>& ops) {
  return sum_ops(ops).fwd_matmul_flops.value;
}

}  // namespace

TEST_CASE("workloads::ModelSpec: Nemotron-H parameter counts are within 2% of the published 8B, 47B and 56B") {
  // Published sizes: arXiv 2504.03624 (Nemotron-H-8B-Base, -47B-Base, -56B-Base model cards).
  const struct { const char* id; double billions; } cases[] = {
      {"nemotron-h-8b", 8.0}, {"nemotron-h-47b", 47.0}, {"nemotron-h-56b", 56.0}};
  for (const auto& c : cases) {
    CAPTURE(c.id);
    const double b = preset(c.id).parameters() / 1e9;
    CHECK(b == doctest::Approx(c.billions).epsilon(0.02));
  }
}

TEST_CASE("workloads::ModelSpec: the 56B pattern gives 54 Mamba, 10 attention and 54 MLP layers") {
  const ModelSpec& m = preset("nemotron-h-56b");
  CHECK(m.layers == 118);
  CHECK(m.layers_of_kind_in(LayerKind::Mamba, 0, m.layers) == 54);
  CHECK(m.layers_of_kind_in(LayerKind::Attention, 0, m.layers) == 10);
  CHECK(m.layers_of_kind_in(LayerKind::Mlp, 0, m.layers) == 54);
  CHECK(m.layers_of_kind_in(LayerKind::Transformer, 0, m.layers) == 0);
  CHECK(m.layer_kind(0) == LayerKind::Mamba);
  CHECK(m.layer_kind(1) == LayerKind::Mlp);
  CHECK(m.layer_kind(7) == LayerKind::Attention);  // "M-M-M-M*": the 8th character
  CHECK(m.layer_kind(8) == LayerKind::Mlp);
}

TEST_CASE("workloads::ModelSpec: a Mamba-2 layer's parameters, counted by hand for Nemotron-H 56B") {
  // hidden 8192, d_inner 16384, G 8, N 256, H 256, d_conv 4:
  //   in_proj 8192 x (2*16384 + 2*8*256 + 256) = 8192 x 37120 = 304,087,040
  //   conv1d  (16384 + 4096) x (4 taps + bias)                 =     102,400
  //   A_log, D, dt_bias 3 x 256                                 =         768
  //   gated RMSNorm 16384; out_proj 16384 x 8192 = 134,217,728; pre-norm 8192
  const double expected = 304087040.0 + 102400 + 768 + 16384 + 134217728.0 + 8192;
  CHECK(preset("nemotron-h-56b").layer_parameters_of(LayerKind::Mamba) == doctest::Approx(expected));
  CHECK(expected == doctest::Approx(438432512.0));
}

TEST_CASE("workloads::ssd_flops_per_token: the SSD kernels' chunk matmuls with values put in") {
  // Nemotron-H 56B, Q = 128, N = 256, G = 8, d_inner = 16384 (mamba_ssm's tl.dot tiles):
  //   _bmm_chunk_fwd C B^T 2*Q*N*G = 524,288; _chunk_scan_fwd's CB x 2*Q*d_inner = 4,194,304 and
  //   C states 2*N*d_inner; _chunk_state_fwd B^T x 2*N*d_inner (together 16,777,216). The state
  //   passing is an elementwise scan, not counted here.
  CHECK(ssd_flops_per_token(preset("nemotron-h-56b")) == doctest::Approx(524288.0 + 4194304 + 16777216));
  ModelSpec longer = preset("nemotron-h-56b");
  longer.mamba_chunk = 256;  // mamba_ssm's default: the intra-chunk part doubles
  CHECK(ssd_flops_per_token(longer) == doctest::Approx(2 * 524288.0 + 2 * 4194304 + 16777216));
}

TEST_CASE("workloads::mamba_layer_ops: model FLOPs are the two projections as GEMMs plus the scan") {
  const ModelSpec& m = preset("nemotron-h-56b");
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 8192;
  const double tokens = 8192;
  const double projections = 2.0 * (304087040.0 + 134217728.0);  // 2 x weights per token
  const double fwd = matmul_fwd_flops(mamba_layer_ops(m, sh));
  CHECK(fwd == doctest::Approx(tokens * (projections + ssd_flops_per_token(m))));
  // Tensor parallelism splits heads and groups (8 groups over tp 8): each GPU does 1/8.
  sh.tp = 8;
  sh.sequence_parallel = true;
  CHECK(matmul_fwd_flops(mamba_layer_ops(m, sh)) == doctest::Approx(fwd / 8));
  bool found = false;
  for (const OpCost& op : mamba_layer_ops(m, sh)) {
    if (op.name != "mamba_in_proj") continue;
    found = true;
    CHECK(op.n == 37120 / 8);
    CHECK(op.k == 8192);
  }
  CHECK(found);
}

TEST_CASE("workloads::layer_ops_of_kind: attention and MLP layers are the two halves of a transformer layer") {
  ModelSpec m = preset("nemotron-h-8b");
  OpShape sh;
  sh.seq_len = 4096;
  const double whole = matmul_fwd_flops(layer_ops(m, sh));
  const double attention = matmul_fwd_flops(layer_ops_of_kind(m, sh, LayerKind::Attention));
  const double mlp = matmul_fwd_flops(layer_ops_of_kind(m, sh, LayerKind::Mlp));
  CHECK(attention + mlp == doctest::Approx(whole));
  CHECK(mlp == doctest::Approx(2.0 * 2.0 * 4096 * 4096 * 21504.0));  // fc1 and fc2
  for (const OpCost& op : layer_ops_of_kind(m, sh, LayerKind::Attention)) CHECK(op.name != "rotary_embedding");
}

TEST_CASE("workloads::model_flops_per_iteration: a hybrid sums its kinds, 56B is about 6 x params x tokens") {
  const ModelSpec& m = preset("nemotron-h-56b");
  OpShape sh;
  sh.seq_len = m.seq_len;
  double per_sequence = 0;
  for (const LayerKind k : {LayerKind::Mamba, LayerKind::Attention, LayerKind::Mlp}) {
    const OpTotals t = sum_ops(layer_ops_of_kind(m, sh, k));
    per_sequence += m.layers_of_kind_in(k, 0, m.layers) * (t.fwd_matmul_flops + t.bwd_matmul_flops).value;
  }
  const OpTotals head = sum_ops(head_ops(m, sh));
  per_sequence += (head.fwd_matmul_flops + head.bwd_matmul_flops).value;
  CHECK(model_flops_per_iteration(m, 3).value == doctest::Approx(3 * per_sequence));
  // 6 N per token (N without the input embedding) plus attention's s^2 and the scan: within 10%.
  const double n = m.parameters() - static_cast<double>(m.vocab) * m.hidden;
  const double six_n = 6.0 * n * m.seq_len;
  CHECK(per_sequence > six_n);
  CHECK(per_sequence < 1.10 * six_n);
}

TEST_CASE("workloads::hybrid_saved_layer_tensors: the mean layer weights each kind's tensors by its share") {
  const ModelSpec& m = preset("nemotron-h-8b");  // 24 M, 4 *, 24 - of 52
  const double hybrid = activation_bytes_per_layer(m, 1, 1, false, Recompute::None).value;
  ModelSpec plain = m;
  plain.hybrid_pattern.clear();
  double attention = 0, mlp = 0;
  bool in_mlp = false;
  for (const SavedTensor& x : saved_layer_tensors(plain, 1, 1, false, Recompute::None)) {
    in_mlp = in_mlp || std::string(x.name) == "MLP norm input";
    (in_mlp ? mlp : attention) += x.bytes;
  }
  double mamba = 0;
  for (const SavedTensor& x : mamba_saved_tensors(m, 1, 1, false, {})) mamba += x.bytes;
  CHECK(hybrid == doctest::Approx((24 * mamba + 4 * attention + 24 * mlp) / 52));
  // The Mamba layer's tensors by hand (e = 2, s*b = 8192, h 4096, d_inner 8192, 2GN 2048, H 128):
  // 2 x sbh (norm and in_proj inputs) + sb x (18560 + 10240 + 8192 + 8192).
  CHECK(mamba == doctest::Approx(2.0 * 8192 * (2 * 4096 + 18560 + 10240 + 8192 + 8192)));
  // Full recompute keeps only each layer's input.
  CHECK(activation_bytes_per_layer(m, 1, 1, false, Recompute::Full).value == doctest::Approx(2.0 * 8192 * 4096));
}

TEST_CASE("workloads::parse_hf_config: a NemotronH config.json imports the pattern and the Mamba-2 fields") {
  // The fields of nvidia/Nemotron-H-8B-Base-8K's config.json that clustersim reads.
  const std::string json = R"({"model_type": "nemotron_h", "hidden_size": 4096, "num_hidden_layers": 52,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 21504, "vocab_size": 131072,
    "max_position_embeddings": 8192, "tie_word_embeddings": false, "mlp_hidden_act": "relu2",
    "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4,
    "chunk_size": 128})";
  const ModelSpec m = parse_hf_config(json, "config.json");
  CHECK(m.is_hybrid());
  CHECK(m.mamba_heads == 128);
  CHECK(m.mamba_state == 128);
  CHECK(m.positions == PositionKind::None);
  CHECK(m.parameters() == doctest::Approx(preset("nemotron-h-8b").parameters()));
  std::string moe = json;
  moe.replace(moe.find("M-M-M-M*"), 8, "M-M-M-E*");
  CHECK_THROWS_WITH_AS(parse_hf_config(moe, "config.json"), doctest::Contains("MoE layers ('E') without an expert count"),
                       HfConfigError);
}

TEST_CASE("workloads::ssd_bytes_per_token: mamba_ssm's SSD kernels one by one at Nemotron 3 Nano's shapes") {
  const ModelSpec& m = preset("nemotron-3-nano-30b-a3b");
  const double d = 4096, gn = 8 * 128, gq = 8 * 128, s = 4096, h = 64, p = 2;  // d_inner, G N, G Q, d N / Q
  REQUIRE(m.mamba_inner() == d);
  const SsdBytes b = ssd_bytes_per_token(m, p);
  // Forward: x read twice and z once, y and out_x written; B, C four reads; CB written and read in
  // fp32; states written fp32, read fp32, written and read bf16; dt / dA_cumsum per head.
  CHECK(b.fwd == doctest::Approx(5 * d * p + 4 * gn * p + 8 * gq + 12 * s + h * (p + 24)));
  CHECK(b.fwd == doctest::Approx(108160.0));
  // Backward: the recomputed cumsum, CB, chunk states and state passing, eleven gradient kernels
  // with their memsets and head-split reductions (fp32 dB, dC, dCB), and the torch ops between
  // them: about 3.5x the forward (the one-pass model charged 2x).
  CHECK(b.bwd == doctest::Approx(376448.0));
  CHECK(b.bwd > 3.0 * b.fwd);
  // The SSD ops carry them per token; tensor parallelism splits the heads and groups.
  const auto ssd_sum = [](const std::vector<OpCost>& ops) {
    SsdBytes sum;
    for (const OpCost& op : ops) {
      if (!op.name.starts_with("ssd_")) continue;
      sum.fwd += op.fwd_bytes.value;
      sum.bwd += op.bwd_bytes.value;
    }
    return sum;
  };
  OpShape sh;
  sh.micro_batch = 2;
  sh.seq_len = 8192;
  CHECK(ssd_sum(mamba_layer_ops(m, sh)).fwd == doctest::Approx(2 * 8192 * b.fwd));
  CHECK(ssd_sum(mamba_layer_ops(m, sh)).bwd == doctest::Approx(2 * 8192 * b.bwd));
  ModelSpec half = m;
  half.mamba_heads /= 2;
  half.mamba_groups /= 2;
  sh.tp = 2;
  CHECK(ssd_sum(mamba_layer_ops(m, sh)).bwd == doctest::Approx(2 * 8192 * ssd_bytes_per_token(half, p).bwd));
}

namespace {
// A small Mamba-2 mixer: 4 heads of 64 (d_inner 256), 2 groups, state 16, chunk 32; one sequence
// of 128 tokens (4 chunks), bf16.
ModelSpec small_mixer() {
  ModelSpec m = preset("nemotron-h-8b");
  m.mamba_heads = 4;
  m.mamba_head_dim = 64;
  m.mamba_groups = 2;
  m.mamba_state = 16;
  m.mamba_chunk = 32;
  return m;
}

OpShape small_shape() {
  OpShape sh;
  sh.micro_batch = 1;
  sh.seq_len = 128;
  sh.precision_bytes = 2;
  return sh;
}

const OpCost& ssd_op(const std::vector<OpCost>& ops, std::string_view name) {
  for (const OpCost& op : ops)
    if (op.name == name) return op;
  FAIL("no op " << name);
  return ops.front();
}
}  // namespace

TEST_CASE("workloads::mamba_layer_ops: each SSD kernel's bytes from the tensors mamba_ssm allocates, small mixer") {
  const std::vector<OpCost> ops = mamba_layer_ops(small_mixer(), small_shape());
  // Tensors of _mamba_chunk_scan_combined_fwd at b 1, l 128, h 4, p 64, g 2, n 16, c 4 chunks of
  // Q 32, in bytes: x, z, out, out_x [b, l, h, p] bf16; B, C [b, l, g, n] bf16; dt in [b, l, h]
  // bf16; dt_out and dA_cumsum [b, h, c, Q] fp32; chunk states [b, c, h, p, n] fp32 (or bf16 after
  // the state passing); CB [b, c, g, Q, Q] fp32.
  const double x = 128 * 4 * 64 * 2, bc = 128 * 2 * 16 * 2, dt_in = 128 * 4 * 2, dt32 = 4 * 4 * 32 * 4;
  const double states32 = 4 * 4 * 64 * 16 * 4, states16 = states32 / 2, cb = 4 * 2 * 32 * 32 * 4;
  CHECK(ssd_op(ops, "ssd_chunk_cumsum").fwd_bytes.value == doctest::Approx(dt_in + 2 * dt32));
  CHECK(ssd_op(ops, "ssd_chunk_state").fwd_bytes.value == doctest::Approx(bc + x + 2 * dt32 + states32));
  CHECK(ssd_op(ops, "ssd_state_passing").fwd_bytes.value == doctest::Approx(states32 + states16));
  CHECK(ssd_op(ops, "ssd_bmm_chunk").fwd_bytes.value == doctest::Approx(2 * bc + cb));
  // chunk scan: CB, x, dt, dA_cumsum, C, states, z in; out, out_x out.
  CHECK(ssd_op(ops, "ssd_chunk_scan").fwd_bytes.value == doctest::Approx(cb + x + 2 * dt32 + bc + states16 + 3 * x));
  // Backward: dx kernel reads x, dout, B, CB, dt, dA_cumsum, bf16 dstates; writes dx and the
  // fp32 ddt it zeroes first.
  CHECK(ssd_op(ops, "ssd_chunk_scan_chunk_state_bwd_dx").bwd_bytes.value ==
        doctest::Approx(3 * x + 2 * dt32 + bc + cb + states16 + 2 * dt32));
  // dB: x, dt, dA_cumsum, dstates, B in; fp32 dB [b, l, 1 split, g, n] out, its sum read and
  // written; the fp32 ddA [b, h, c, Q] zeroed and written.
  CHECK(ssd_op(ops, "ssd_chunk_state_bwd_db").bwd_bytes.value ==
        doctest::Approx(x + 2 * dt32 + states16 + bc + 2 * bc + 2 * dt32 + 2 * 2 * bc));
  // The FLOPs: the chunk-state matmul x^T B per chunk and head, 2 Q p n x 4 chunks x 4 heads.
  CHECK(ssd_op(ops, "ssd_chunk_state").fwd_flops.value == doctest::Approx(2.0 * 32 * 64 * 16 * 4 * 4));
  CHECK(ssd_op(ops, "ssd_bmm_chunk").fwd_flops.value == doctest::Approx(2.0 * 32 * 32 * 16 * 4 * 2));
}

TEST_CASE("workloads::mamba_layer_ops: the SSD backward reruns the cumsum, CB, chunk states and state passing") {
  const std::vector<OpCost> ops = mamba_layer_ops(small_mixer(), small_shape());
  // _mamba_chunk_scan_combined_bwd recomputes four of the forward's five kernels (the states kept
  // in fp32), one launch each; the chunk scan's output it reads saved (out_x), so none.
  for (std::string_view name : {"ssd_chunk_cumsum", "ssd_chunk_state", "ssd_bmm_chunk"}) {
    const OpCost& op = ssd_op(ops, name);
    CHECK(op.bwd_bytes.value == doctest::Approx(op.fwd_bytes.value));
    CHECK(op.bwd_flops.value == doctest::Approx(op.fwd_flops.value));
    CHECK(op.fwd_kernels == 1);
    CHECK(op.bwd_kernels == 1);
  }
  const OpCost& passing = ssd_op(ops, "ssd_state_passing");
  CHECK(passing.bwd_kernels == 1);
  CHECK(passing.bwd_bytes.value > passing.fwd_bytes.value);  // fp32 out on the rerun
  CHECK(ssd_op(ops, "ssd_chunk_scan").bwd_kernels == 0);
  CHECK(ssd_op(ops, "ssd_chunk_scan").bwd_bytes.value == 0.0);
  // The gradient kernels run in the backward only.
  int fwd = 0, bwd = 0;
  for (const OpCost& op : ops) {
    if (!op.name.starts_with("ssd_")) continue;
    fwd += op.fwd_kernels;
    bwd += op.bwd_kernels;
    if (op.name.find("_bwd") != std::string_view::npos) {
      CHECK(op.fwd_kernels == 0);
      CHECK(op.fwd_bytes.value == 0.0);
    }
  }
  CHECK(fwd == 5);
  // 4 reruns, then per op (kernel + memsets + reductions): dz 1 + 0 + 1, dstates 1, passing 1,
  // dx 1 + 1 + 1, dB 1 + 1 + 1, dC 1 + 1 + 1, dCB 1 + 0 + 1, bmm 2, ddA 1, cumsum 1 + 2, torch ops 7.
  CHECK(bwd == 4 + 2 + 1 + 1 + 3 + 3 + 3 + 2 + 2 + 1 + 3 + 7);
}

TEST_CASE("workloads::mamba_layer_ops: MambaMixer's layout copies of zxBCdt and y only when micro-batch > 1") {
  const ModelSpec& m = preset("nemotron-3-nano-30b-a3b");
  const auto copies = [&](int micro_batch) {
    OpShape sh;
    sh.micro_batch = micro_batch;
    sh.seq_len = 8192;
    for (const OpCost& op : mamba_layer_ops(m, sh))
      if (op.name == "mamba_layout_copies") return op.fwd_bytes.value;
    return 0.0;
  };
  CHECK(copies(1) == 0.0);  // [s, 1, d] and [1, s, d] are the same contiguous layout
  // in_proj's output, 2 x 4096 + 2 x 8 x 128 + 64 wide, and y, 4096 wide: read and written in bf16.
  const double width = 2 * 4096 + 2 * 8 * 128 + 64 + 4096;
  CHECK(copies(4) == doctest::Approx(4 * 8192 * width * 2 * 2));
}
