// nncheck engines: the registered engines with their configurations; a library that does not
// load is named.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "cli/cli_runner.h"
#include "test_util.h"

namespace nncheck {
namespace {

using testing::runCli;

TEST(EnginesCommand, ListsTheBuiltInEnginesAndTheirConfigurations) {
  auto o = runCli("engines");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("reference    nncheck's reference interpreter"), std::string::npos)
      << o.output;
}

// A whole test per engine, not a part of one: scripts/test.sh runs a test the sanitized build
// (which has no engines) ran only there.
#ifdef NNCHECK_HAS_OPENCV_ENGINE
TEST(EnginesCommand, ListsOpenCVsConfigurationsHere) {
  auto o = runCli("engines");
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("configurations here: target=cpu,fusion=on"), std::string::npos)
      << o.output;
}
#endif

TEST(EnginesCommand, ALibraryThatDoesNotLoadIsAnErrorNamingIt) {
  auto o = runCli("engines --engine-lib /nonexistent/libx.so");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_NE(o.output.find("--engine-lib /nonexistent/libx.so: no such file"), std::string::npos)
      << o.output;
}

// --- Libraries of engines that nncheck must refuse or survive (issue 46, items 3, 7, 9, 15) ---

std::string testPlugin(const std::string& name) {
  // Appended, not concatenated: GCC 12 at -O1 warns -Warray-bounds on `string + "x" + string`.
  std::string path = NNCHECK_TEST_PLUGINS;
  path += "/lib";
  path += name;
  path += ".so";
  return path;
}

using testing::has;

// Before, a second registration of "reference" was refused, but one of any other name silently
// replaced the first: an impostor `opencv` turned 13 failing OpenCV cases into "13 passed".
TEST(EnginesCommand, ALibraryRegisteringANameTakenElsewhereIsAnErrorNamingBothOrigins) {
  auto twins = runCli("engines --engine-lib " + testPlugin("twin_a") + " --engine-lib " +
                      testPlugin("twin_b"));
  EXPECT_EQ(twins.status, 2) << twins.output;
  EXPECT_TRUE(has(twins.output, "engine 'twin' is registered twice: by " + testPlugin("twin_a") +
                                    ", then by " + testPlugin("twin_b")))
      << twins.output;
  auto reference = runCli("engines --engine-lib " + testPlugin("reference_impostor"));
  EXPECT_EQ(reference.status, 2) << reference.output;
  EXPECT_TRUE(has(reference.output,
                  "engine 'reference' is registered twice: by nncheck or this "
                  "program, then by " +
                      testPlugin("reference_impostor")))
      << reference.output;
}

#ifdef NNCHECK_HAS_OPENCV_ENGINE
TEST(EnginesCommand, ALibraryCannotStandInForABuiltInEnginesPlugin) {
  auto o = testing::runCommand(
      "NNCHECK_ENGINE_LIBS=" + testPlugin("opencv_impostor") + " " + NNCHECK_CLI +
      " corpus check " NNCHECK_SOURCE_DIR "/examples/opencv/corpus --backend opencv");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(has(o.output, "engine 'opencv' of " + testPlugin("opencv_impostor") +
                                " takes the name of nncheck's built-in engine ("))
      << o.output;
  EXPECT_TRUE(has(o.output, "libnncheck-engine-opencv.so); a library may not replace it"))
      << o.output;
  EXPECT_FALSE(has(o.output, "as recorded")) << "no case ran on the impostor\n" << o.output;
}
#endif

// Before, a bare name was checked in this folder but loaded by dlopen's search of the library
// path: "No such file" for a file that is here, or another library of that name loaded.
TEST(EnginesCommand, ALibraryNamedWithoutAFolderIsTheOneInThisFolder) {
  testing::TempDir here("engine_lib_here"), elsewhere("engine_lib_elsewhere");
  std::filesystem::copy_file(testPlugin("twin_a"), here.path() / "libmine.so");
  std::filesystem::copy_file(testPlugin("reference_impostor"), elsewhere.path() / "libmine.so");
  auto o = testing::runCommand("cd " + here.path().string() +
                               " && LD_LIBRARY_PATH=" + elsewhere.path().string() + " " +
                               NNCHECK_CLI + " engines --engine-lib libmine.so");
  EXPECT_EQ(o.status, 0) << o.output;
  EXPECT_TRUE(has(o.output, "twin ")) << o.output;
}

// Before, only existence was checked, and dlopen of a FIFO waited forever for a writer.
TEST(EnginesCommand, ALibraryThatIsNoRegularFileIsRefusedAtOnce) {
  testing::TempDir dir("engine_lib_fifo");
  const std::string fifo = (dir.path() / "libfifo.so").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto o = testing::runCommand("timeout 60 " + std::string(NNCHECK_CLI) + " engines --engine-lib " +
                               fifo);
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(has(o.output, "--engine-lib " + fifo + ": not a regular file")) << o.output;
  auto env = testing::runCommand("NNCHECK_ENGINE_LIBS=" + dir.path().string() + " timeout 60 " +
                                 NNCHECK_CLI + " engines");
  EXPECT_EQ(env.status, 2) << env.output;
  EXPECT_TRUE(
      has(env.output, "NNCHECK_ENGINE_LIBS: " + dir.path().string() + ": not a regular file"))
      << env.output;
}

