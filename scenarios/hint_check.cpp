// Hints that propose concrete values are checked by the loader itself (issue #14 item 8): a
// suggested tp, dp, node count, global batch or enum value is tried by loading the same scenario
// again with it as one more `--set`, and only values that pass are shown. "Passes" means the
// error the hint belongs to is gone and no error appears that the scenario did not already have;
// among those, the choices that leave the fewest errors are shown (a tp that also repairs the GPU
// count beats one that only divides the heads). The memory advice works the same way one layer up
// (analysis/memory_report.cpp re-loads each proposed change).
#include <cstddef>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scenarios/scenario_error.h"
#include "scenarios/scenario_loader.h"

namespace clustersim::scenarios {

// The subjects of every error of this load (what each is about), without throwing.
std::vector<std::string> Loader::probe() {
  verifying_ = true;
  try {
    if (parse_document()) {
      for (const auto& o : overrides_) apply_override(o);
      read_root();
    }
  } catch (const ScenarioError&) {
    return {"(the load stopped)"};
  }
  return subjects_;
}

void Loader::check_proposals() {
  if (verifying_ || proposals_.empty()) return;
  const std::set<std::string> before(subjects_.begin(), subjects_.end());
  for (Proposal& p : proposals_) {
    const std::string own = subjects_[p.diagnostic];
    std::vector<Choice> passing;
    std::size_t fewest = std::numeric_limits<std::size_t>::max();
    for (const Choice& c : p.choices) {
      std::vector<std::string> overrides = overrides_;
      overrides.insert(overrides.end(), c.sets.begin(), c.sets.end());
      Loader trial(spec_.file, text_, std::move(overrides));
      const std::vector<std::string> after = trial.probe();
      bool ok = true;
      for (const std::string& s : after) ok = ok && s != own && before.count(s) > 0;
      if (!ok || after.size() > fewest) continue;
      if (after.size() < fewest) passing.clear();
      fewest = after.size();
      passing.push_back(c);
    }
    p.render(diagnostics_[p.diagnostic], passing);
  }
}

std::vector<LoadContext::Choice> value_choices(const std::string& dotted_key, const std::vector<std::string>& values) {
  std::vector<LoadContext::Choice> out;
  for (const std::string& v : values) out.push_back(LoadContext::Choice{{dotted_key + "=" + v}, v});
  return out;
}

std::vector<LoadContext::Choice> divisor_choices(const std::string& dotted_key, int n, int limit) {
  std::vector<std::string> values;
  for (int d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) values.push_back(std::to_string(d));
  return value_choices(dotted_key, values);
}

LoadContext::Render listing_hint(std::string lead, std::string label, std::string none, std::string tail) {
  return [lead = std::move(lead), label = std::move(label), none = std::move(none), tail = std::move(tail)](
             Diagnostic& d, const std::vector<LoadContext::Choice>& ok) {
    if (ok.empty()) {
      d.hint = lead + none;
      return;
    }
    std::string list;
    for (std::size_t i = 0; i < ok.size(); ++i) {
      if (i == 8) {
        list += ", ...";
        break;
      }
      list += (i ? ", " : "") + ok[i].shown;
    }
    d.hint = lead + "use " + label + " = " + list + tail;
  };
}

LoadContext::Render alternatives_hint(std::string lead, std::string tail, std::string none) {
  return [lead = std::move(lead), tail = std::move(tail), none = std::move(none)](
             Diagnostic& d, const std::vector<LoadContext::Choice>& ok) {
    if (ok.empty()) {
      d.hint = none;
      return;
    }
    std::string list;
    for (std::size_t i = 0; i < ok.size(); ++i) list += (i ? ", or " : "") + ok[i].shown;
    d.hint = lead + "use " + list + tail;
  };
}

}  // namespace clustersim::scenarios
