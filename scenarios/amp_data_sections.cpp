// The [amp] and [data] sections: fp16 loss scaling (torch.cuda.amp.GradScaler's knobs and the
// gradient-magnitude model, workloads/training/loss_scaling.h) and the input pipeline (a
// DataLoader or DALI, workloads/training/input_pipeline.h). [amp] only means something for fp16
// training; check_amp() refuses it for the other precisions once the precision is resolved.
#include <climits>
#include <string>
#include <string_view>

#include "scenarios/scenario_loader.h"
#include "scenarios/toml_reader.h"

namespace clustersim::scenarios {
namespace {

constexpr std::string_view kAmpKeys[] = {"loss_scale",      "init_scale",      "growth_factor", "backoff_factor",
                                         "growth_interval", "grad_max_median", "grad_max_sigma", "grad_median",
                                         "grad_sigma",      "steps",           "seed"};
constexpr std::string_view kDataKeys[] = {"cpu_ms_per_sample", "loader_workers",  "bytes_per_sample",
                                          "pinned_memory",     "prefetch_factor", "gpu_decode"};

// loss_scale = "dynamic" | a positive number (a static scale).
void read_loss_scale(Section& s, workloads::AmpSpec& amp) {
  const toml::node* n = s.find("loss_scale");
  if (n == nullptr) return;
  if (const auto* str = n->as_string()) {
    if (str->get() == "dynamic") return;
    s.wrong_type("loss_scale", *n, "\"dynamic\" or a number (a static scale)", "\"dynamic\"");
    return;
  }
  const auto v = n->value<double>();
  if (!v || !(*v > 0) || *v > 1e30) {
    s.wrong_type("loss_scale", *n, "\"dynamic\" or a positive number (a static scale)", "1024");
    return;
  }
  amp.dynamic = false;
  amp.init_scale = *v;
}

}  // namespace

void Loader::read_amp(const toml::table* t) {
  if (t == nullptr) return;
  Section s(*this, t, "amp", kAmpKeys);
  workloads::AmpSpec amp;
  read_loss_scale(s, amp);
  if (auto v = s.number("init_scale", 0.0, true, "65536")) {
    if (!amp.dynamic && s.has("loss_scale"))
      error_at_key("amp.init_scale", "init_scale is the dynamic scaler's start; loss_scale already gives the static scale",
                   "remove init_scale, or set loss_scale = \"dynamic\"");
    else
      amp.init_scale = *v;
  }
  if (auto v = s.number("growth_factor", 1.0, true, "2.0")) amp.growth_factor = *v;
  if (auto v = s.number("backoff_factor", 0.0, true, "0.5")) {
    if (*v >= 1.0)
      error_at_key("amp.backoff_factor", "backoff_factor must be below 1 (the scale shrinks after an overflow)",
                   "for example: backoff_factor = 0.5 (GradScaler's default)");
    else
      amp.backoff_factor = *v;
  }
  if (auto v = s.integer("growth_interval", 1, INT_MAX, "2000")) amp.growth_interval = *v;
  if (auto v = s.number("grad_max_median", 0.0, true, "0.05")) amp.grad_max_median = *v;
  if (auto v = s.number("grad_max_sigma", 0.0, true, "1.0")) amp.grad_max_sigma = *v;
  if (auto v = s.number("grad_median", 0.0, true, "1e-6")) amp.grad_median = *v;
  if (auto v = s.number("grad_sigma", 0.0, true, "2.5")) amp.grad_sigma = *v;
  if (auto v = s.integer("steps", 1, 50'000'000, "10000")) amp.steps = *v;
  if (auto v = s.integer("seed", 0, INT_MAX, "1")) amp.seed = static_cast<std::uint64_t>(*v);
  s.finish();
  spec_.amp = amp;
}

void Loader::read_data(const toml::table* t) {
  if (t == nullptr) return;
  Section s(*this, t, "data", kDataKeys);
  workloads::DataSpec d;
  if (auto v = s.number("cpu_ms_per_sample", 0.0, false, "5.0")) d.cpu_ms_per_sample = *v;
  if (auto v = s.integer("loader_workers", 0, 4096, "8")) d.loader_workers = *v;
  if (auto v = s.number("bytes_per_sample", 0.0, false, "602112")) d.bytes_per_sample = *v;
  if (auto v = s.boolean("pinned_memory")) d.pinned_memory = *v;
  if (auto v = s.integer("prefetch_factor", 1, 1 << 16, "2")) d.prefetch_factor = *v;
  if (auto v = s.boolean("gpu_decode")) d.gpu_decode = *v;
  s.finish();
  if (d.bytes_per_sample <= 0 && !s.has("bytes_per_sample") && model_ok_)
    d.bytes_per_sample = 2.0 * 8.0 * spec_.model.seq_len;  // int64 token ids and labels
  spec_.data = d;
}

// [amp] against the resolved precision: loss scaling exists because fp16's exponent is 5 bits.
void Loader::check_amp() {
  if (!spec_.amp || spec_.training.precision == topology::Precision::Fp16) return;
  std::string at = "amp.loss_scale";  // point at the section's first key in the file
  int first_line = 0;
  for (const auto& [key, origin] : spec_.origins)
    if (key.rfind("amp.", 0) == 0 && (first_line == 0 || (origin.where.line > 0 && origin.where.line < first_line))) {
      at = key;
      first_line = origin.where.line;
    }
  const std::string precision(sim::name_of(topology::kPrecisionNames, spec_.training.precision));
  error_at_key(at,
               "[amp] (fp16 loss scaling) needs precision = \"fp16\", but [training] precision = \"" + precision +
                   "\"" + (precision_given_ ? "" : " (the GPU's default)") +
                   ": bf16, fp8 (bf16 master) and fp32 keep fp32's 8-bit exponent, so gradients neither "
                   "overflow nor underflow and nothing is scaled",
               "remove the [amp] section, or set [training] precision = \"fp16\"");
}

}  // namespace clustersim::scenarios
