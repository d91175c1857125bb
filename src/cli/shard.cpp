#include "cli/shard.h"

#include <charconv>
#include <cstdlib>

#include "nncheck/error.h"

namespace nncheck::cli {
namespace {

// A whole number from 0 to 2^31 - 1, or -1.
int wholeNumber(const std::string& s) {
  int v = -1;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= 0 ? v : -1;
}

// The environment's indexes count from 0, as GoogleTest's and Kubernetes' do.
Shard checked(int index, int count, const std::string& source, const std::string& given) {
  if (count < 1 || index < 0 || index >= count)
    throw Error(source + " " + given +
                ": expected a shard index K of N shards with 0 <= K < N (the index counts from 0)");
  return {index, count, source};
}

}  // namespace

Shard resolveShard(const std::string& flag, int countFlag) {
  if (countFlag < 0)
    throw Error("--shard-count " + std::to_string(countFlag) + ": expected N >= 1");
  if (!flag.empty()) {
    if (countFlag > 0) throw Error("--shard-count: give it with JOB_COMPLETION_INDEX, not --shard");
    // The flag's K/N counts from 1, as Jest's and Playwright's --shard do.
    const size_t slash = flag.find('/');
    const int k = slash == std::string::npos ? -1 : wholeNumber(flag.substr(0, slash));
    const int n = slash == std::string::npos ? -1 : wholeNumber(flag.substr(slash + 1));
    if (n < 1 || k < 1 || k > n)
      throw Error("--shard " + flag +
                  ": expected K/N, shard K of N shards with 1 <= K <= N (K counts from 1)");
    return {k - 1, n, "--shard"};
  }
  const char* gtestIndex = std::getenv("GTEST_SHARD_INDEX");
  const char* gtestTotal = std::getenv("GTEST_TOTAL_SHARDS");
  if (gtestIndex && gtestTotal && countFlag == 0)
    return checked(wholeNumber(gtestIndex), wholeNumber(gtestTotal), "GTEST_SHARD_INDEX",
                   std::string(gtestIndex) + " of GTEST_TOTAL_SHARDS " + gtestTotal);
  if (const char* job = std::getenv("JOB_COMPLETION_INDEX")) {
    if (countFlag == 0)
      throw Error(std::string("JOB_COMPLETION_INDEX=") + job +
                  " is set (a Kubernetes Indexed Job): give --shard-count N, the Job's "
                  "completions, to run its shard of N (or --shard 1/1 for all cases)");
    return checked(wholeNumber(job), countFlag, "JOB_COMPLETION_INDEX",
                   std::string(job) + " with --shard-count " + std::to_string(countFlag));
  }
  if (countFlag > 0)
    throw Error("--shard-count " + std::to_string(countFlag) +
                ": JOB_COMPLETION_INDEX is not set; give --shard K/N instead");
  return {};
}

}  // namespace nncheck::cli
