// The atomic writer under kills and hostile paths (issue 16, item 1): a run killed by
// SIGTERM/SIGINT leaves no temporary file, a stale one of a SIGKILLed run is removed by
// the next write, devices are written through, and an input is never an output.
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"
#include "ember/support/LargeBuffer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

fs::path freshDir(const std::string& name) {
  fs::path d = fs::path(EMBER_TEST_TMP) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> temps(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos)
      out.push_back(e.path().filename().string());
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// Forks a child that writes 512 MiB to DIR/out while a second thread sends `sig` to the
/// process as soon as the temporary file has data; returns the child's wait status.
int killedWhileWriting(const fs::path& dir, int sig) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ember::installTempFileCleanup();
    std::thread killer([&] {
      for (int i = 0; i < 20000; ++i) {
        for (const auto& e : fs::directory_iterator(dir))
          if (e.path().filename().string().rfind("out.tmp.", 0) == 0 &&
              fs::file_size(e.path()) > 0) {
            ::kill(::getpid(), sig);
            return;
          }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    });
    std::string big(std::size_t(1) << 29, 'x');
    ember::writeFileAtomic((dir / "out").string(), big);
    killer.join();
    ::_exit(42); // the write finished before the signal: the test cannot judge
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

} // namespace

TEST(OutputPaths, SigtermAndSigintRemoveTheTemporaryFile) {
  for (int sig : {SIGTERM, SIGINT}) {
    fs::path dir = freshDir("kill_" + std::to_string(sig));
    std::ofstream(dir / "out") << "previous";
    int status = killedWhileWriting(dir, sig);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(temps(dir).empty()) << temps(dir).front();
    EXPECT_EQ(slurp(dir / "out"), "previous"); // the old file is intact
  }
}

TEST(OutputPaths, StaleTemporaryOfADeadProcessIsRemovedByTheNextWrite) {
  fs::path dir = freshDir("stale");
  pid_t dead = ::fork();
  if (dead == 0)
    ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string stale = "out.tmp." + std::to_string(dead) + ".AbC123";
  const std::string live = "out.tmp." + std::to_string(::getppid()) + ".XyZ789";
  std::ofstream(dir / stale) << "half";
  std::ofstream(dir / live) << "in progress elsewhere";
  ember::writeFileAtomic((dir / "out").string(), "new");
  EXPECT_FALSE(fs::exists(dir / stale));
  EXPECT_TRUE(fs::exists(dir / live)); // a running process's file is left alone
  EXPECT_EQ(slurp(dir / "out"), "new");
}

TEST(OutputPaths, LinksAreFollowedAndKeepPermissions) {
  fs::path dir = freshDir("links");
  std::ofstream(dir / "t") << "old";
  ::chmod((dir / "t").c_str(), 0640);
  fs::create_symlink("t", dir / "l1");
  fs::create_symlink("l1", dir / "l2"); // a chain
  ember::writeFileAtomic((dir / "l2").string(), "new");
  EXPECT_TRUE(fs::is_symlink(dir / "l1"));
  EXPECT_TRUE(fs::is_symlink(dir / "l2"));
  EXPECT_EQ(slurp(dir / "t"), "new");
  struct stat st;
  ASSERT_EQ(::stat((dir / "t").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  fs::create_symlink("loop2", dir / "loop1");
  fs::create_symlink("loop1", dir / "loop2");
  EXPECT_THROW(ember::writeFileAtomic((dir / "loop1").string(), "x"), ember::Error);
}

TEST(OutputPaths, DirectoriesAndInputsAreRefused) {
  fs::path dir = freshDir("refuse");
  fs::create_directories(dir / "sub");
  fs::create_symlink("sub", dir / "sublink");
  for (const char* p : {"sub", "sublink"}) {
    try {
      ember::checkOutputFile((dir / p).string(), "-o");
      ADD_FAILURE() << p << " accepted";
    } catch (const ember::Error& e) {
      EXPECT_EQ(e.reason(), "is a directory") << e.what();
    }
    EXPECT_THROW(ember::writeFileAtomic((dir / p).string(), "x"), ember::Error);
  }
  std::ofstream(dir / "in.onnx") << "model";
  fs::create_hard_link(dir / "in.onnx", dir / "hard.onnx");
  fs::create_symlink("in.onnx", dir / "soft.onnx");
  const std::string in = (dir / "in.onnx").string();
  for (const char* p : {"in.onnx", "hard.onnx", "soft.onnx", "./../refuse/in.onnx"})
    EXPECT_THROW(ember::checkNotSameFile({(dir / p).string()}, {in}), ember::Error) << p;
  EXPECT_NO_THROW(ember::checkNotSameFile({(dir / "out.elf").string()}, {in}));
  // Two outputs naming one new file.
  EXPECT_THROW(ember::checkNotSameFile({(dir / "o").string(), (dir / "sub/../o").string()}, {}),
               ember::Error);
  // A device is written through, so it may appear on both sides (e.g. /dev/stdin).
  EXPECT_NO_THROW(ember::checkNotSameFile({"/dev/null"}, {"/dev/null"}));
}

TEST(OutputPaths, BufferReadsAreReadFileBytes) {
  // readFileBuffer (a binary's file, read once into huge pages): the bytes and the
  // refusals of readFileBytes.
  fs::path dir = freshDir("buffer");
  std::string bytes;
  for (int i = 0; i < 300000; ++i)
    bytes += char(i * 31 + 7);
  std::ofstream(dir / "f", std::ios::binary) << bytes;
  const ember::LargeBuffer b = ember::readFileBuffer((dir / "f").string());
  ASSERT_EQ(b.size(), bytes.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), b.size()), bytes);
  EXPECT_EQ(ember::readFileBuffer((dir / "f").string(), bytes.size()).size(), bytes.size());
  EXPECT_THROW(ember::readFileBuffer((dir / "f").string(), bytes.size() - 1), ember::Error);
  std::ofstream(dir / "empty");
  EXPECT_EQ(ember::readFileBuffer((dir / "empty").string()).size(), 0u);
  EXPECT_THROW(ember::readFileBuffer(dir.string()), ember::Error);               // a folder
  EXPECT_THROW(ember::readFileBuffer((dir / "missing").string()), ember::Error); // no file
  EXPECT_THROW(ember::readFileBuffer("/dev/zero", 1 << 20), ember::Error);       // bounded device
  // A /proc file says it is empty: it is read to its end all the same.
  const ember::LargeBuffer status = ember::readFileBuffer("/proc/self/status");
  ASSERT_GT(status.size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(status.data()), 5), "Name:");
  // A buffer reserves without writing: its pages read 0.
  ember::LargeBuffer r(std::uint64_t(3) << 20);
  EXPECT_EQ(r.size(), 0u);
  EXPECT_EQ(r.data()[(std::uint64_t(3) << 20) - 1], 0);
  r.resize(10);
  EXPECT_EQ(r.size(), 10u);
  EXPECT_THROW(r.resize((std::uint64_t(3) << 20) + 1), std::length_error);
  ember::LargeBuffer moved = std::move(r);
  EXPECT_EQ(moved.size(), 10u);
  EXPECT_EQ(r.data(), nullptr);
  // moveTo: the pages of a buffer into another one, not copied; the bytes around stay.
  ember::LargeBuffer from = ember::readFileBuffer((dir / "f").string());
  ember::LargeBuffer into(std::uint64_t(8) << 20);
  const std::uint64_t at = std::uint64_t(2) << 20;
  into.data()[at - 1] = 7;
  into.data()[at + bytes.size() + 8192] = 9;
  ASSERT_TRUE(from.moveTo(into.data() + at));
  EXPECT_EQ(from.data(), nullptr);
  EXPECT_EQ(from.size(), 0u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(into.data() + at), bytes.size()), bytes);
  EXPECT_EQ(into.data()[at - 1], 7);
  EXPECT_EQ(into.data()[at + bytes.size() + 8192], 9);
  EXPECT_FALSE(from.moveTo(into.data() + at)); // nothing left to move
  ember::LargeBuffer odd = ember::readFileBuffer((dir / "f").string());
  EXPECT_FALSE(odd.moveTo(into.data() + 1)); // not a page boundary: nothing moves
  EXPECT_EQ(odd.size(), bytes.size());
}

TEST(OutputPaths, ReadsAreBounded) {
  fs::path dir = freshDir("limits");
  std::ofstream(dir / "f") << std::string(100, 'a');
  EXPECT_EQ(ember::readFileBytes((dir / "f").string(), 100).size(), 100u);
  EXPECT_THROW(ember::readFileBytes((dir / "f").string(), 99), ember::Error);
  // An endless device stops at the limit instead of filling memory.
  try {
    ember::readFileBytes("/dev/zero", 1 << 20);
    ADD_FAILURE() << "/dev/zero read whole";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero: is larger than 1048576 bytes"),
              std::string::npos)
        << e.what();
  }
}
