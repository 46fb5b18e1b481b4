// The one CSV reader and writer: RFC 4180 quoting, embedded line ends, CRLF files, and that what
// the writer writes the reader reads back.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/csv.h"

namespace clustersim {
namespace {

using Fields = std::vector<std::string>;

std::vector<Fields> fields_of(const std::string& text) {
  std::vector<Fields> out;
  for (const analysis::CsvRecord& r : analysis::parse_csv(text, "t.csv")) out.push_back(r.fields);
  return out;
}

}  // namespace

TEST_CASE("analysis::parse_csv: a quoted field keeps its commas") {
  CHECK(fields_of("a,\"b,c\",d\n") == std::vector<Fields>{{"a", "b,c", "d"}});
}

TEST_CASE("analysis::parse_csv: \"\" inside a quoted field is one quote") {
  CHECK(fields_of("\"say \"\"hi\"\"\",x\n") == std::vector<Fields>{{"say \"hi\"", "x"}});
  CHECK(fields_of("\"\"\"\"\n") == std::vector<Fields>{{"\""}});
}

TEST_CASE("analysis::parse_csv: a quoted field may span lines, and the next record's line counts them") {
  const auto records = analysis::parse_csv("h1,h2\n\"two\nlines\",x\nlast,y\n", "t.csv");
  REQUIRE(records.size() == 3);
  CHECK(records[1].fields == Fields{"two\nlines", "x"});
  CHECK(records[1].line == 2);
  CHECK(records[2].fields == Fields{"last", "y"});
  CHECK(records[2].line == 4);
}

TEST_CASE("analysis::parse_csv: CRLF line ends end records and never reach a field") {
  const auto records = analysis::parse_csv("a,b\r\n1,\"2\"\r\n\r\n3,4", "t.csv");
  REQUIRE(records.size() == 3);
  CHECK(records[0].fields == Fields{"a", "b"});
  CHECK(records[1].fields == Fields{"1", "2"});
  CHECK(records[2].fields == Fields{"3", "4"});
  CHECK(records[2].line == 4);  // the blank CRLF line is skipped but counted
}

TEST_CASE("analysis::parse_csv: empty fields are kept, blank lines are not records") {
  CHECK(fields_of("a,,\n\n,b\n") == std::vector<Fields>{{"a", "", ""}, {"", "b"}});
}

TEST_CASE("analysis::parse_csv: malformed quoting names the file and line") {
  CHECK_THROWS_WITH_AS(analysis::parse_csv("a\nab\"c\n", "t.csv"), "t.csv:2: quote inside an unquoted field",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(analysis::parse_csv("a\n\"open,\n", "t.csv"), "t.csv:2: unterminated quoted field",
                       std::runtime_error);
}

TEST_CASE("analysis::csv_field: only fields with a comma, quote or line end are quoted") {
  CHECK(analysis::csv_field("plain text") == "plain text");
  CHECK(analysis::csv_field("a,b") == "\"a,b\"");
  CHECK(analysis::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(analysis::csv_field("two\nlines") == "\"two\nlines\"");
  CHECK(analysis::csv_field("cr\r") == "\"cr\r\"");
  CHECK(analysis::csv_quoted("plain") == "\"plain\"");
}

TEST_CASE("analysis::csv_line: what the writer writes the reader reads back") {
  const Fields row{"plain", "a,b", "say \"hi\"", "two\r\nlines", "", "end"};
  const std::string text = analysis::csv_line(row) + analysis::csv_line({"x"});
  CHECK(fields_of(text) == std::vector<Fields>{row, {"x"}});
}

}  // namespace clustersim
