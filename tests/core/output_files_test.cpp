// Files a person names (-o, --report, --write-table): a regular file is replaced atomically, but
// a device, a FIFO or a link keeps what it is. Before, every output was written beside the path
// and renamed over it, so `-o /dev/null` would have replaced the system's node with a regular
// file, and a link to /proc/self/fd/1 became a file of its own.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "core/files.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

std::string contents(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using testing::errorOf;

TEST(OutputFiles, AFifoStaysAFifoAndGetsTheBytes) {
  testing::TempDir dir("out_fifo");
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader opens first without blocking, so the write never waits on it, and it reads
  // with a time limit, so a writer that replaced the FIFO fails the test instead of hanging it.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  std::string got;
  std::thread read([&] {
    char buf[64];
    pollfd p{reader, POLLIN, 0};
    while (::poll(&p, 1, 5000) > 0) {
      const ssize_t n = ::read(reader, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
  });
  writeOutputFile(fifo, "picture bytes");
  read.join();
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fifo)) << "the FIFO was replaced by a regular file";
  EXPECT_EQ(got, "picture bytes");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1)
      << "no temporary file is left beside it";
}

TEST(OutputFiles, ALinkStaysALinkAndItsTargetIsWritten) {
  testing::TempDir dir("out_link");
  const fs::path target = dir.path() / "real.html", link = dir.path() / "report.html";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  writeOutputFile(link, "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(contents(target), "new");
  // A dangling link: the file it names is made, the link kept.
  const fs::path dangling = dir.path() / "dangling.svg", later = dir.path() / "later.svg";
  fs::create_symlink(later, dangling);
  writeOutputFile(dangling, "svg");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dangling)));
  EXPECT_EQ(contents(later), "svg");
}

TEST(OutputFiles, ARegularFileIsReplacedAtomically) {
  testing::TempDir dir("out_regular");
  const fs::path file = dir.path() / "r.html";
  writeOutputFile(file, "one");
  writeOutputFile(file, "two");
  EXPECT_EQ(contents(file), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(OutputFiles, WhatCannotBeWrittenIsNamedBeforeTheWorkStarts) {
  testing::TempDir dir("out_check");
  // A folder: before, "cannot rename temporary file into place: Success" after the campaign.
  EXPECT_NE(errorOf([&] { checkOutputFile(dir.path()); }).find(": is a folder; name a file"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { writeOutputFile(dir.path(), "x"); }).find(": is a folder"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              checkOutputFile(dir.path() / "missing" / "r.html");
            }).find("r.html: no such folder"),
            std::string::npos);
  EXPECT_EQ(errorOf([&] { checkOutputFile(dir.path() / "r.html"); }), "(no error)");
  EXPECT_EQ(errorOf([&] { checkOutputFile("/dev/null"); }), "(no error)");
  if (::geteuid() != 0) {  // root writes anywhere
    fs::create_directories(dir.path() / "ro");
    fs::permissions(dir.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(
        errorOf([&] { checkOutputFile(dir.path() / "ro" / "r.html"); }).find("cannot be written"),
        std::string::npos);
  }
}

TEST(OutputFiles, AFailedRenameSaysWhy) {
  // Before, the error was read after a cleanup had reset it: "cannot rename temporary file into
  // place: Success".
  testing::TempDir dir("out_rename");
  fs::create_directories(dir.path() / "taken" / "inside");
  const std::string e = errorOf([&] { writeFileAtomic(dir.path() / "taken", "x"); });
  EXPECT_NE(e.find("cannot rename temporary file into place: "), std::string::npos) << e;
  EXPECT_EQ(e.find("Success"), std::string::npos) << e;
}

TEST(OutputFiles, ALinkPlantedAtTheTemporaryNameIsNotWrittenThrough) {
  // The temporary's name is predictable (<path>.tmp.<pid>): before, a link planted there in a
  // shared folder had the file it pointed to truncated and overwritten.
  testing::TempDir dir("out_planted");
  const fs::path victim = dir.path() / "victim", out = dir.path() / "r.html";
  std::ofstream(victim) << "keep me";
  fs::path tmp = out;
  tmp += ".tmp." + std::to_string(::getpid());
  fs::create_symlink(victim, tmp);
  writeOutputFile(out, "page");
  EXPECT_EQ(contents(victim), "keep me");
  EXPECT_EQ(contents(out), "page");
  EXPECT_FALSE(fs::exists(fs::symlink_status(tmp)));
}

TEST(OutputFiles, AReplacedFileKeepsItsPermissions) {
  testing::TempDir dir("out_mode");
  const fs::path file = dir.path() / "r.html";
  writeOutputFile(file, "one");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::group_write | fs::perms::others_read);
  const fs::perms before = fs::status(file).permissions();
  writeOutputFile(file, "two");
  EXPECT_EQ(fs::status(file).permissions(), before);
}

TEST(FileLimits, ReadsThatRefuseLinksNameTheLink) {
  testing::TempDir dir("read_links");
  const fs::path secret = dir.path() / "secret", link = dir.path() / "notes.txt";
  std::ofstream(secret) << "do not copy";
  fs::create_symlink(secret, link);
  EXPECT_EQ(readFile(link), "do not copy") << "a path a person names is followed";
  EXPECT_NE(errorOf([&] {
              readFile(link, Links::Refuse);
            }).find("notes.txt: is a symbolic link, which nncheck does not follow here"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              readFile(secret, Links::Follow, 4);
            }).find("secret: 11 bytes, more than the 4 bytes such a file may take"),
            std::string::npos);
}

}  // namespace
}  // namespace nncheck
