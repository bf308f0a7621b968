// .npy reader/writer tests. The byte strings below were produced by NumPy 1.24
// (np.save to a BytesIO), so they check Ember against NumPy, not against itself.
#include "ember/support/Npy.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <dirent.h>
#include <string>
#include <unistd.h>

using namespace ember;

namespace {

std::string pad(const std::string& dict) {
  // NumPy's header for the arrays below is 118 bytes long (128 with magic + length).
  return dict + std::string(117 - dict.size(), ' ') + "\n";
}
std::string npyV1(const std::string& dict, const std::string& data) {
  std::string h = pad(dict);
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}
std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b)
    s += static_cast<char>(v);
  return s;
}

const std::string kI32 =
    npyV1("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
          bytes({1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0}));
const std::string kF32 = npyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                               bytes({0, 0, 0xc0, 0x3f, 0, 0, 0x10, 0xc0}));
const std::string kI64 = npyV1("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                               bytes({7, 0, 0, 0, 0, 0, 0, 0}));
const std::string kBool =
    npyV1("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bytes({1, 0, 1}));
const std::string kI8 =
    npyV1("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", bytes({0x80, 0x7f, 0}));

/// Expects parseNpy(b) to throw an ember::Error naming "f.npy" and containing `part`.
void expectError(const std::string& b, const std::string& part) {
  try {
    parseNpy(b, "f.npy");
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "f.npy");
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

std::string tempDir() {
  char tmpl[] = "/tmp/ember_npy_test.XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

size_t countEntries(const std::string& dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        ++n;
    closedir(d);
  }
  return n;
}

} // namespace

TEST(Npy, ReadsNumpyFilesOfEveryKind) {
  Tensor i32 = parseNpy(kI32, "i32");
  EXPECT_EQ(i32.kind(), ElemKind::Int32);
  EXPECT_EQ(i32.dims(), (Shape{2, 3}));
  EXPECT_EQ(i32.toVector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));

  Tensor f = parseNpy(kF32, "f32");
  EXPECT_EQ(f.dims(), (Shape{2}));
  EXPECT_EQ(f.toVector<float>(), (std::vector<float>{1.5f, -2.25f}));

  Tensor s = parseNpy(kI64, "i64");
  EXPECT_EQ(s.dims(), Shape{});
  EXPECT_EQ(s.toVector<int64_t>(), (std::vector<int64_t>{7}));

  Tensor b = parseNpy(kBool, "bool");
  EXPECT_EQ(b.kind(), ElemKind::Bool);
  EXPECT_EQ(b.toVector<bool>(), (std::vector<bool>{true, false, true}));

  Tensor i8 = parseNpy(kI8, "i8");
  EXPECT_EQ(i8.toVector<int8_t>(), (std::vector<int8_t>{-128, 127, 0}));
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  EXPECT_EQ(serializeNpy(Tensor::fromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})), kI32);
  EXPECT_EQ(serializeNpy(Tensor::fromVector<float>({2}, {1.5f, -2.25f})), kF32);
  EXPECT_EQ(serializeNpy(Tensor::scalar<int64_t>(7)), kI64);
  EXPECT_EQ(serializeNpy(Tensor::fromVector<bool>({3}, {true, false, true})), kBool);
  EXPECT_EQ(serializeNpy(Tensor::fromVector<int8_t>({3}, {-128, 127, 0})), kI8);
}

TEST(Npy, ReadsVersion2Headers) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  std::string h = dict + std::string(128 - 12 - dict.size() - 1, ' ') + "\n";
  std::string b("\x93NUMPY\x02\x00", 8);
  b += bytes({static_cast<int>(h.size()), 0, 0, 0}) + h + bytes({0, 0, 0x80, 0x3f});
  Tensor t = parseNpy(b, "v2");
  EXPECT_EQ(t.toVector<float>(), (std::vector<float>{1.0f}));
}

TEST(Npy, AcceptsTightAndDoubleQuotedHeaders) {
  std::string h = "{\"shape\":(2,),\"fortran_order\":False,\"descr\":\"<i4\"}\n";
  std::string b("\x93NUMPY\x01\x00", 8);
  b += bytes({static_cast<int>(h.size()), 0}) + h + bytes({9, 0, 0, 0, 0xff, 0xff, 0xff, 0xff});
  EXPECT_EQ(parseNpy(b, "x").toVector<int32_t>(), (std::vector<int32_t>{9, -1}));
}

TEST(Npy, RoundTripsThroughAFile) {
  std::string dir = tempDir();
  std::string path = dir + "/t.npy";
  Tensor t = Tensor::fromVector<float>({2, 2, 1}, {0.f, -1.f, 3.5f, 1e30f});
  writeNpy(path, t);
  EXPECT_EQ(readNpy(path), t);
  Tensor big(ElemKind::Int64, {3, 0, 4}); // zero-size arrays are legal
  writeNpy(path, big);
  EXPECT_EQ(readNpy(path).dims(), (Shape{3, 0, 4}));
  EXPECT_EQ(countEntries(dir), 1u); // no temporary file left behind
  std::remove(path.c_str());
  rmdir(dir.c_str());
}

TEST(NpyErrors, BadMagic) {
  expectError("", "bad magic");
  expectError("PK\x03\x04 this is a zip file", "bad magic");
  expectError(std::string("\x93NUMPZ\x01\x00", 8), "bad magic");
}

TEST(NpyErrors, TruncatedHeader) {
  expectError(std::string("\x93NUMPY", 6), "truncated");
  expectError(std::string("\x93NUMPY\x01\x00\x76", 9), "truncated");
  expectError(kI32.substr(0, 60), "truncated .npy header");
}

