// Two or three worked examples per verb, printed at the end of `clustersim <verb> --help`: the
// quickest way to learn a verb is a command that works. tests/apps/help_examples_test.cpp runs
// every one of them, so an example that stops working fails the build.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace clustersim::apps {

// The examples of one verb ("run", "collective", ...), each a full command line starting with
// "clustersim"; empty for an unknown verb.
std::vector<std::string_view> verb_examples(std::string_view verb);

// The --help footer: "Examples:" and one indented line per example; "" when there are none.
std::string examples_footer(std::string_view verb);

}  // namespace clustersim::apps
