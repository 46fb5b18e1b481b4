// The single doctest main shared by every module's test binary.
//
// A run whose filters select no test case fails. CTest runs each case as `binary -tc=<name>`, and
// doctest by itself exits 0 when the name matches nothing; a case whose registered name differs
// from its TEST_CASE name (CMake splits names at ';', doctest reads ',' in -tc as a list separator,
// a renamed case with a stale registration) then passed without running. Queries (--list-test-cases,
// as doctest_discover_tests uses) are not runs and are not affected.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

namespace {

unsigned g_cases_selected = 0;
bool g_run_ended = false;

// Records how many test cases passed the filters; it reports nothing itself.
struct SelectionCounter : doctest::IReporter {
  explicit SelectionCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    g_cases_selected = stats.numTestCasesPassingFilters;
    g_run_ended = true;
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("selection_counter", 0, SelectionCounter);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  if (g_run_ended && g_cases_selected == 0) {
    std::fprintf(stderr,
                 "error: no test case matched the filters; a test registered under another name than its "
                 "TEST_CASE (a ';' in the name splits it in CTest, a ',' in -tc separates filters) never runs\n");
    return 1;
  }
  return result;
}
