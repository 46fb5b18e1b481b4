// libFuzzer target: the command line's number parsers -- nccl-tests sizes ("8", "1K", "128M",
// "8G") and finite numbers ("-f 2", "-d 1000"). A value must come back finite and not negative,
// or the parser must throw CliError. Seeds: fuzz/seeds/size.
#include <cmath>
#include <cstdlib>

#include "apps/cli_common.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = clustersim::fuzz::as_text(data, size);
  try {
    const double bytes = clustersim::apps::parse_size("-b", text);
    if (!std::isfinite(bytes) || bytes < 0) std::abort();
  } catch (const clustersim::apps::CliError&) {
  }
  try {
    if (!std::isfinite(clustersim::apps::parse_finite("-f", text))) std::abort();
  } catch (const clustersim::apps::CliError&) {
  }
  return 0;
}
