// Names, parsing and nccl-tests factors for collectives (see collective_types.h).
#include "workloads/collectives/collective_types.h"

#include <array>
#include <utility>

namespace clustersim::workloads {
namespace {
constexpr std::array<std::pair<CollectiveOp, std::string_view>, 7> kOps{{
    {CollectiveOp::AllReduce, "allreduce"}, {CollectiveOp::AllGather, "allgather"},
    {CollectiveOp::ReduceScatter, "reducescatter"}, {CollectiveOp::Broadcast, "broadcast"},
    {CollectiveOp::Reduce, "reduce"}, {CollectiveOp::AllToAll, "alltoall"},
    {CollectiveOp::SendRecv, "sendrecv"}}};
constexpr std::array<std::pair<CollectiveAlgo, std::string_view>, 7> kAlgos{{
    {CollectiveAlgo::Ring, "ring"}, {CollectiveAlgo::Tree, "tree"},
    {CollectiveAlgo::HalvingDoubling, "halving-doubling"}, {CollectiveAlgo::Hierarchical, "hierarchical"},
    {CollectiveAlgo::Direct, "direct"}, {CollectiveAlgo::InNetwork, "in-network"},
    {CollectiveAlgo::Auto, "auto"}}};
constexpr std::array<std::pair<Protocol, std::string_view>, 3> kProtocols{{
    {Protocol::LL, "LL"}, {Protocol::LL128, "LL128"}, {Protocol::Simple, "Simple"}}};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [k, v] : table) {
    if (k == e) return v;
  }
  return "?";
}
template <class E, std::size_t N>
std::optional<E> parse_in(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [k, v] : table) {
    if (v == s) return k;
  }
  return std::nullopt;
}
}  // namespace

std::string_view to_string(CollectiveOp op) { return name_of(kOps, op); }
std::string_view to_string(CollectiveAlgo a) { return name_of(kAlgos, a); }
std::string_view to_string(Protocol p) { return name_of(kProtocols, p); }
std::optional<CollectiveOp> parse_op(std::string_view s) { return parse_in(kOps, s); }
std::optional<CollectiveAlgo> parse_algo(std::string_view s) { return parse_in(kAlgos, s); }
std::optional<Protocol> parse_protocol(std::string_view s) { return parse_in(kProtocols, s); }

std::vector<std::string_view> op_names() {
  std::vector<std::string_view> out;
  for (const auto& e : kOps) out.push_back(e.second);
  return out;
}
std::vector<std::string_view> algo_names() {
  std::vector<std::string_view> out;
  for (const auto& e : kAlgos) out.push_back(e.second);
  return out;
}

double busbw_factor(CollectiveOp op, int n) {
  const double nn = static_cast<double>(n);
  switch (op) {
    case CollectiveOp::AllReduce: return 2.0 * (nn - 1) / nn;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll: return (nn - 1) / nn;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv: return 1.0;
  }
  return 1.0;
}

double wire_factor(Protocol p) {
  switch (p) {
    case Protocol::LL: return 2.0;
    case Protocol::LL128: return 128.0 / 120.0;
    case Protocol::Simple: return 1.0;
  }
  return 1.0;
}

}  // namespace clustersim::workloads
