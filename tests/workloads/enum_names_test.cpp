// Every enum's name table (beside the enum: topology/catalog.h, topology/topology.h,
// topology/cluster_spec.h, workloads/specs.h, workloads/collectives/collective_types.h) names each
// value exactly once, and to_string agrees with it: a value added to an enum without a name, or a
// name listed twice, fails here rather than printing "?" in a report.
#include <doctest/doctest.h>

#include <cstddef>
#include <set>
#include <string>
#include <string_view>

#include "sim/enum_names.h"
#include "topology/cluster_spec.h"
#include "workloads/collectives/collective_types.h"
#include "workloads/specs.h"

using namespace clustersim;

namespace {

// The table lists `count` values (the enum's values 0..count-1), each once, with distinct names
// that parse back to it.
template <class E, std::size_t N>
void check_table(const sim::Choice<E> (&table)[N], int count) {
  CHECK(N == static_cast<std::size_t>(count));
  std::set<std::string_view> names;
  for (int i = 0; i < count; ++i) {
    const E v = static_cast<E>(i);
    const std::string_view name = sim::name_of(table, v);
    CAPTURE(i);
    CHECK(name != "?");
    CHECK(names.insert(name).second);
    CHECK(sim::parse(table, name) == v);
  }
}

}  // namespace

TEST_CASE("enum name tables: each lists every value of its enum once, under a distinct name") {
  check_table(topology::kPrecisionNames, 6);
  check_table(topology::kIntraKindNames, 4);
  check_table(topology::kFabricRoutingNames, 2);
  check_table(topology::kFabricNames, 3);
  check_table(workloads::kMlpKindNames, 2);
  check_table(workloads::kNormKindNames, 2);
  check_table(workloads::kScheduleNames, 3);
  check_table(workloads::kOptimizerNames, 3);
  check_table(workloads::kRecomputeNames, 3);
  check_table(workloads::kCollectiveAlgoNames, 7);
  check_table(workloads::kCollectiveOpNames, 7);
  check_table(workloads::kProtocolNames, 3);
}

TEST_CASE("enum name tables: to_string reads the same tables") {
  CHECK(topology::to_string(topology::Precision::Bf16) == "bf16");
  CHECK(topology::to_string(topology::IntraKind::NvlinkBridge) == "nvlink-bridge");
  CHECK(topology::to_string(topology::IntraKind::XgmiMesh) == "xgmi-mesh");
  CHECK(topology::to_string(topology::FabricRouting::FlowHash) == "flow-hash");
  CHECK(workloads::to_string(workloads::CollectiveAlgo::HalvingDoubling) == "halving-doubling");
  CHECK(workloads::to_string(workloads::CollectiveOp::ReduceScatter) == "reducescatter");
  CHECK(workloads::to_string(workloads::Protocol::LL128) == "LL128");
}
