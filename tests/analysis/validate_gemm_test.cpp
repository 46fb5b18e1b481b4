#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "analysis/validate_gemm.h"
#include "topology/catalog.h"
#include "workloads/compute/compute_model.h"
#include "workloads/model/op_builders.h"

using namespace clustersim;

namespace {
std::string temp_csv(const std::string& body) {
  const std::string path = (std::filesystem::temp_directory_path() / "clustersim_gemm_validation_test.csv").string();
  std::ofstream(path) << "gpu,power_limit_w,precision,scaling,mode,label,shapes,measured_ms,source\n" << body;
  return path;
}
}  // namespace

TEST_CASE("analysis::validate_gemm: every published GEMM row is scored, on both GPUs, in every format and mode") {
  const analysis::GemmValidation v = analysis::run_gemm_validation();
  CHECK(v.rows.size() == 52);
  int b300 = 0, h200 = 0, autocast = 0;
  for (const analysis::GemmValidationRow& r : v.rows) {
    CHECK(r.measured_ms > 0);
    CHECK(r.predicted_ms > 0);
    CHECK(std::isfinite(r.error_pct()));
    b300 += r.gpu == "b300";
    h200 += r.gpu == "h200-sxm-141gb";
    autocast += r.mode == "autocast";
  }
  CHECK(b300 == 40);
  CHECK(h200 == 12);
  CHECK(autocast == 30);
  // kernel: b300 bf16 / fp8 current / mxfp8 / nvfp4, h200 bf16 / fp8 current; autocast: b300 fp8
  // current / delayed / mxfp8 / nvfp4, h200 fp8 current / delayed
  CHECK(v.groups.size() == 12);
  const std::string text = analysis::gemm_validation_text(v);
  CHECK(text.find("speed-up over bf16") != std::string::npos);
  CHECK(text.find("MAPE") != std::string::npos);
}

TEST_CASE("analysis::validate_gemm: a row's prediction is the compute model's roofline plus one launch per GEMM") {
  const std::string path = temp_csv("b300,,bf16,,kernel,two shapes,8192x8192x8192;4096x8192x2048,1.0,test\n");
  const analysis::GemmValidation v = analysis::run_gemm_validation(path);
  REQUIRE(v.rows.size() == 1);
  const workloads::ComputeModel model(*topology::find_gpu("b300"), {}, topology::Precision::Bf16, {});
  const double launch = model.constants().get("kernel_launch_us") * 1e-6;
  double expected = 0;
  for (const auto& [m, k, n] : {std::array<double, 3>{8192, 8192, 8192}, std::array<double, 3>{4096, 8192, 2048}}) {
    const workloads::OpTimeParts p =
        model.op_time_parts(workloads::ops::gemm("g", workloads::OpKind::Gemm, m, n, k, 1, 2.0, false), workloads::Pass::Forward);
    expected += std::max(p.flops_s, p.bytes_s) + launch;
  }
  CHECK(v.rows[0].gemms == 2);
  CHECK(v.rows[0].predicted_ms == doctest::Approx(expected * 1e3));
  std::remove(path.c_str());
}

TEST_CASE("analysis::validate_gemm: an autocast row adds the recipe's casts of the input and the weight to the kernel") {
  const std::string path = temp_csv("h200-sxm-141gb,,fp8,current,kernel,k,8192x4096x2048,1.0,test\n"
                                    "h200-sxm-141gb,,fp8,current,autocast,a,8192x4096x2048,1.0,test\n"
                                    "h200-sxm-141gb,,fp8,delayed,autocast,d,8192x4096x2048,1.0,test\n");
  const analysis::GemmValidation v = analysis::run_gemm_validation(path);
  REQUIRE(v.rows.size() == 3);
  workloads::ComputeConstants delayed;
  const workloads::ComputeModel model(*topology::find_gpu("h200-sxm-141gb"), {}, topology::Precision::Fp8, delayed);
  const double launch = delayed.get("kernel_launch_us") * 1e-6;
  // Delayed scaling on Hopper: one cast_transpose kernel per operand over its elements.
  const double stream = model.pointwise_bandwidth().value;
  const double casts = (8192.0 * 4096 + 4096.0 * 2048) * delayed.get("fp8_cast_bytes_per_element") / stream + 2 * launch;
  CHECK(v.rows[2].predicted_ms == doctest::Approx(v.rows[0].predicted_ms + casts * 1e3).epsilon(1e-6));
  // Current scaling reads each operand once more for its amax, in three more kernels each.
  CHECK(v.rows[1].predicted_ms > v.rows[2].predicted_ms);
  std::remove(path.c_str());
}

TEST_CASE("analysis::validate_gemm: a power limit below TDP slows the same GEMMs") {
  const std::string path = temp_csv("h200-sxm-141gb,,bf16,,kernel,tdp,8192x8192x8192,1.0,test\n"
                                    "h200-sxm-141gb,400,bf16,,kernel,capped,8192x8192x8192,1.0,test\n");
  const analysis::GemmValidation v = analysis::run_gemm_validation(path);
  REQUIRE(v.rows.size() == 2);
  CHECK(v.rows[1].predicted_ms > v.rows[0].predicted_ms * 1.05);
  std::remove(path.c_str());
}

TEST_CASE("analysis::validate_gemm: a malformed row names its file and line") {
  const auto message = [](const std::string& body) {
    const std::string path = temp_csv(body);
    std::string what;
    try {
      analysis::run_gemm_validation(path);
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    std::remove(path.c_str());
    return what;
  };
  CHECK(message("no-such-gpu,,bf16,,kernel,x,1x1x1,1,s\n").find(":2: column gpu") != std::string::npos);
  CHECK(message("b300,,fp16,,kernel,x,1x1x1,1,s\n").find(":2: column precision") != std::string::npos);
  CHECK(message("b300,,fp8,,kernel,x,1x1x1,1,s\n").find(":2: column scaling") != std::string::npos);
  CHECK(message("b300,,fp8,delayed,kernel,x,1x1x1,1,s\n").find(":2: column scaling") != std::string::npos);
  CHECK(message("b300,,bf16,,autocast,x,1x1x1,1,s\n").find(":2: column mode") != std::string::npos);
  CHECK(message("b300,,bf16,,eager,x,1x1x1,1,s\n").find(":2: column mode") != std::string::npos);
  CHECK(message("b300,,bf16,,kernel,x,1x1,1,s\n").find(":2: column shapes") != std::string::npos);
  CHECK(message("b300,,bf16,,kernel,x,1x1x1,0,s\n").find(":2: column measured_ms") != std::string::npos);
  CHECK(message("b300,-400,bf16,,kernel,x,1x1x1,1,s\n").find(":2: column power_limit_w") != std::string::npos);
  CHECK(message("b300,1500,bf16,,kernel,x,1x1x1,1,s\n").find(":2: column power_limit_w") != std::string::npos);
}
