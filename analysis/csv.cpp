// The CSV reader and writer (see csv.h).
#include "analysis/csv.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace clustersim::analysis {
namespace {

// A character-at-a-time RFC 4180 reader; `line` counts physical lines for error messages.
class CsvReader {
 public:
  CsvReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::vector<CsvRecord> records() {
    for (i_ = 0; i_ < text_.size(); ++i_) {
      if (quoted_) {
        quoted_char(text_[i_]);
      } else {
        unquoted_char(text_[i_]);
      }
    }
    if (quoted_) fail(record_.line, "unterminated quoted field");
    if (field_started_ || !record_.fields.empty()) end_record();
    return std::move(records_);
  }

 private:
  bool next_is(char c) const { return i_ + 1 < text_.size() && text_[i_ + 1] == c; }

  void quoted_char(char c) {
    if (c == '"' && next_is('"')) {
      field_ += '"';
      ++i_;
    } else if (c == '"') {
      quoted_ = false;
    } else {
      if (c == '\n' || (c == '\r' && !next_is('\n'))) ++line_;
      field_ += c;
    }
  }

  void unquoted_char(char c) {
    if (c == '"') {
      if (field_started_ && !field_.empty()) fail(line_, "quote inside an unquoted field");
      quoted_ = true;
      field_started_ = true;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && next_is('\n')) ++i_;
      end_record();
      ++line_;
      record_ = CsvRecord{line_, {}};
    } else {
      field_ += c;
      field_started_ = true;
    }
  }

  void end_field() {
    record_.fields.push_back(std::move(field_));
    field_.clear();
    field_started_ = false;
  }

  void end_record() {
    end_field();
    const bool blank = record_.fields.size() == 1 && record_.fields[0].empty();
    if (!blank) records_.push_back(std::move(record_));
  }

  [[noreturn]] void fail(int line, const char* what) const {
    throw std::runtime_error(source_ + ":" + std::to_string(line) + ": " + what);
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t i_ = 0;
  int line_ = 1;
  bool quoted_ = false, field_started_ = false;
  std::string field_;
  CsvRecord record_{1, {}};
  std::vector<CsvRecord> records_;
};

}  // namespace

std::vector<CsvRecord> parse_csv(std::string_view text, const std::string& source) {
  return CsvReader(text, source).records();
}

std::vector<CsvRecord> read_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

std::string csv_quoted(std::string_view field) {
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_field(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  return csv_quoted(field);
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += csv_field(fields[i]);
  }
  return out + "\n";
}


double csv_number(const std::string& s, const std::string& where, std::string_view column) {
  if (s.empty()) return 0.0;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size())
    throw std::runtime_error(where + ": column " + std::string(column) + " is not a number: '" + s + "'");
  return v;
}

int csv_integer(const std::string& s, const std::string& where, std::string_view column) {
  const double v = csv_number(s, where, column);
  if (v != std::floor(v)) throw std::runtime_error(where + ": column " + std::string(column) + " is not an integer: '" + s + "'");
  return static_cast<int>(v);
}


void check_csv_header(const std::vector<std::string>& header, std::span<const std::string_view> expected,
                      const std::string& path) {
  if (header.size() != expected.size())
    throw std::runtime_error(path + ":1: expected " + std::to_string(expected.size()) + " columns, found " +
                             std::to_string(header.size()));
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (header[i] != expected[i])
      throw std::runtime_error(path + ":1: column " + std::to_string(i + 1) + " is '" + header[i] + "', expected '" +
                               std::string(expected[i]) + "'");
}
}  // namespace clustersim::analysis