// Before, junk in the engines folder was listed as engines (folders, FIFOs, dangling links),
// printed escapes raw, and a plug-in that crashed, aborted or exited while loading ended
// `nncheck engines` (rc 134, 139, or 0 with no output) without naming its file.
TEST(EnginesCommand, JunkInTheEnginesFolderIsNoEngineAndABadPluginIsNamed) {
  namespace fs = std::filesystem;
  testing::TempDir dir("engines_folder");
  const fs::path program = dir.path() / "nncheck", engines = dir.path() / "engines";
  fs::copy_file(NNCHECK_CLI, program);
  fs::create_directory(engines);
  fs::create_directory(engines / "libnncheck-engine-junkfolder.so");
  ASSERT_EQ(::mkfifo((engines / "libnncheck-engine-junkfifo.so").c_str(), 0600), 0);
  fs::create_symlink(dir.path() / "gone", engines / "libnncheck-engine-junklink.so");
  fs::copy_file(testPlugin("twin_a"), engines / "libnncheck-engine-\x1b[31mred.so");
  fs::copy_file(testPlugin("crashes_on_load"), engines / "libnncheck-engine-crashes.so");
  fs::copy_file(testPlugin("aborts_on_load"), engines / "libnncheck-engine-aborts.so");
  fs::copy_file(testPlugin("exits_on_load"), engines / "libnncheck-engine-exits.so");
  auto o = testing::runCommand("timeout 120 " + program.string() + " engines");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_TRUE(has(o.output, "reference    nncheck's reference interpreter")) << o.output;
  for (const char* junk : {"junkfolder", "junkfifo", "junklink", "\x1b"})
    EXPECT_FALSE(has(o.output, junk)) << junk << "\n" << o.output;
  for (const char* bad : {"crashes", "aborts", "exits"}) {
    const std::string file = (engines / ("libnncheck-engine-" + std::string(bad) + ".so")).string();
    EXPECT_TRUE(has(o.output, "engine '" + std::string(bad) + "': its plug-in " + file +
                                  (std::string(bad) == "exits" ? ": ends the process while loading"
                                                               : ": crashes while loading")))
        << bad << "\n"
        << o.output;
  }
}

TEST(OraclesCommand, ListsTheBuiltInOraclesAndWhatEachNeeds) {
  auto o = runCli("oracles");
  ASSERT_EQ(o.status, 0) << o.output;
  for (const char* needle :
       {"reference ", "deterministic ", "baseline ", "(needs the engine's baseline configuration)"})
    EXPECT_NE(o.output.find(needle), std::string::npos) << needle << "\n" << o.output;
}

// --oracle is checked before any case runs: an unknown name lists the registered ones, and an
// oracle that needs a baseline needs an engine that names one.
TEST(OraclesCommand, AnUnknownOrUnusableOracleIsAnErrorNamingIt) {
  auto unknown = runCli("fuzz --backend reference --cases 1 --oracle nosuch");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--oracle unknown oracle 'nosuch' (known: baseline"),
            std::string::npos)
      << unknown.output;
  auto noBaseline = runCli("fuzz --backend reference --cases 1 --oracle baseline");
  EXPECT_EQ(noBaseline.status, 2) << noBaseline.output;
  EXPECT_NE(noBaseline.output.find(
                "--oracle baseline: engine 'reference' names no baseline configuration"),
            std::string::npos)
      << noBaseline.output;
}

#ifdef NNCHECK_HAS_OPENCV_ENGINE
// The baseline oracle on a real engine: OpenCV's fusion=on against its fusion=off, the reference
// out of the comparison; the baseline is no configuration under test.
TEST(OraclesCommand, TheBaselineOracleRunsOpenCVAgainstItsOwnBaseline) {
  testing::TempDir tmp("oracle_cli");
  auto o = runCli("fuzz --backend opencv --oracle baseline --cases 40 --corpus " +
                  (tmp.path() / "corpus").string());
  ASSERT_EQ(o.status, 0) << o.output;
  EXPECT_NE(o.output.find("(target=cpu,fusion=on) against the oracle baseline (baseline "
                          "target=cpu,fusion=off)"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("campaign: 40 cases"), std::string::npos) << o.output;
  auto own = runCli("fuzz --backend opencv --oracle baseline --cases 1 --config fusion=off");
  EXPECT_EQ(own.status, 2) << own.output;
  EXPECT_NE(own.output.find("the baseline configuration"), std::string::npos) << own.output;
}
#endif

}  // namespace
}  // namespace nncheck
