// `clustersim sweep` from the command line: the CSV does not depend on --jobs, --resume recomputes
// only the missing points, bad sweep files exit 2 with file:line, --best picks the right row.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

using clustersim::testing::run_cli;
using clustersim::testing::slurp;

namespace {

const std::string kSweep = "tests/apps/data/small-sweep.toml";  // 6 grid points + 1 invalid point

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string temp(const std::string& name) { return "/tmp/clustersim_sweep_test_" + std::to_string(::getpid()) + "_" + name; }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST_CASE("apps::sweep: --jobs 1 and --jobs 2 write identical CSV files, one row per point in order") {
  const std::string one = temp("j1.csv"), two = temp("j2.csv");
  const auto r1 = run_cli("sweep " + kSweep + " --jobs 1 --progress --out " + one);
  const auto r2 = run_cli("sweep " + kSweep + " --jobs 2 --out " + two);
  REQUIRE_MESSAGE(r1.exit_code == 0, r1.err);
  REQUIRE_MESSAGE(r2.exit_code == 0, r2.err);
  const std::string csv = slurp(one);
  CHECK(csv == slurp(two));
  const auto lines = lines_of(csv);
  REQUIRE(lines.size() == 8);
  CHECK(lines[0].rfind("point,sync.bucket_mb,training.micro_batch,parallelism.tp,status,reason,gpus,nodes,"
                       "iteration_time_s,tokens_per_s,",
                       0) == 0);
  CHECK(lines[0].find("memory_per_gpu_bytes.total") != std::string::npos);
  CHECK(lines[0].find("breakdown_s.compute") != std::string::npos);
  CHECK(lines[0].find("sim.") == std::string::npos);  // the engine counters depend on the cache and the clock
  CHECK(lines[1].rfind("0,5,1,,ok,,2,1,", 0) == 0);
  CHECK(lines[2].rfind("1,5,2,,ok,,", 0) == 0);
  CHECK(lines[6].rfind("5,100,2,,ok,,", 0) == 0);
  CHECK(lines[7].rfind("6,,,2,error,", 0) == 0);
  CHECK(count_of(r1.err, "[") == 7);  // one progress line per point
  CHECK(r1.err.find("[7/7] parallelism.tp=2  error: ") != std::string::npos);
  CHECK(count_of(r1.err, "  ETA ") == 6);  // every line but the last estimates the time left
  CHECK(count_of(r2.err, "[") == 0);       // stderr is not a terminal and --progress was not given
  CHECK(r1.out.find("7 points: 6 ok, 0 infeasible, 1 error") != std::string::npos);
  std::remove(one.c_str());
  std::remove(two.c_str());
}

TEST_CASE("apps::sweep: --resume after losing the last rows recomputes only those") {
  const std::string path = temp("resume.csv");
  REQUIRE(run_cli("sweep " + kSweep + " --out " + path).exit_code == 0);
  const std::string full = slurp(path);
  const auto lines = lines_of(full);
  REQUIRE(lines.size() == 8);
  // Keep the header and the first 4 rows, and half of the 5th as a crash would leave it.
  std::string cut;
  for (std::size_t i = 0; i < 5; ++i) cut += lines[i] + "\n";
  cut += lines[5].substr(0, lines[5].size() / 2);
  write(path, cut);
  const auto r = run_cli("sweep " + kSweep + " --resume --progress --out " + path);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("resuming: 4 of 7 points already in") != std::string::npos);
  CHECK(count_of(r.err, "/3] ") == 3);
  CHECK(r.err.find("[3/3]") != std::string::npos);
  CHECK(slurp(path) == full);
  // Nothing left to do.
  const auto again = run_cli("sweep " + kSweep + " --resume --progress --out " + path);
  CHECK(again.exit_code == 0);
  CHECK(count_of(again.err, "/0] ") == 0);
  CHECK(again.err.find("resuming: 7 of 7 points") != std::string::npos);
  CHECK(slurp(path) == full);
  std::remove(path.c_str());
}

