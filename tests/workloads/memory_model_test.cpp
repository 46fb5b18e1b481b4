// The memory model's per-term rules (its advice: memory_advice_test.cpp; the published rows are
// checked in tests/analysis/memory_report_test.cpp, through `clustersim validate --memory`).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "workloads/memory/memory_model.h"
#include "workloads/model/model_presets.h"

using namespace clustersim::workloads;
using clustersim::sim::Bytes;

TEST_CASE("workloads::memory model: Megatron's distributed optimizer costs 6 + 12/d bytes per parameter") {
  ParallelSpec par;
  par.dp = 8;
  par.distributed_optimizer = true;
  TrainingSpec tr;
  tr.precision = clustersim::topology::Precision::Bf16;
  const ModelStates s = model_state_bytes(1e9, par, tr);
  CHECK(s.total().value == doctest::Approx(1e9 * (6.0 + 12.0 / 8)));
  par.distributed_optimizer = false;
  CHECK(model_state_bytes(1e9, par, tr).total().value == doctest::Approx(18e9));
}

TEST_CASE("workloads::memory model: optimizer and precision choices set the bytes per parameter") {
  TrainingSpec tr;
  tr.precision = clustersim::topology::Precision::Fp32;
  CHECK(state_bytes_per_param(tr).weights == 4);
  CHECK(state_bytes_per_param(tr).optimizer == 8);
  tr.optimizer = Optimizer::Sgd;
  CHECK(state_bytes_per_param(tr).optimizer == 0);
  tr.precision = clustersim::topology::Precision::Bf16;
  CHECK(state_bytes_per_param(tr).optimizer == 4);
  tr.optimizer = Optimizer::SgdMomentum;
  CHECK(state_bytes_per_param(tr).optimizer == 8);
  tr.grad_dtype = StateDtype::Bf16;
  CHECK(state_bytes_per_param(tr).grads == 2);
}

TEST_CASE("workloads::memory model: 1F1B stage i holds min(pp - i, m) micro-batches, GPipe all m, interleaved Megatron's warm-up") {
  ParallelSpec par;
  par.pp = 4;
  CHECK(micro_batches_in_flight(par, 16, 0) == 4);
  CHECK(micro_batches_in_flight(par, 16, 3) == 1);
  CHECK(micro_batches_in_flight(par, 2, 0) == 2);
  par.schedule = Schedule::GPipe;
  CHECK(micro_batches_in_flight(par, 16, 3) == 16);
  par.schedule = Schedule::Interleaved;
  par.virtual_stages = 2;
  CHECK(micro_batches_in_flight(par, 16, 0) == doctest::Approx(4 * (1 + 3.0 / 8)));
  // Megatron-Core's interleaved warm-up on rank r: 2 (pp - r - 1) + (v - 1) pp chunk forwards, one
  // more in steady state, at most m x v; / v in units of the stage. The last rank warms up its
  // earlier chunks too: (0 + 4 + 1) / 2, not 1 + 3/8.
  CHECK(micro_batches_in_flight(par, 16, 3) == doctest::Approx(2.5));
  CHECK(micro_batches_in_flight(par, 16, 1) == doctest::Approx((4 + 4 + 1) / 2.0));
  CHECK(micro_batches_in_flight(par, 2, 0) == doctest::Approx(2.0));  // all 2 x 2 chunk forwards
}

TEST_CASE("workloads::memory model: the report names the most loaded stage and every line adds up") {
  MemoryRequest q;
  q.model = *find_model_preset("gpt3-175b");
  q.parallel.tp = 8;
  q.parallel.pp = 8;
  q.parallel.dp = 16;
  q.training.global_batch = 1536;
  q.training.micro_batch = 1;
  q.capacity = Bytes{80e9};
  const MemoryBreakdown b = estimate_memory(q);
  CHECK(b.stage == 0);
  CHECK(b.stage_reason.find("first") != std::string::npos);
  double sum = 0;
  for (const MemoryLine& l : b.lines) sum += l.bytes.value;
  CHECK(sum == doctest::Approx(b.total.value));
  CHECK(b.find_line("embedding: weights") != nullptr);
  CHECK(b.find_line("gradient buckets") != nullptr);
  CHECK(b.find_line("CUDA context") != nullptr);
  const MemoryBreakdown last = stage_memory(q, 7);
  CHECK(last.find_line("logits and loss (fp32)")->bytes.value == doctest::Approx(2048.0 * 51200 / 8 * 4));
}

