// The memory advisor against a fake evaluator whose savings per override are written out below,
// so each expectation follows from the table by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/catalog.h"
#include "workloads/memory/advice.h"

using namespace clustersim;
using namespace clustersim::workloads;

namespace {

constexpr double kGB = 1e9;

// Before any change the job needs 100 GB; each override saves what this table says (tp=2 is one
// the loader rejects). A GPU or MIG override changes the capacity to that GPU's or slice's memory.
class FakeEvaluator final : public AdviceEvaluator {
 public:
  FakeEvaluator(AdviceSubject job, std::int64_t capacity, bool gpus_load)
      : job_(std::move(job)), capacity_(capacity), gpus_load_(gpus_load) {}

  std::optional<AdviceSubject> load(const std::vector<std::string>&) const override { return job_; }

  std::optional<MemoryFit> fit(const std::vector<std::string>& overrides) const override {
    static const std::map<std::string, double> kSaves = {
        {"training.recompute=selective", 10 * kGB},  {"parallelism.distributed_optimizer=true", 15 * kGB},
        {"parallelism.zero=1", 15 * kGB},            {"parallelism.zero=2", 20 * kGB},
        {"parallelism.zero=3", 25 * kGB},            {"training.micro_batch=2", 5 * kGB},
        {"training.micro_batch=1", 8 * kGB},         {"parallelism.tp=4", 30 * kGB},
        {"parallelism.tp=8", 40 * kGB},              {"training.recompute=full", 35 * kGB}};
    MemoryFit f;
    f.capacity = capacity_;
    double required = 100 * kGB;
    for (const std::string& o : overrides) {
      if (o == "parallelism.tp=2") return std::nullopt;
      if (const auto it = kSaves.find(o); it != kSaves.end()) required -= it->second;
      if (o.rfind("cluster.", 0) == 0 && !gpus_load_) return std::nullopt;
      if (o.rfind("cluster.node.gpu=", 0) == 0) f.capacity = std::llround(topology::find_gpu(o.substr(17))->memory.value);
      if (o.rfind("cluster.gpu_overrides.mig=", 0) == 0) {
        for (const auto& m : topology::mig_profiles(job_.gpu))
          if (m.profile == o.substr(26)) f.capacity = std::llround(m.memory().value);
      }
    }
    f.required = std::llround(required);
    f.fits = f.required <= f.capacity;
    return f;
  }

 private:
  AdviceSubject job_;
  std::int64_t capacity_;
  bool gpus_load_;
};

AdviceSubject dgx_job() {
  AdviceSubject job;
  job.parallel.dp = 8;
  job.training.micro_batch = 4;
  job.gpu = "a100-sxm4-80gb";
  return job;
}

}  // namespace

TEST_CASE("workloads::advise_memory: every change is re-evaluated, rejected ones are left out, fitting ones come first") {
  const AdviceSubject job = dgx_job();
  const FakeEvaluator ev(job, std::llround(80 * kGB), true);
  const MemoryFit before = *ev.fit({});
  REQUIRE_FALSE(before.fits);
  const std::vector<MemoryAdviceItem> advice = advise_memory(job, before, ev);
  REQUIRE_FALSE(advice.empty());
  bool seen_no_fit = false;
  for (const MemoryAdviceItem& a : advice) {
    INFO(a.set_flags());
    const MemoryFit after = *ev.fit(a.overrides);
    CHECK(a.required_bytes == after.required);
    CHECK(a.saved_bytes == before.required - after.required);
    CHECK(a.fits == after.fits);
    CHECK(std::find(a.overrides.begin(), a.overrides.end(), "parallelism.tp=2") == a.overrides.end());
    if (!a.fits) seen_no_fit = true;
    CHECK_FALSE((a.fits && seen_no_fit));
  }
  // The cheapest change that fits in the order of preference: ZeRO-2 (80 GB of 80).
  CHECK(advice.front().set_flags() == "--set parallelism.zero=2");
  // A layout change keeps the GPU count: an explicit dp shrinks with it.
  const bool tp4 = std::any_of(advice.begin(), advice.end(), [](const MemoryAdviceItem& a) {
    return a.overrides == std::vector<std::string>{"parallelism.tp=4", "parallelism.dp=2"};
  });
  CHECK(tp4);
}

TEST_CASE("workloads::advise_memory: when no single change fits, a greedy combination that fits is added") {
  const AdviceSubject job = dgx_job();
  const FakeEvaluator ev(job, std::llround(50 * kGB), false);  // and no other GPU loads
  const MemoryFit before = *ev.fit({});
  const std::vector<MemoryAdviceItem> advice = advise_memory(job, before, ev);
  REQUIRE_FALSE(advice.empty());
  // Step 1: nothing fits, tp=8 saves the most (60 GB left); step 2: selective recompute, the first
  // in preference order, reaches 50 GB.
  const MemoryAdviceItem& combined = advice.front();
  CHECK(combined.fits);
  CHECK(combined.overrides ==
        std::vector<std::string>{"parallelism.tp=8", "parallelism.dp=1", "training.recompute=selective"});
  CHECK(combined.required_bytes == std::llround(50 * kGB));
  CHECK(combined.why ==
        "tensor parallel 1 -> 8, dp 8 -> 1 (same GPUs); selective recompute: attention scores are recomputed, not kept");
}

TEST_CASE("workloads::advise_memory: on a MIG slice the GPU advice is a larger slice of the catalog's MIG table") {
  AdviceSubject job = dgx_job();
  job.mig = "1g.10gb";
  job.parallel.dp = 1;  // no sharding or layout change to offer
  job.training.micro_batch = 1;
  job.training.recompute = Recompute::Full;
  const FakeEvaluator ev(job, std::llround(9.5 * 1073741824.0), true);
  const MemoryFit before = *ev.fit({});
  // The fake's 100 GB fits no slice: the advice is the largest slice that loads, and nothing else.
  const std::vector<MemoryAdviceItem> advice = advise_memory(job, before, ev);
  REQUIRE(advice.size() == 1);
  CHECK(advice[0].overrides == std::vector<std::string>{"cluster.gpu_overrides.mig=7g.80gb"});
  CHECK(advice[0].why == "a larger MIG slice, 7g.80gb (79.00 GiB)");
  CHECK(advice[0].capacity_bytes == std::llround(79.0 * 1073741824.0));
}

TEST_CASE("workloads::merge_overrides: a key set again replaces its earlier value") {
  CHECK(merge_overrides({"a.x=1", "b.y=2"}, {"a.x=3", "c.z=4"}) == std::vector<std::string>{"b.y=2", "a.x=3", "c.z=4"});
}
