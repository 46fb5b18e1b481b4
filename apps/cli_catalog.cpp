// `clustersim catalog [gpus|nodes|models|links|nics]`: the presets with key numbers and sources.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "analysis/catalog_report.h"
#include "apps/cli_common.h"
#include "apps/verbs.h"

namespace clustersim::apps {

int verb_catalog(int argc, char** argv) {
  CLI::App app{"List presets with their key numbers and sources.", "clustersim catalog"};
  std::string what = "gpus";
  app.add_option("what", what, "gpus | nodes | models | links | nics");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw CliError(e.what());
  }
  if (what != "gpus" && what != "nodes" && what != "models" && what != "links" && what != "nics") {
    throw CliError("'" + what + "': expected one of gpus, nodes, models, links, nics");
  }
  std::fputs(analysis::catalog_table(what).c_str(), stdout);
  return 0;
}

}  // namespace clustersim::apps