TEST_CASE("apps::sweep: --best prints the ok point with the highest tokens_per_s") {
  const std::string path = temp("best.csv");
  const auto r = run_cli("sweep " + kSweep + " --jobs 2 --out " + path + " --best tokens_per_s");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto lines = lines_of(slurp(path));
  REQUIRE(lines.size() == 8);
  // The best by reading the CSV: tokens_per_s is column 9 (point, 3 keys, status, reason, gpus, nodes, iteration_time_s).
  const auto field = [](const std::string& line, int n) {
    std::size_t start = 0;
    for (int i = 0; i < n; ++i) start = line.find(',', start) + 1;
    return line.substr(start, line.find(',', start) - start);
  };
  REQUIRE(field(lines[0], 9) == "tokens_per_s");
  std::string best_point, best_value;
  double best = -1;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (field(lines[i], 4) != "ok") continue;
    const double v = std::stod(field(lines[i], 9));
    if (v > best) {
      best = v;
      best_point = field(lines[i], 0);
    }
  }
  char shown[32];  // the summary shows 6 significant digits; the CSV keeps them all
  std::snprintf(shown, sizeof shown, "%.6g", best);
  best_value = shown;
  CHECK(r.out.find("best tokens_per_s (highest): " + best_value + " at point " + best_point + ":") != std::string::npos);
  CHECK(run_cli("sweep " + kSweep + " --out " + path + " --best tokens").exit_code == 2);
  std::remove(path.c_str());
}

TEST_CASE("apps::sweep: bad sweep files exit 2 with file:line") {
  const std::string dir = CLUSTERSIM_SOURCE_DIR;
  const std::string unknown = temp("unknown.toml");
  write(unknown, "base = \"" + dir + "/scenarios/library/gpt3-1.3b-2x-rtx4090.toml\"\ngird = 1\n[grid]\n\"sync.bucket_mb\" = [5]\n");
  auto r = run_cli("sweep " + unknown + " --out " + temp("x.csv"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(unknown + ":2:1: error: unknown key 'gird' in a sweep file; did you mean 'grid'?") != std::string::npos);

  const std::string missing = temp("missing.toml");
  write(missing, "# no such base\nbase = \"no-such-scenario.toml\"\n[grid]\n\"sync.bucket_mb\" = [5]\n");
  r = run_cli("sweep " + missing + " --out " + temp("x.csv"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(missing + ":2:8: error: base scenario '") != std::string::npos);
  CHECK(r.err.find("does not exist") != std::string::npos);

  const std::string bad_key = temp("badkey.toml");
  write(bad_key, "base = \"" + dir + "/scenarios/library/gpt3-1.3b-2x-rtx4090.toml\"\n[grid]\n\"sync.bukcet_mb\" = [5, 25]\n");
  r = run_cli("sweep " + bad_key + " --out " + temp("x.csv"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(bad_key + ":3:1: error: unknown key 'bukcet_mb' in [sync]; did you mean 'bucket_mb'?") !=
        std::string::npos);

  CHECK(run_cli("sweep " + temp("does-not-exist.toml")).exit_code == 2);
  CHECK(run_cli("sweep " + kSweep + " --jobs 0").exit_code == 2);
  std::remove(unknown.c_str());
  std::remove(missing.c_str());
  std::remove(bad_key.c_str());
}

TEST_CASE("apps::sweep: under mpirun each rank runs its share of the points into OUT.rank<R>") {
  const std::string path = temp("mpi.csv");
  REQUIRE(run_cli("sweep " + kSweep + " --out " + path).exit_code == 0);  // the reference
  const auto all = lines_of(slurp(path));
  REQUIRE(all.size() == 8);
  for (int rank = 0; rank < 2; ++rank) {
    ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    ::setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
    const auto r = run_cli("sweep " + kSweep + " --out " + path);
    ::unsetenv("OMPI_COMM_WORLD_SIZE");
    ::unsetenv("OMPI_COMM_WORLD_RANK");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string part = path + ".rank" + std::to_string(rank);
    const auto lines = lines_of(slurp(part));
    REQUIRE(lines.size() == (rank == 0 ? 5u : 4u));  // points 0, 2, 4, 6 and 1, 3, 5
    CHECK(lines[0] == all[0]);
    for (std::size_t i = 1; i < lines.size(); ++i) CHECK(lines[i] == all[static_cast<std::size_t>(rank) + 2 * i - 1]);
    std::remove(part.c_str());
  }
  std::remove(path.c_str());
}
