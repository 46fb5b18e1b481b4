// sim::Choice tables: name_of, parse and names_of on a small table whose order differs from the
// enum's (as the fabric table's does), and what they do for values and names the table lacks.
#include <doctest/doctest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/enum_names.h"

using namespace clustersim::sim;

namespace {
enum class Colour : std::uint8_t { Red, Green, Blue, Unlisted };
constexpr Choice<Colour> kColours[] = {{"green", Colour::Green}, {"red", Colour::Red}, {"blue", Colour::Blue}};
}  // namespace

TEST_CASE("sim::enum_names: name_of and parse are inverse over the table, and both reject what it lacks") {
  for (Colour c : {Colour::Red, Colour::Green, Colour::Blue}) {
    const auto back = parse(kColours, name_of(kColours, c));
    REQUIRE(back.has_value());
    CHECK(*back == c);
  }
  CHECK(name_of(kColours, Colour::Unlisted) == "?");
  CHECK_FALSE(parse(kColours, "Green").has_value());  // exact, case-sensitive
  CHECK_FALSE(parse(kColours, "").has_value());
  CHECK_FALSE(parse(kColours, "?").has_value());
}

TEST_CASE("sim::enum_names: names_of lists the names in table order, not enum order") {
  const std::vector<std::string_view> expected{"green", "red", "blue"};
  CHECK(names_of(kColours) == expected);
}

TEST_CASE("sim::enum_names: the helpers work at compile time") {
  static_assert(name_of(kColours, Colour::Blue) == "blue");
  static_assert(parse(kColours, "red") == Colour::Red);
  CHECK(true);
}
