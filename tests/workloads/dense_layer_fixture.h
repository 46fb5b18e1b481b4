// A dense 8-layer model at s 4096 on one DGX H100 in bf16, shared by the recompute tests
// (recompute_save, recompute_dce): large enough that every pass is bound by the device, not the
// host, so ComputeModel::ops_time is the sum of the ops' device times and a test can check a
// change of the backward against the ops' own forward times.
#pragma once

#include <vector>

#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/transformer_ops.h"

namespace clustersim::testing {

// GELU: GPT-style (MHA, LayerNorm, ffn 4h); gated: Llama-style (GQA 8, RMSNorm, ffn 14336).
inline workloads::ModelSpec dense(workloads::MlpKind mlp) {
  using workloads::MlpKind;
  workloads::ModelSpec m;
  m.layers = 8;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = mlp == MlpKind::Gelu ? 32 : 8;
  m.ffn_hidden = mlp == MlpKind::Gelu ? 16384 : 14336;
  m.seq_len = 4096;
  m.vocab = 32000;
  m.mlp = mlp;
  m.norm = mlp == MlpKind::Gelu ? workloads::NormKind::LayerNorm : workloads::NormKind::RmsNorm;
  m.flash_attention = true;
  return m;
}

// One DGX H100 node and its GPU's compute model in bf16 with the default constants.
struct H100 {
  topology::ClusterSpec cluster = [] {
    topology::ClusterSpec c;
    c.node = *topology::find_node_preset("dgx-h100");
    c.nodes = 1;
    return c;
  }();
  workloads::ComputeModel cm{*topology::find_gpu(cluster.node.gpu), cluster, topology::Precision::Bf16,
                             workloads::ComputeConstants{}};
};

// One layer's ops at micro-batch 1 and the model's sequence length.
inline std::vector<workloads::OpCost> ops_of(const workloads::ModelSpec& m) {
  workloads::OpShape shape;
  shape.micro_batch = 1;
  shape.seq_len = m.seq_len;
  return workloads::layer_ops(m, shape, false);
}

}  // namespace clustersim::testing
