// The 64-bit tag a collective gives each transfer so that its completion says what it was: a kind
// (2 bits: which leg of the algorithm), an index (30 bits: a member, group or tree node) and a
// chunk (32 bits). Shared by the in-network (NVLS/SHARP) and NVLSTree replays.
#pragma once

#include <cstddef>
#include <cstdint>

namespace clustersim::workloads {

struct TransferTag {
  std::uint64_t kind;  // 0..3
  std::size_t id;      // < 2^30
  std::uint32_t chunk;

  static std::uint64_t encode(std::uint64_t kind, std::size_t id, std::uint32_t chunk) {
    return (kind << 62) | (static_cast<std::uint64_t>(id) << 32) | chunk;
  }
  static TransferTag decode(std::uint64_t tag) {
    return TransferTag{tag >> 62, static_cast<std::size_t>((tag >> 32) & 0x3fffffffULL),
                       static_cast<std::uint32_t>(tag & 0xffffffffULL)};
  }
};

}  // namespace clustersim::workloads
