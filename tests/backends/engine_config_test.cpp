// ConfigText: every engine reads its configuration text through it, so each reading returns the
// value or an error naming the engine, the text, the item and what was expected.
#include <gtest/gtest.h>

#include "nncheck/engine.h"
#include "nncheck/error.h"

namespace nncheck {
namespace {

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigText, ReadsEachItemAndItsValue) {
  const ConfigText t("demo", "fusion=on,,level=b,threads=12,disable=Zeta+Alpha+Zeta,bare", "x");
  ASSERT_EQ(t.items().size(), 5u);  // the empty item is skipped
  EXPECT_TRUE(t.onOff(t.items()[0]));
  EXPECT_EQ(t.choice(t.items()[1], {"a", "b"}), 1u);
  EXPECT_EQ(t.count(t.items()[2], 1, 256), 12);
  EXPECT_EQ(t.names(t.items()[3]), (std::vector<std::string>{"Alpha", "Zeta"}));
  EXPECT_EQ(t.items()[4].key, "bare");
  EXPECT_EQ(t.items()[4].value, "");
}

TEST(ConfigText, AnItemItCannotReadNamesTheEngineTheTextTheItemAndWhatWasExpected) {
  const ConfigText t("demo", "fusion=maybe,level=c,threads=0,threads=x9,disable=A++B,disable=A+",
                     "fusion=on|off, level=a|b");
  const auto& items = t.items();
  EXPECT_EQ(errorOf([&] { t.onOff(items[0]); }),
            "demo configuration 'fusion=maybe,level=c,threads=0,threads=x9,disable=A++B,"
            "disable=A+': cannot read 'fusion=maybe' (expected fusion=on|off)");
  EXPECT_NE(errorOf([&] {
              t.choice(items[1], {"a", "b"});
            }).find("(expected level=a|b)"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { t.count(items[2], 1, 256); }).find("N from 1 to 256"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.count(items[3], 1, 256); }).find("'threads=x9'"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.names(items[4]); }).find("'disable=A++B'"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.names(items[5]); }).find("'disable=A+'"), std::string::npos);
  EXPECT_NE(errorOf([&] { t.reject(items[0]); }).find("(expected fusion=on|off, level=a|b)"),
            std::string::npos);
}

TEST(ConfigText, NameListsJoinAndMergeSortedAndOnce) {
  EXPECT_EQ(joinNames({"A", "B"}), "A+B");
  EXPECT_EQ(joinNames({}), "");
  EXPECT_EQ(mergeNames({"C", "A"}, {"B", "A"}), (std::vector<std::string>{"A", "B", "C"}));
}

// Every registered engine's configurations read back to themselves through its key. (Only in
// builds with engines: scripts/test.sh runs a test the sanitized build ran only there.)
#if defined(NNCHECK_HAS_OPENCV_ENGINE) || defined(NNCHECK_HAS_TORCH_ENGINE) || \
    defined(NNCHECK_HAS_MLIR_ENGINE) || defined(NNCHECK_HAS_ORT_ENGINE)
TEST(ConfigText, EveryEnginesConfigurationsReadBackToTheirKeys) {
  for (const std::string& name : engines().names())
    for (const std::string& config : engines().configurations(name))
      EXPECT_EQ(engines().key(name, config), config) << name;
}
#endif

}  // namespace
}  // namespace nncheck