TEST_CASE("workloads::memory model: the distributed optimizer's gradient buckets are views of its buffer, not copies") {
  MemoryRequest q;
  q.model = *find_model_preset("gpt3-175b");
  q.parallel.tp = 8;
  q.parallel.pp = 8;
  q.parallel.dp = 16;
  q.training.global_batch = 1536;
  q.training.micro_batch = 1;
  q.sync.bucket_mb = 500;  // Megatron-Core's max(40M, 1M x dp) parameters at 4 B: ~153 MiB at dp 16; larger here
  q.capacity = Bytes{80e9};
  const MemoryBreakdown ddp = estimate_memory(q);
  const MemoryLine* copies = ddp.find_line("gradient buckets");
  REQUIRE(copies != nullptr);
  CHECK(copies->bytes.value == doctest::Approx(2 * 500 * 1048576.0));
  q.parallel.distributed_optimizer = true;
  const MemoryBreakdown dist = estimate_memory(q);
  CHECK(dist.find_line("gradient buckets") == nullptr);
}

namespace {

ModelSpec gpt3_175b(bool flash) {
  ModelSpec m = *find_model_preset("gpt3-175b");  // h 12288, a 96, s 2048, GELU, f = 4h, dropout
  m.flash_attention = flash;
  return m;
}

}  // namespace

TEST_CASE("workloads::memory model: without flash attention a GPT layer keeps Korthikanti's Table 2 bytes") {
  // s = 2048, b = 1, h = 12288, a = 96: sbh = 25,165,824; 5as^2b = 2,013,265,920.
  const ModelSpec m = gpt3_175b(false);
  const double sbh = 2048.0 * 12288, s2 = 5.0 * 96 * 2048 * 2048;
  // none: sbh * 34 + 5as^2b
  CHECK(activation_bytes_per_layer(m, 1, 1, false, Recompute::None).value == doctest::Approx(34 * sbh + s2));
  // TP 8: sbh * (10 + 24/8) + 5as^2b/8 = 327,155,712 + 251,658,240 = 578,813,952
  CHECK(activation_bytes_per_layer(m, 1, 8, false, Recompute::None).value == 578813952.0);
  // TP 8 + SP: sbh * 34/8 + 5as^2b/8
  CHECK(activation_bytes_per_layer(m, 1, 8, true, Recompute::None).value == doctest::Approx(34 * sbh / 8 + s2 / 8));
  // selective drops the s^2 terms: sbh * (10 + 24/8), with SP sbh * 34/8
  CHECK(activation_bytes_per_layer(m, 1, 8, false, Recompute::Selective).value == doctest::Approx(13 * sbh));
  CHECK(activation_bytes_per_layer(m, 1, 8, true, Recompute::Selective).value == doctest::Approx(34 * sbh / 8));
}

TEST_CASE("workloads::memory model: flash attention keeps the logsumexp instead of the s x s scores") {
  // TP 8, b = 1: non-flash keeps 5as^2b/t = 5*96*2048^2/8 = 251,658,240 B of softmax output,
  // dropout mask and dropout output; flash keeps the fp32 logsumexp 4*a*s*b/t = 98,304 B instead.
  // Q, K, V and the attention output are the same tensors in both (MHA: K, V at full width).
  const double scores = 5.0 * 96 * 2048 * 2048 / 8, lse = 4.0 * 96 * 2048 / 8;
  for (bool sp : {false, true}) {
    INFO("sequence parallel ", sp);
    const double plain = activation_bytes_per_layer(gpt3_175b(false), 1, 8, sp, Recompute::None).value;
    const double flash = activation_bytes_per_layer(gpt3_175b(true), 1, 8, sp, Recompute::None).value;
    CHECK(plain - flash == doctest::Approx(scores - lse));
  }
  // Selective recompute checkpoints the core attention: flash then keeps no logsumexp either, and
  // both kernels keep the same sbh(10 + 24/t).
  CHECK(activation_bytes_per_layer(gpt3_175b(true), 1, 8, false, Recompute::Selective).value ==
        activation_bytes_per_layer(gpt3_175b(false), 1, 8, false, Recompute::Selective).value);
  // Every saved tensor is named and the list sums to the per-layer bytes.
  double sum = 0;
  for (const SavedTensor& x : saved_layer_tensors(gpt3_175b(true), 1, 8, true, Recompute::None)) sum += x.bytes;
  CHECK(sum == activation_bytes_per_layer(gpt3_175b(true), 1, 8, true, Recompute::None).value);
}

