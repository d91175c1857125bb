// Which slice of the seed space a campaign runs: --shard K/N, else GoogleTest's sharding
// variables (GTEST_SHARD_INDEX, GTEST_TOTAL_SHARDS), else a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX with --shard-count N; else the whole space. The flag's K counts from 1
// (as Jest's and Playwright's do), the variables' from 0 (as they are set); Shard::index from 0.
//
//   Shard s = resolveShard("2/4", 0);   // {1, 4}: the second of four
#pragma once

#include <string>

namespace nncheck::cli {

struct Shard {
  int index = 0, count = 1;  // index counts from 0
  std::string source;        // where it came from: "--shard", "GTEST_SHARD_INDEX", ...; empty: none
};

// Throws nncheck::Error naming the option or variable that is wrong.
Shard resolveShard(const std::string& flag, int countFlag);

}  // namespace nncheck::cli
