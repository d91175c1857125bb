// The engine registry: engines by name, their configurations, clear errors, and shared
// libraries that do not load.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "test_util.h"

namespace nncheck {
namespace {

TEST(EngineRegistry, TheReferenceIsRegisteredWithoutConfigurations) {
  ASSERT_TRUE(engines().contains("reference"));
  EXPECT_EQ(engines().make("reference", "")->name(), "reference");
  EXPECT_EQ(engines().configurations("reference"), std::vector<std::string>{""});
  EXPECT_THROW(engines().make("reference", "fusion=off"), Error);
}

// A configuration's canonical text comes from the engine, so a corpus names each configuration
// one way; an engine without a key function keeps the text as given.
TEST(EngineRegistry, ConfigurationsHaveOneCanonicalName) {
  EXPECT_EQ(engines().key("reference", "anything"), "anything");
}

// A whole test, not a part of one: scripts/test.sh runs a test the sanitized build (which has
// no engines) ran only there.
#ifdef NNCHECK_HAS_MLIR_ENGINE
TEST(EngineRegistry, MlirsConfigurationsHaveOneCanonicalName) {
  EXPECT_EQ(engines().key("mlir", "llvm=O0,loops=tiled"),
            "fusion=on,canonicalize=on,loops=tiled,llvm=O0");
  EXPECT_THROW(engines().key("mlir", "loops=spiral"), Error);
}
#endif

TEST(EngineRegistry, AnUnknownNameListsTheRegisteredOnes) {
  try {
    engines().make("nosuch", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown engine 'nosuch' (known: "), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("reference"), std::string::npos) << e.what();
  }
}

TEST(EngineRegistry, EntriesNeedANameAFactoryAndAFreeName) {
  EngineRegistry r;
  EXPECT_THROW(r.add({.name = "",
                      .make =
                          [](const std::string&) {
                            return std::unique_ptr<Backend>(new ReferenceBackend);
                          }}),
               Error);
  EXPECT_THROW(r.add({.name = "x"}), Error);
  // A name is no path: it names folders (a corpus's fuzz-<name>, a plug-in's known bugs).
  for (const char* path : {"../x", "a/b", ".hidden", "x\ny"})
    EXPECT_NE(testing::errorOf([&] {
                r.add({.name = path, .make = [](const std::string&) {
                         return std::unique_ptr<Backend>(new ReferenceBackend);
                       }});
              }).find("not a name an engine may have"),
              std::string::npos)
        << path;
  r.add({.name = "x",
         .make = [](const std::string&) { return std::unique_ptr<Backend>(new ReferenceBackend); },
         .configurations =
             [] {
               return std::vector<std::string>{"a", "b"};
             }});
  EXPECT_THROW(r.add({.name = "x",
                      .make =
                          [](const std::string&) {
                            return std::unique_ptr<Backend>(new ReferenceBackend);
                          }}),
               Error);
  EXPECT_EQ(r.names(), std::vector<std::string>{"x"});
  EXPECT_EQ(r.configurations("x"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.baseCapabilities("x").ops, std::vector<std::string>{});
}

TEST(EngineRegistry, ALibraryThatIsMissingOrNotALibraryIsNamed) {
  try {
    loadEngineLibrary("/nonexistent/libengine.so");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libengine.so: no such file"),
              std::string::npos)
        << e.what();
  }
  testing::TempDir dir("engine_lib");
  const auto fake = dir.path() / "libfake.so";
  std::ofstream(fake) << "not an ELF file";
  try {
    loadEngineLibrary(fake.string());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libfake.so: cannot load it"), std::string::npos)
        << e.what();
  }
}

// A built-in engine's plug-in is found by its name in the folders added, listed before it
// loads, and one that does not load is an error naming its file.
TEST(EngineRegistry, APluginIsLoadedWhenItsNameIsAskedFor) {
  testing::TempDir dir("engine_plugins");
  std::ofstream(dir.path() / enginePluginFileName("broken")) << "not an ELF file";
  std::ofstream(dir.path() / "libsomething-else.so") << "not a plug-in of nncheck";
  addEnginePluginFolder(dir.path().string());
  const std::vector<std::string> available = engines().available();
  EXPECT_NE(std::find(available.begin(), available.end(), "broken"), available.end());
  EXPECT_EQ(std::find(available.begin(), available.end(), "something-else"), available.end());
  try {
    engines().make("broken", "");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("engine 'broken': its plug-in " +
                                         (dir.path() / "libnncheck-engine-broken.so").string() +
                                         " does not load: "),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(engines().contains("../broken")) << "a name is never a path";
}

}  // namespace
}  // namespace nncheck