TEST_CASE("workloads::memory model: grouped-query attention shrinks the K and V that flash attention keeps") {
  // Llama 3 70B: s 8192, h 8192, 64 heads of d = 128, 8 KV heads: K and V are 2 * s * (8*128) B
  // = 16,777,216 B each at t = 1, b = 1, against 2 * s * h = 134,217,728 B with 64 KV heads.
  ModelSpec gqa = *find_model_preset("llama3-70b");
  REQUIRE(gqa.kv_heads == 8);
  ModelSpec mha = gqa;
  mha.kv_heads = mha.heads;
  const double k_gqa = 2.0 * 8192 * 8 * 128, k_mha = 2.0 * 8192 * 8192;
  const double diff = activation_bytes_per_layer(mha, 1, 1, false, Recompute::None).value -
                      activation_bytes_per_layer(gqa, 1, 1, false, Recompute::None).value;
  CHECK(diff == doctest::Approx(2 * (k_mha - k_gqa)));  // 234,881,024 B
  // Without flash attention Megatron repeats the KV groups before the batched GEMMs that save
  // K and V, so the group count changes nothing there.
  gqa.flash_attention = mha.flash_attention = false;
  CHECK(activation_bytes_per_layer(mha, 1, 1, false, Recompute::None).value ==
        activation_bytes_per_layer(gqa, 1, 1, false, Recompute::None).value);
}

TEST_CASE("workloads::memory model: a SwiGLU layer keeps three f-wide tensors and no dropout masks") {
  // Llama 3 8B at t = 1, b = 1, flash: s 8192, h 4096, a 32, 8 KV heads (width 1024), f 14336.
  //   4 x 2sbh (norm and GEMM inputs)         = 268,435,456
  //   Q 2sbh + O 2sbh                         = 134,217,728
  //   K, V 2 x 2 s * 1024                     =  33,554,432
  //   gate, up, SwiGLU output 3 x 2 s f       = 704,643,072
  //   logsumexp 4 a s                         =   1,048,576
  //   total                                   = 1,141,899,264
  const ModelSpec m = *find_model_preset("llama3-8b");
  REQUIRE(m.ffn_hidden == 14336);
  CHECK(activation_bytes_per_layer(m, 1, 1, false, Recompute::None).value == 1141899264.0);
}

TEST_CASE("workloads::memory model: full recompute with TP + SP keeps the sharded layer input 2sbh/t") {
  // GPT-3 175B, t = 8, b = 1: the checkpointed input is 2sbh = 50,331,648 B, 2sbh/8 = 6,291,456 B
  // under sequence parallelism.
  CHECK(activation_bytes_per_layer(gpt3_175b(true), 1, 8, false, Recompute::Full).value == 50331648.0);
  CHECK(activation_bytes_per_layer(gpt3_175b(true), 1, 8, true, Recompute::Full).value == 6291456.0);
  MemoryRequest q;
  q.model = gpt3_175b(true);
  q.parallel.tp = 8;
  q.parallel.pp = 8;
  q.parallel.dp = 16;
  q.parallel.sequence_parallel = true;
  q.training.global_batch = 1536;
  q.training.recompute = Recompute::Full;
  q.capacity = Bytes{80e9};
  const MemoryBreakdown b = stage_memory(q, 0);
  // 12 layers on stage 0, 8 micro-batches in flight (1F1B, pp 8, m = 96).
  CHECK(b.find_line("layers: activations")->bytes.value == doctest::Approx(6291456.0 * 12 * 8));
  // The one layer being recomputed holds its TP+SP-sharded, flash working set, once:
  // sbh * 34/8 + 4 a s b / 8 = 106,954,752 + 98,304 = 107,053,056 B.
  CHECK(b.find_line("layers: recompute working set")->bytes.value == doctest::Approx(107053056.0));
}

