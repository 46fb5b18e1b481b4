// Always-on internal invariant checks. A failed CHECK is a bug in clustersim, not bad input:
// it prints file:line and the message, then aborts (exit code is not 2; bad input never reaches here).
#pragma once

#include <cstdio>
#include <cstdlib>

#define CLUSTERSIM_CHECK(cond, msg)                                                         \
  do {                                                                                      \
    if (!(cond)) [[unlikely]] {                                                             \
      std::fprintf(stderr, "%s:%d: internal error: %s (%s)\n", __FILE__, __LINE__, (msg), #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)
