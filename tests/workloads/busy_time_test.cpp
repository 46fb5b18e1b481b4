// The seconds a layer keeps the tensor pipes (dmon's TENSO) and device memory (MCUTL) busy are read
// off the op's own roofline: in an fp8 run the attention still runs at the bf16 peak and an fp8
// GEMM streams fp8 operands, as ComputeModel::op_time charges them.
#include <doctest/doctest.h>

#include <vector>

#include "tests/workloads/dense_layer_fixture.h"
#include "tests/workloads/op_test_util.h"
#include "workloads/compute/compute_model.h"
#include "workloads/training/stage_cost_parts.h"

using namespace clustersim;
using namespace clustersim::workloads;
using testing::op_named;

TEST_CASE("training::busy time: an fp8 run's attention is busy at the bf16 peak and its GEMMs stream fp8 operands") {
  const testing::H100 h;
  const ComputeModel fp8{*topology::find_gpu(h.cluster.node.gpu), h.cluster, topology::Precision::Fp8, ComputeConstants{}};
  const std::vector<OpCost> ops = testing::ops_of(testing::dense(MlpKind::SwiGlu));
  const OpCost& attention = op_named(ops, "flash_attention");
  const OpCost& qkv = op_named(ops, "qkv_proj");
  for (const Pass pass : {Pass::Forward, Pass::Backward}) {
    // Attention runs in bf16 in both runs: the same FLOPs at the same peak.
    CHECK(tensor_busy_s(fp8, {attention}, pass) == doctest::Approx(tensor_busy_s(h.cm, {attention}, pass)).epsilon(1e-9));
    CHECK(tensor_busy_s(fp8, {attention}, pass) <= fp8.op_time(attention, pass).seconds());
    // The fp8 GEMM: its FLOPs at the fp8 peak (half the bf16 time), its operands one byte each.
    const OpTimeParts p = fp8.op_time_parts(qkv, pass);
    CHECK(tensor_busy_s(fp8, {qkv}, pass) == doctest::Approx(p.flops / p.peak).epsilon(1e-9));
    CHECK(tensor_busy_s(fp8, {qkv}, pass) < 0.6 * tensor_busy_s(h.cm, {qkv}, pass));
    CHECK(memory_busy_s(fp8, {qkv}, pass) == doctest::Approx(p.bytes_s).epsilon(1e-9));
    CHECK(memory_busy_s(fp8, {qkv}, pass) < memory_busy_s(h.cm, {qkv}, pass));
  }
}
