// The verbs of the clustersim command line; each parses its own arguments and returns an exit code.
#pragma once

namespace clustersim::apps {

int verb_collective(int argc, char** argv);
int verb_topo(int argc, char** argv);
int verb_catalog(int argc, char** argv);
int verb_memory(int argc, char** argv);
int verb_run(int argc, char** argv);
int verb_calibrate(int argc, char** argv);
int verb_validate(int argc, char** argv);
int verb_compare(int argc, char** argv);
int verb_sweep(int argc, char** argv);

}  // namespace clustersim::apps