TEST(NpyErrors, TruncatedOrExtraData) {
  expectError(kI32.substr(0, kI32.size() - 1), "truncated .npy data");
  expectError(kI32.substr(0, 128), "needs 24 bytes, the file has 0");
  expectError(kI32 + "x", "size mismatch");
}

TEST(NpyErrors, UnsupportedDtypes) {
  std::string c8 =
      npyV1("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  EXPECT_THROW(parseNpy(c8, "f.npy"), Unsupported);
  expectError(c8, "dtype '<c8' is not supported");
  std::string be =
      npyV1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", std::string(4, '\0'));
  expectError(be, "big-endian");
  expectError(
      npyV1("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", std::string(12, '\0')),
      "'<U3' is not supported");
  expectError(npyV1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                    std::string(4, '\0')),
              "malformed .npy header");
}

TEST(NpyErrors, FortranOrder) {
  std::string f =
      npyV1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", std::string(16, '\0'));
  EXPECT_THROW(parseNpy(f, "f.npy"), Unsupported);
  expectError(f, "Fortran");
  // For rank <= 1 Fortran and C order are the same bytes: accepted.
  std::string v =
      npyV1("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", std::string(4, '\0'));
  EXPECT_EQ(parseNpy(v, "v").size(), 1);
}

TEST(NpyErrors, BadHeaderDict) {
  auto h = [](const std::string& d) { return npyV1(d, std::string(4, '\0')); };
  expectError(h("{'descr': '<f4', 'shape': (1,), }"), "no 'fortran_order' key");
  expectError(h("{'descr': '<f4', 'fortran_order': False, }"), "no 'shape' key");
  expectError(h("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
              "malformed .npy header");
  expectError(h("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"),
              "non-negative integer");
  expectError(h("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }"), "malformed .npy header");
  expectError(h("{'descr': '<f4', 'fortran_order': False, 'shape': [1], }"),
              "malformed .npy header");
  // A NUL inside the dtype string is refused, not cut at (issue 47, item 9).
  expectError(h(std::string("{'descr': '<f4\0zz', 'fortran_order': False, 'shape': (1,), }", 60)),
              "control byte 0x00 at offset 14 inside a string");
  expectError(h("{'descr': '<f4', 'fortran_order': False, 'shape': (1,) "), "malformed");
  expectError(h("{'descr: '<f4', 'fortran_order': False, 'shape': (1,), }"), "malformed");
  expectError(h("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"),
              "twice");
  expectError(h("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(99999999999999999999999,), }"),
              "too large");
  expectError(h("{'descr': '<f4', 'fortran_order': False, 'shape': "
                "(4294967296, 4294967296, 4294967296), }"),
              "too large");
  expectError(h("not a dict at all"), "malformed");
}

TEST(NpyErrors, BadVersionAndBoolValues) {
  std::string v9 = kI32;
  v9[6] = 9;
  expectError(v9, "version 9.0 is not supported");
  expectError(npyV1("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", bytes({1, 2})),
              "must be 0 or 1");
}

TEST(NpyErrors, FilesThatCannotBeRead) {
  try {
    readNpy("/nonexistent/dir/x.npy");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "/nonexistent/dir/x.npy");
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_THROW(readNpy("/tmp"), Error);
}

TEST(AtomicFile, WritesReplacesAndFailsCleanly) {
  std::string dir = tempDir();
  std::string path = dir + "/a.bin";
  writeFileAtomic(path, "first");
  EXPECT_EQ(readFileBytes(path), "first");
  writeFileAtomic(path, std::string("se\0cond", 7));
  EXPECT_EQ(readFileBytes(path), std::string("se\0cond", 7));
  EXPECT_EQ(countEntries(dir), 1u);
  EXPECT_THROW(writeFileAtomic(dir + "/no/such/dir/f", "x"), Error);
  // Renaming over a directory fails: the temporary file must be gone afterwards.
  EXPECT_THROW(writeFileAtomic(dir, "x"), Error);
  EXPECT_EQ(countEntries(dir), 1u);
  std::remove(path.c_str());
  rmdir(dir.c_str());
}

// Without libFuzzer: deterministic mutations (byte flips, truncations, header edits) of
// valid files must each give a tensor or an ember::Error, never anything else.
TEST(NpyFuzzSmoke, MutatedFilesGiveTensorsOrErrors) {
  const std::string seeds[] = {kI32, kF32, kI64, kBool, kI8};
  uint64_t state = 12345;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string b = seeds[next() % 5];
    int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = next() % b.size();
      switch (next() % 4) {
      case 0: // flip a byte, mostly in the header
        b[next() % 2 ? at % 128 : at] = static_cast<char>(next());
        break;
      case 1: // truncate
        b.resize(at);
        break;
      case 2: // insert a header-ish character
        b.insert(at % (b.size() + 1), 1, "{}(),:' 0123456789TFalse<f4|b1"[next() % 30]);
        break;
      default: // change the announced header length
        if (b.size() > 9)
          b[8 + next() % 2] = static_cast<char>(next());
        break;
      }
      if (b.empty())
        break;
    }
    try {
      Tensor t = parseNpy(b, "m.npy");
      EXPECT_EQ(parseNpy(serializeNpy(t), "again"), t);
      ++parsed;
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "m.npy");
      ++rejected;
    }
  }
  EXPECT_GT(parsed, 20); // some mutations (padding bytes, data) stay valid
  EXPECT_GT(rejected, 10000);
}
