// CSV as RFC 4180 writes it, the one reader and the one writer of every CSV file clustersim reads
// (the validation data, a sweep's results for --resume) or writes (sweep and compare tables).
//
// Reading: fields separated by commas; a quoted field may hold commas, line ends and "" for a
// quote. A record ends at "\n", "\r\n" or a lone "\r" outside quotes; blank records are skipped.
// A quote inside an unquoted field and an unterminated quoted field are errors.
// Writing: a field is quoted only when it holds a comma, a quote or a line end.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::analysis {

struct CsvRecord {
  int line = 0;                     // 1-based line of the record's first character
  std::vector<std::string> fields;
};

// Every record of `text`. Throws std::runtime_error "SOURCE:LINE: what" on malformed quoting.
std::vector<CsvRecord> parse_csv(std::string_view text, const std::string& source);

// parse_csv of a whole file. Throws std::runtime_error "cannot read PATH" when it cannot be read.
std::vector<CsvRecord> read_csv_file(const std::string& path);

// A numeric cell: 0 when empty; throws std::runtime_error "<where>: column <column> is not a
// number: '<cell>'" (or "not an integer") otherwise, so a bad cell names its file and line.
// Throws std::runtime_error "<path>:1: ..." unless `header` is exactly `expected`, in order.
void check_csv_header(const std::vector<std::string>& header, std::span<const std::string_view> expected,
                      const std::string& path);

double csv_number(const std::string& cell, const std::string& where, std::string_view column);
int csv_integer(const std::string& cell, const std::string& where, std::string_view column);

// One field as it goes into a CSV line: quoted (with "" for a quote) when it needs to be.
std::string csv_field(std::string_view field);
// One field always quoted (with "" for a quote).
std::string csv_quoted(std::string_view field);
// The fields, separated by commas, and "\n".
std::string csv_line(const std::vector<std::string>& fields);

}  // namespace clustersim::analysis
