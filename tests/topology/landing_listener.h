// A transfer listener for network-model tests: records each transfer's tag and landing time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/simulator.h"
#include "topology/network_model.h"

namespace clustersim::testing {

struct Landing final : topology::TransferListener {
  sim::Simulator* sim = nullptr;
  std::vector<std::pair<std::uint64_t, double>> done;  // tag, time (s)
  void on_transfer_done(std::uint64_t tag) override { done.emplace_back(tag, sim->now().seconds()); }
};

}  // namespace clustersim::testing
