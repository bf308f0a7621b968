// Replay driver for the fuzz entry points in builds without libFuzzer: runs every seed
// file, then deterministic random mutations of them (bit flips, interesting bytes,
// numbers swapped for edge values, cuts, splices). A crash or sanitizer report fails.
//   usage: REPLAY [--mutations N] [--seed S] [--verbose] FILE_OR_DIR...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Bytes = std::vector<std::uint8_t>;

bool isDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void addFile(const std::string& p, std::vector<Bytes>& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", p.c_str());
    std::exit(2);
  }
  out.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void collect(const std::string& p, std::vector<Bytes>& out) {
  if (!isDir(p))
    return addFile(p, out);
  DIR* d = ::opendir(p.c_str());
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.')
      names.push_back(p + "/" + e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names)
    if (!isDir(n))
      addFile(n, out);
}

const char* const kNumbers[] = {"0",
                                "1",
                                "-1",
                                "2",
                                "3",
                                "7",
                                "8",
                                "12",
                                "31",
                                "32",
                                "33",
                                "63",
                                "64",
                                "65",
                                "127",
                                "128",
                                "255",
                                "256",
                                "1023",
                                "65535",
                                "4294967295",
                                "4294967296",
                                "9223372036854775807",
                                "18446744073709551615",
                                "18446744073709551616",
                                "1e308",
                                "-0",
                                "0.5",
                                "\"x\"",
                                "null",
                                "true",
                                "[]",
                                "{}"};

/// Replaces one run of digits with an edge-case number (structure-aware for JSON).
void swapNumber(Bytes& b, std::mt19937_64& rng) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b[i] >= '0' && b[i] <= '9' && (i == 0 || !(b[i - 1] >= '0' && b[i - 1] <= '9')))
      starts.push_back(i);
  if (starts.empty())
    return;
  std::size_t s = starts[rng() % starts.size()], e = s;
  while (e < b.size() && ((b[e] >= '0' && b[e] <= '9') || b[e] == '.'))
    ++e;
  const char* n = kNumbers[rng() % std::size(kNumbers)];
  b.erase(b.begin() + long(s), b.begin() + long(e));
  b.insert(b.begin() + long(s), n, n + std::strlen(n));
}

void mutate(Bytes& b, const std::vector<Bytes>& seeds, std::mt19937_64& rng) {
  int n = 1 + int(rng() % 4);
  for (int k = 0; k < n; ++k) {
    std::size_t pos = b.empty() ? 0 : rng() % b.size();
    switch (rng() % 9) {
    case 0:
      if (!b.empty())
        b[pos] ^= std::uint8_t(1u << (rng() % 8));
      break;
    case 1: {
      static const std::uint8_t v[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, 0x40, 0x10};
      if (!b.empty())
        b[pos] = v[rng() % std::size(v)];
      break;
    }
    case 2:
      if (!b.empty())
        b[pos] = std::uint8_t(rng());
      break;
    case 3:
      b.resize(pos);
      break;
    case 4: {
      std::size_t len = std::min<std::size_t>(b.size() - std::min(pos, b.size()), rng() % 64);
      b.erase(b.begin() + long(pos), b.begin() + long(pos + len));
      break;
    }
    case 5: {
      Bytes ins(rng() % 16);
      for (auto& x : ins)
        x = std::uint8_t(rng());
      b.insert(b.begin() + long(pos), ins.begin(), ins.end());
      break;
    }
    case 6: {
      const Bytes& o = seeds[rng() % seeds.size()];
      if (o.empty())
        break;
      std::size_t from = rng() % o.size(),
                  len = std::min<std::size_t>(o.size() - from, rng() % 256);
      b.insert(b.begin() + long(pos), o.begin() + long(from), o.begin() + long(from + len));
      break;
    }
    case 7: // 8-byte little-endian field set to an edge value (ELF offsets, sizes, counts)
      if (b.size() >= 8) {
        static const std::uint64_t v[] = {0,     1,  0xffffffffull, 0x100000000ull,
                                          ~0ull, 64, 0x7fffffffull};
        std::uint64_t x = v[rng() % std::size(v)];
        std::size_t at = (rng() % (b.size() - 7)) & ~std::size_t(rng() % 2 ? 7 : 3);
        for (int i = 0; i < 8 && at + std::size_t(i) < b.size(); ++i)
          b[at + std::size_t(i)] = std::uint8_t(x >> (8 * i));
      }
      break;
    default:
      swapNumber(b, rng);
      break;
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  long mutations = 1000;
  std::uint64_t seed = 1;
  bool verbose = false;
  std::vector<Bytes> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mutations" && i + 1 < argc)
      mutations = std::atol(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--verbose")
      verbose = true;
    else
      collect(a, seeds);
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "no seed inputs\n");
    return 2;
  }
  for (const auto& s : seeds)
    LLVMFuzzerTestOneInput(s.data(), s.size());
  std::mt19937_64 rng(seed);
  for (long i = 0; i < mutations; ++i) {
    Bytes b = seeds[rng() % seeds.size()];
    mutate(b, seeds, rng);
    if (verbose)
      std::fprintf(stderr, "mutation %ld: %zu bytes\n", i, b.size());
    LLVMFuzzerTestOneInput(b.data(), b.size());
  }
  std::printf("replayed %zu seeds and %ld mutations (seed %llu): no crash\n", seeds.size(),
              mutations, static_cast<unsigned long long>(seed));
  return 0;
}