TEST_CASE("workloads::memory model: Llama 3 405B at seq 8192 on TP8 x PP16 fits an 80 GB H100") {
  // Meta's layout (Llama 3 paper, Table 4): TP 8, PP 16, DP 128, 16 micro-batches of 1 x 8192
  // per replica, bf16, no activation checkpointing; FSDP sharding the optimizer states and the
  // gradients (ZeRO-2 here). 128 layers stand in for 126 until stages may be uneven (8 per stage).
  MemoryRequest q;
  q.model = *find_model_preset("llama3-405b");
  q.model.layers = 128;
  q.parallel.tp = 8;
  q.parallel.pp = 16;
  q.parallel.dp = 128;
  q.parallel.sequence_parallel = true;
  q.parallel.zero = 2;
  q.training.global_batch = 2048;
  q.training.micro_batch = 1;
  q.training.precision = clustersim::topology::Precision::Bf16;
  q.capacity = Bytes{80.0 * 1073741824.0};
  // Per layer and micro-batch (s 8192, h 16384, a 128, 8 KV heads of 128, f 53248, t 8, SP, flash):
  //   4 x 2sbh/8 = 134,217,728; Q + O 2 x 2sbh/8 = 67,108,864; K + V 2 x 2 s 1024 / 8 = 4,194,304;
  //   3 x 2 s f / 8 = 327,155,712; logsumexp 4 a s / 8 = 524,288; sum 533,200,896 B
  //   x 8 layers x 16 micro-batches in flight = 68,249,714,688 B (63.6 GiB).
  CHECK(activation_bytes_per_layer(q.model, 1, 8, true, Recompute::None).value == 533200896.0);
  const MemoryBreakdown b = estimate_memory(q);
  CHECK(b.activations.value == doctest::Approx(68249714688.0));
  INFO("total ", b.total.value / 1073741824.0, " GiB on stage ", b.stage);
  CHECK(b.fits());
  // With the distributed optimizer alone (fp32 gradients unsharded, 4 B/param on 3.45e9 params)
  // the 128-layer stand-in does not fit: the 126-layer model with one layer less on the first
  // stage is what ran.
  q.parallel.zero = 0;
  q.parallel.distributed_optimizer = true;
  CHECK_FALSE(estimate_memory(q).fits());
}

TEST_CASE("workloads::memory model: 16-bit gradients and optimizer states halve their bytes per parameter") {
  // apex DistributedFusedAdam with grad_sync_dtype = dtype = bf16 (dgxc-benchmarking's Nemotron-4
  // 340B recipe): params shard, exp_avg and exp_avg_sq in bf16 = 6 B, gradients 2 B.
  TrainingSpec tr;
  tr.precision = clustersim::topology::Precision::Bf16;
  CHECK(state_bytes_per_param(tr).grads == 4);
  CHECK(state_bytes_per_param(tr).optimizer == 12);
  tr.grad_dtype = StateDtype::Bf16;
  tr.optimizer_dtype = StateDtype::Bf16;
  CHECK(state_bytes_per_param(tr).grads == 2);
  CHECK(state_bytes_per_param(tr).optimizer == 6);
  ParallelSpec par;
  par.dp = 2;
  par.distributed_optimizer = true;
  // Megatron's distributed optimizer: 2 (weights) + 2 (bf16 grads) + 6 / dp, against 6 + 12 / dp.
  CHECK(model_state_bytes(1e9, par, tr).total().value == doctest::Approx(1e9 * (4.0 + 6.0 / 2)));
  // fp32 training keeps 4-B gradients whatever the mixed-precision setting says.
  tr.precision = clustersim::topology::Precision::Fp32;
  CHECK(state_bytes_per_param(tr).grads == 4);
  CHECK(state_bytes_per_param(tr).optimizer == 4);  // Adam m, v in bf16
}

