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
  std::ofstream(path) << "gpu,power_limit_w,precision,scaling,label,shapes,measured_ms,source\n" << body;
  return path;
}
}  // namespace

TEST_CASE("analysis::validate_gemm: every published GEMM row is scored, on both GPUs and in every format") {
  const analysis::GemmValidation v = analysis::run_gemm_validation();
  CHECK(v.rows.size() == 22);
  int b300 = 0, h200 = 0;
  for (const analysis::GemmValidationRow& r : v.rows) {
    CHECK(r.measured_ms > 0);
    CHECK(r.predicted_ms > 0);
    CHECK(std::isfinite(r.error_pct()));
    b300 += r.gpu == "b300";
    h200 += r.gpu == "h200-sxm-141gb";
  }
  CHECK(b300 == 16);
  CHECK(h200 == 6);
  CHECK(v.groups.size() == 6);  // b300 bf16 / fp8 current / mxfp8 / nvfp4, h200 bf16 / fp8 current
  const std::string text = analysis::gemm_validation_text(v);
  CHECK(text.find("speed-up over bf16") != std::string::npos);
  CHECK(text.find("MAPE") != std::string::npos);
}

TEST_CASE("analysis::validate_gemm: a row's prediction is the compute model's roofline plus one launch per GEMM") {
  const std::string path = temp_csv("b300,,bf16,,two shapes,8192x8192x8192;4096x8192x2048,1.0,test\n");
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

TEST_CASE("analysis::validate_gemm: a power limit below TDP slows the same GEMMs") {
  const std::string path = temp_csv("h200-sxm-141gb,,bf16,,tdp,8192x8192x8192,1.0,test\n"
                                    "h200-sxm-141gb,400,bf16,,capped,8192x8192x8192,1.0,test\n");
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
  CHECK(message("no-such-gpu,,bf16,,x,1x1x1,1,s\n").find(":2: column gpu") != std::string::npos);
  CHECK(message("b300,,fp16,,x,1x1x1,1,s\n").find(":2: column precision") != std::string::npos);
  CHECK(message("b300,,fp8,,x,1x1x1,1,s\n").find(":2: column scaling") != std::string::npos);
  CHECK(message("b300,,bf16,,x,1x1,1,s\n").find(":2: column shapes") != std::string::npos);
  CHECK(message("b300,,bf16,,x,1x1x1,0,s\n").find(":2: column measured_ms") != std::string::npos);
}
