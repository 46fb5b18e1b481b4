// The pending-transfer pool (topology/pending_pool.h): a record gives back exactly what was stored
// (bit for bit, capped or not, folded or not), takes 6 words plus one per link when uncapped and 2
// more with a rate cap, and a freed record is reused by the next record of its size.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/fair_share.h"
#include "topology/pending_pool.h"

using namespace clustersim;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("topology::PendingPool: records round-trip, 6 + hops words uncapped, 8 + hops capped, reused by size") {
  topology::PendingPool pool;
  auto* who = reinterpret_cast<topology::TransferListener*>(std::uintptr_t{0x1234567890});
  const std::array<topology::LinkId, 8> links{7, 3, 900000, 1, 0, 42, 17, 4000000000U};
  const std::array<std::uint16_t, 8> weights{1, 2, 3, 4, 5, 6, 7, 65535};

  const topology::PendingPool::Transfer plain{1.0 / 3.0, sim::kUnlimited, who, 0xfedcba9876543210ULL};
  const std::uint64_t a = pool.alloc(plain, links, {});
  CHECK(pool.words() == 6 + links.size());  // 32 + 4 per hop bytes: no rate cap kept
  const topology::PendingPool::Transfer capped{123456789.0, 2.5e10 / 3.0, who, 7};
  const std::uint64_t b = pool.alloc(capped, std::span(links).first(5), std::span(weights).first(5));
  CHECK(pool.words() == (6 + 8) + (8 + 5));

  const topology::PendingPool::Transfer ta = pool.transfer(a);
  CHECK(same_bits(ta.bytes, plain.bytes));
  CHECK(ta.rate_cap == sim::kUnlimited);
  CHECK(ta.who == who);
  CHECK(ta.tag == plain.tag);
  CHECK(std::vector<topology::LinkId>(pool.links(a).begin(), pool.links(a).end()) ==
        std::vector<topology::LinkId>(links.begin(), links.end()));
  CHECK(pool.weights(a).empty());

  const topology::PendingPool::Transfer tb = pool.transfer(b);
  CHECK(same_bits(tb.bytes, capped.bytes));
  CHECK(same_bits(tb.rate_cap, capped.rate_cap));
  CHECK(tb.tag == 7);
  REQUIRE(pool.links(b).size() == 5);
  REQUIRE(pool.weights(b).size() == 5);
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(pool.links(b)[k] == links[k]);
    CHECK(pool.weights(b)[k] == weights[k]);
  }
  CHECK(pool.links(a)[7] == links[7]);  // the folded record's weights did not disturb the other one

  // A freed record is reused by the next record of its size, not by one of another size.
  pool.free(a);
  const std::size_t before = pool.words();
  const std::uint64_t c = pool.alloc(capped, std::span(links).first(6), {});  // 8 + 6 = 14 words, as a's
  CHECK(pool.words() == before);
  CHECK(static_cast<std::uint32_t>(c) == static_cast<std::uint32_t>(a));
  CHECK(same_bits(pool.transfer(c).rate_cap, capped.rate_cap));
  const std::uint64_t d = pool.alloc(plain, std::span(links).first(6), {});  // 12 words: new
  CHECK(pool.words() == before + 12);
  pool.free(b);
  pool.free(c);
  pool.free(d);
  pool.release();
  CHECK(pool.words() == 0);
}
