// PyTorch FSDP1 (torch 2.0-2.2, FlatParameter; [sync] zero3_impl = "torch-fsdp1"): the
// memory-bound work FSDP1 adds around ZeRO-3's per-layer collectives, in bytes of HBM traffic per
// parameter of one FSDP unit (a layer) on this rank. Sources, torch/distributed/fsdp at v2.0-v2.2:
//  * gradient copy-out (compute stream, every backward): with use_orig_params the original
//    parameters are views of the unsharded flat parameter (flat_param.py
//    _get_unflat_views_unaligned: torch.split(flat_param, _numels) then .view(shape)), so autograd's
//    split backward concatenates their gradients into the flat gradient: one read and one write of
//    the layer's unsharded gradient in the parameter dtype.
//  * gradient upcast and pre-divide (post-backward stream, before the reduce-scatter):
//    _runtime_utils.py _post_backward_hook casts the unsharded gradient to the reduce dtype when it
//    differs from the parameter dtype (`flat_param.grad.to(handle._reduce_dtype)`), and _reduce_grad
//    divides it in place by the pre-divide factor (_div_if_needed); the reduce-scatter's shard is
//    divided by the post-divide factor. Over n ranks the pre-divide factor starts at 1 and doubles
//    while n % factor == 0 and n / factor > factor (_get_gradient_predivide_factor: 4 for 8
//    ranks), the post-divide factor is n / pre; a factor of 1 launches no kernel.
//  * parameter downcast (pre-unshard stream, before every all-gather): MixedPrecision keeps the
//    fp32 shard and copies it to a param_dtype shard to gather (flat_param.py
//    _use_low_precision_shard): one fp32 read and one 16-bit write of the shard.
#pragma once

namespace clustersim::workloads {

// The pre-divide factor FSDP1 applies to the unsharded gradient over `ranks` ranks.
double fsdp1_predivide_factor(int ranks);

struct Fsdp1LayerBytes {
  double grad_copy = 0;      // compute stream, each backward: bytes per unsharded parameter
  double before_scatter = 0; // post-backward stream, before each reduce-scatter: per unsharded parameter
  double after_scatter = 0;  // post-backward stream, after it: per unsharded parameter (the shard's share)
  double before_gather = 0;  // pre-unshard stream, before each all-gather: per unsharded parameter
};

// The compute stream's copy of each backward's unsharded gradient into the flat gradient, per
// unsharded parameter (read and written in the parameter dtype, whatever the shard group).
double fsdp1_grad_copy_bytes(double param_bytes);

// `param_bytes`: the parameter dtype's bytes (MixedPrecision param_dtype, 2 for bf16); `reduce_bytes`:
// the reduce dtype's (4 for fp32); `master_bytes`: the sharded parameter's own (4); `ranks`: the
// shard group.
Fsdp1LayerBytes fsdp1_layer_bytes(double param_bytes, double reduce_bytes, double master_bytes, int ranks);

}  // namespace clustersim::workloads
