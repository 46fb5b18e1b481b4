// `clustersim run` works for every model preset on every node preset where the model fits: each
// pair gets a plain layout (tensor parallel inside the node as far as the heads allow, data
// parallel over the rest, selective recompute, micro-batch 1) and is either simulated or refused
// by the memory model -- never a crash or an invalid result.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "analysis/run_report.h"
#include "scenarios/loader.h"
#include "topology/catalog.h"
#include "workloads/model/model_presets.h"

using namespace clustersim;

TEST_CASE("analysis::run_scenario: every model preset on every node preset runs or is refused for memory") {
  int simulated = 0, refused = 0;
  for (const auto& node : topology::all_node_presets()) {
    for (const auto& model : workloads::all_model_presets()) {
      int tp = node.gpus;
      while (tp > 1 && (model.heads % tp != 0 || model.kv_heads % tp != 0)) tp /= 2;
      const int dp = node.gpus / tp;
      const std::string toml = "[cluster]\nnode = \"" + node.id + "\"\n[model]\npreset = \"" + model.id +
                               "\"\n[parallelism]\ntp = " + std::to_string(tp) + "\npp = 1\ndp = " + std::to_string(dp) +
                               "\n[training]\nglobal_batch = " + std::to_string(8 * dp) +
                               "\nmicro_batch = 1\nrecompute = \"selective\"\n";
      INFO(node.id << " x " << model.id);
      const auto spec = scenarios::parse_scenario(toml, "matrix.toml");
      analysis::RunOptions o;
      const auto r = analysis::run_scenario(spec, o);
      const auto& mem = r.memory;
      if (!mem.fits) {
        // Refused with its reason: more bytes than the GPU holds, or the allocator replay ran out;
        // and the person reading the memory report is told so.
        ++refused;
        CHECK((mem.required > mem.capacity || mem.replay.out_of_memory));
        CHECK(mem.capacity == std::llround(topology::find_gpu(node.gpu)->memory.value));
        CHECK(analysis::memory_report_text(mem).find("does not fit: needs") != std::string::npos);
        continue;
      }
      ++simulated;
      CHECK(mem.required <= mem.capacity);
      const double t = r.iteration.iteration_time_s;
      REQUIRE(std::isfinite(t));
      CHECK(t > 0.0);
      // The reported rates are the batch over that time, and the model cannot beat the GPUs' peak.
      CHECK(r.tokens_per_s == doctest::Approx(8.0 * dp * spec.model.seq_len / t).epsilon(1e-12));
      CHECK(r.mfu > 0.0);
      CHECK(r.mfu < 1.0);
      CHECK(r.hfu >= r.mfu);  // selective recompute re-runs some work: hardware FLOPs >= model FLOPs
      CHECK(r.hfu < 1.0);
      // The breakdown's parts are the critical rank's iteration, so none exceeds it.
      const auto& b = r.iteration.breakdown;
      CHECK(b.compute > 0.0);
      CHECK(b.compute + b.optimizer <= t * (1 + 1e-9));
    }
  }
  MESSAGE(simulated << " pairs simulated, " << refused << " refused for memory");
  CHECK(simulated > 20);
  CHECK(refused > 0);  // the largest models do not fit one node
}
