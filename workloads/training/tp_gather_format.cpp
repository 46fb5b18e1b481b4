// The bytes per element of a sequence-parallel all-gather (see tp_gather_format.h).
#include "workloads/training/tp_gather_format.h"

#include <optional>
#include <string_view>

#include "workloads/model/module_precision.h"

namespace clustersim::workloads {

double tp_gather_bytes_per_element(topology::Precision format, Pass pass, double element_bytes,
                                   double block_scale_bytes, bool weight_gradient) {
  // Row-wise, and backward the column-wise copy the weight-gradient GEMM reads.
  const double copies = pass == Pass::Backward && weight_gradient ? 2.0 : 1.0;
  switch (format) {
    case topology::Precision::Fp8: return block_scale_bytes > 0 ? copies * (1.0 + block_scale_bytes) : 1.0;
    case topology::Precision::Nvfp4: return copies * kNvfp4BytesPerElement;
    default: return element_bytes;
  }
}

namespace {

bool feeds_forward_gather(std::string_view n, int side) {
  return side == 0 ? n == "qkv_proj" : n == "mlp_fc1" || n == "mlp_gate" || n == "mamba_in_proj";
}
bool feeds_backward_gather(std::string_view n, int side) {
  return side == 0 ? n == "attention_out_proj"
                   : n == "mlp_fc2" || n == "mlp_down" || n == "shared_expert_down" || n == "mamba_out_proj";
}

}  // namespace

TpGatherBytes tp_gather_bytes(const std::vector<OpCost>& layer, topology::Precision run, double element_bytes,
                              double block_scale_bytes) {
  std::optional<topology::Precision> fwd[2], bwd[2];
  bool trains[2] = {true, true};  // the backward gather's GEMM has a weight gradient
  bool regathers[2] = {true, true};  // the forward gather's GEMM has a weight gradient
  bool mla = false;
  for (const OpCost& op : layer) {
    mla = mla || op.name.starts_with("mla_");
    for (int side = 0; side < 2; ++side) {
      if (!fwd[side] && feeds_forward_gather(op.name, side)) {
        fwd[side] = linear_format(op, run);
        regathers[side] = !op.frozen;
      }
      if (!bwd[side] && feeds_backward_gather(op.name, side)) {
        bwd[side] = linear_format(op, run);
        trains[side] = !op.frozen;
      }
    }
  }
  if (mla) {
    fwd[0] = topology::Precision::Bf16;
    regathers[0] = false;
  }
  // Under an nvfp4 run the linears a per-module recipe drops to fp8 run MXFP8 (specs.h fp8_modules).
  if (run == topology::Precision::Nvfp4) block_scale_bytes = kMxfp8ScaleBytesPerElement;
  TpGatherBytes g;
  for (int side = 0; side < 2; ++side) {
    const int f_side = fwd[side] ? side : 1 - side;
    const std::optional<topology::Precision> f = fwd[f_side];
    const int b_side = bwd[side] ? side : 1 - side;
    const std::optional<topology::Precision> b = bwd[b_side];
    g.fwd[side] = tp_gather_bytes_per_element(f.value_or(topology::Precision::Bf16), Pass::Forward, element_bytes,
                                              block_scale_bytes);
    g.bwd[side] = tp_gather_bytes_per_element(b.value_or(topology::Precision::Bf16), Pass::Backward, element_bytes,
                                              block_scale_bytes, trains[b_side]);
    // The column-wise copy alone: the forward's bytes (see the header).
    g.regather[side] = regathers[f_side] ? g.fwd[side] : 0.0;
  }
  return g;
}

}  // namespace clustersim::workloads
