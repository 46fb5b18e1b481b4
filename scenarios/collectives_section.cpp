// The [collectives] section: which NCCL release's rules the scenario's collectives follow
// (`nccl_version`, workloads/collectives/nccl_release.h) and NCCL_NVLS_ENABLE (`nvls`). Both are
// settings of the NCCL build and environment the run used, not hardware: a measurement taken with
// NCCL 2.25.1 launched 32 NVLS channels on one GB200 NVL72 rack where v2.30.7 launches 24.
#include <string>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"
#include "workloads/collectives/nccl_release.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kCollectivesKeys[] = {"nccl_version", "nvls"};

}  // namespace

void Loader::read_collectives(const toml::table* t) {
  if (t == nullptr) return;
  Section s(*this, t, "collectives", kCollectivesKeys);
  if (auto v = s.string("nccl_version", "2.25.1")) {
    bool exact = false;
    const workloads::nccl::NcclRelease* r = workloads::nccl::find_release(*v, &exact);
    if (r == nullptr) {
      error_at_key("collectives.nccl_version", "[collectives] nccl_version = \"" + *v + "\" is not a known NCCL release",
                   "known releases: " + workloads::nccl::known_release_list() +
                       " (\"2.25\", \"2.25.1\" or \"v2.25.1-1\"; a later patch takes the nearest earlier entry)");
    } else {
      spec_.nccl_release = *r;
      spec_.nccl_version_exact = exact;
    }
  }
  if (auto v = s.boolean("nvls")) spec_.nvls = *v;
  s.finish();
}

}  // namespace clustersim::scenarios
