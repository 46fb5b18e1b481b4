// Rows whose source flags a known software regression of that release (see modern_rows.h,
// published_regression). Megatron-Bridge's performance summary footnotes its 26.06.01 GPT-OSS-120B
// pre-training cells: "Performance regression in GPT-OSS 120B pre-training is a known issue
// (cudnn-frontend issue 256). It will be resolved with the next container release." The same
// layouts run 1.6x faster in 26.06 and 26.08. The reference CSV keeps that footnote in the row's
// notes; the validation scores such runs in their own group (validate_modern.cpp), so a published
// slowdown the source itself disowns neither hides nor inflates its source's and generation's
// MAPE.
#include <string>

#include "analysis/modern_rows.h"

namespace clustersim::analysis {

std::string published_regression(const ModernRow& row) {
  // The footnote as the CSV carries it: one ';'-separated clause of the notes.
  const std::string& n = row.notes;
  const std::size_t at = n.find("Performance regression");
  if (at == std::string::npos || n.find("known issue", at) == std::string::npos) return "";
  const std::size_t end = n.find(';', at);
  return n.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace clustersim::analysis