TEST_CASE("workloads::memory model: DeepSpeed ZeRO-3 holds a window of live submodules, FSDP two layers") {
  // One GPT layer at h = 20480, t = 1 (SC'21's 529.6B): QKV 3h^2 = 1.258e9, out-projection h^2 =
  // 0.419e9, fc1 = fc2 = 4h^2 = 1.678e9 params; stage3_max_live_parameters 1e9, prefetch 5e8.
  // Forward: QKV alone is over the limit (no prefetch); at the out-projection 0.58e9 are left, so
  // it prefetches up to 5e8 and takes fc1 whole: h^2 + 4h^2 live = 10 h^2 B at 2 B. Backward:
  // fc1 or fc2 running with its unsharded gradient, 4h^2 x (2 + 2) B = 16 h^2 B: the peak.
  const double h = 20480, h2 = h * h;
  const std::vector<double> layer = {3 * h2, h2, 4 * h2, 4 * h2};
  std::vector<double> two = layer;
  two.insert(two.end(), layer.begin(), layer.end());
  CHECK(deepspeed_live_bytes(two, 1e9, 5e8, 2.0, 0.0) == doctest::Approx(10 * h2));
  CHECK(deepspeed_live_bytes(two, 1e9, 5e8, 2.0, 2.0) == doctest::Approx(16 * h2));
  // Small submodules: each step prefetches up to 3e8 more while under the 1e9 limit, so the live
  // set grows 4e8, 6e8, 8e8, 1e9 and stays at the limit (20 modules of 1e8 params, 1 B each).
  CHECK(deepspeed_live_bytes(std::vector<double>(20, 1e8), 1e9, 3e8, 1.0, 0.0) == doctest::Approx(1e9));
  // Through the memory model: the SC'21 529.6B stage gathers 16 h^2 B with "module", 2 layers of
  // 12 h^2 (+ biases and norms) x 2 B with "block" (FSDP).
  MemoryRequest q;
  q.model = *find_model_preset("gpt3-175b");
  q.model.layers = 105;
  q.model.hidden = 20480;
  q.model.heads = 128;
  q.model.ffn_hidden = 4 * 20480;
  q.parallel.dp = 640;
  q.parallel.zero = 3;
  q.training.precision = clustersim::topology::Precision::Fp16;
  const double block = zero3_gathered_bytes(q, 0);
  CHECK(block == doctest::Approx(2 * q.model.layer_parameters() * 2.0));
  q.parallel.zero3_gather = Zero3Gather::Module;
  CHECK(zero3_gathered_bytes(q, 0) == doctest::Approx(16 * h2));
  CHECK(stage_memory(q, 0).find_line("ZeRO-3 gathered parameters")->bytes.value == doctest::Approx(16 * h2));
  // The FSDP line names its layer count (it printed a garbage integer through a double before).
  q.parallel.zero3_gather = Zero3Gather::Block;
  CHECK(stage_memory(q, 0).find_line("ZeRO-3 gathered parameters")->formula.rfind("2 layers'", 0) == 0);
}

TEST_CASE("workloads::memory model: under FP8 the GEMM inputs Transformer Engine saves take 1 B") {
  // Llama 3 8B at t = 1, b = 1, flash (1,141,899,264 B in bf16, above). FP8 saves the QKV GEMM input
  // and the MLP input (s h each) and the fc2 input (s f) at 1 B instead of 2, and adds the
  // out-projection's own 1-B copy of O (s h): 2sh + sf - sh = sh + sf fewer bytes.
  const ModelSpec m = *find_model_preset("llama3-8b");
  const double sh = 8192.0 * 4096, sf = 8192.0 * 14336;
  const double bf16 = activation_bytes_per_layer(m, 1, 1, false, Recompute::None).value;
  const double fp8 = activation_bytes_per_layer(m, 1, 1, false, Recompute::None,
                                                activation_bytes_for(clustersim::topology::Precision::Fp8)).value;
  CHECK(bf16 == 1141899264.0);
  CHECK(bf16 - fp8 == doctest::Approx(sh + sf));
  CHECK(activation_bytes_for(clustersim::topology::Precision::Bf16).gemm_input == 2.0);
  CHECK(activation_bytes_for(clustersim::topology::Precision::Fp32).element == 4.0);
}

TEST_CASE("workloads::memory model: an explicit dropout = false drops the GELU model's masks") {
  // GPT-3 175B, t = 8, SP, flash: the two 1-B masks per layer are sbh/8 each.
  ModelSpec m = gpt3_175b(true);
  const double with = activation_bytes_per_layer(m, 1, 8, true, Recompute::None).value;
  m.dropout = false;
  CHECK(with - activation_bytes_per_layer(m, 1, 8, true, Recompute::None).value == doctest::Approx(2 * 2048.0 * 12288 / 8));
  m.dropout.reset();
  CHECK(m.trains_with_dropout());
  m.mlp = MlpKind::SwiGlu;
  CHECK_FALSE(m.trains_with_dropout());
}

TEST_CASE("workloads::memory model: the peak holds the largest transient phase, not every transient") {
  // GPT-3 1.3B on one GPU without flash attention, full recompute: the layer backward holds the
  // score workspace and the recomputed working set; the loss holds the fp32 logits. They never
  // coexist: the smaller (the loss here) is listed but not counted.
  MemoryRequest q;
  q.model = *find_model_preset("gpt3-1.3b");
  q.model.flash_attention = false;
  q.training.global_batch = 8;
  q.training.micro_batch = 2;
  q.training.recompute = Recompute::Full;
  q.capacity = Bytes{80e9};
  const MemoryBreakdown b = estimate_memory(q);
  const MemoryLine* logits = b.find_line("logits and loss (fp32)");
  const MemoryLine* workspace = b.find_line("attention score workspace");
  const MemoryLine* working = b.find_line("layers: recompute working set");
  REQUIRE(logits);
  REQUIRE(workspace);
  REQUIRE(working);
  CHECK(logits->bytes.value < workspace->bytes.value + working->bytes.value);
  CHECK_FALSE(logits->at_peak);
  CHECK(workspace->at_peak);
  CHECK(working->at_peak);
  double all = 0, counted = 0;
  for (const MemoryLine& l : b.lines) all += l.bytes.value, counted += l.at_peak ? l.bytes.value : 0.0;
  CHECK(b.total.value == doctest::Approx(counted));
  CHECK(b.total.value == doctest::Approx(all - logits->bytes.value));
  // With flash attention and no recompute no layer transient is left: the loss is the peak phase.
  q.model.flash_attention = true;
  q.training.recompute = Recompute::None;
  const MemoryBreakdown flash = estimate_memory(q);
  CHECK(flash.find_line("logits and loss (fp32)")->at_peak);
}

TEST_CASE("workloads::memory model: an FSDP layer of an MoE model gathers only the rank's own experts") {
  // Mixtral 8x7B (8 experts of 3 x 4096 x 14336 params) at zero 3, dp 16: with ep 8 a rank holds
  // one expert, so two gathered layers are 2 x (attention + router + 1 expert) x 2 B; with ep 1 all
  // eight experts (Megatron-FSDP gathers expert parameters within the expert-data-parallel group).
  MemoryRequest q;
  q.model = *find_model_preset("mixtral-8x7b");
  q.parallel.dp = 16;
  q.parallel.zero = 3;
  q.training.precision = clustersim::topology::Precision::Bf16;
  const double expert = 3.0 * 4096 * 14336;
  const double all = zero3_gathered_bytes(q, 0);
  CHECK(all == doctest::Approx(2 * q.model.layer_parameters_per_ep_rank(1) * 2.0));
  q.parallel.ep = 8;
  const double own = zero3_gathered_bytes(q, 0);
  CHECK(own == doctest::Approx(2 * q.model.layer_parameters_per_ep_rank(8) * 2.0));
  CHECK(all - own == doctest::Approx(2 * 7 * expert * 2.0));
  // A dense model keeps its layer.
  MemoryRequest d = q;
  d.model = *find_model_preset("llama3-8b");
  d.parallel.ep = 1;
  CHECK(zero3_gathered_bytes(d, 0) == doctest::Approx(2 * d.model.layer_parameters() * 2.0).epsilon(0.01));
}
