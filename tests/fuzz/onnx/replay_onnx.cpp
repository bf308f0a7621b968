// Replay driver of the ONNX loader fuzz target, for the normal build (no libFuzzer):
// imports each seed model and a deterministic set of mutations of it (bit flips, byte
// overwrites, truncations, deleted and duplicated chunks). Exits non-zero if any
// exception other than ember::Error escapes; a crash fails the ctest by itself.
//
//   replay_onnx [--mutations N] [--seed S] MODEL.onnx|DIR ...
#include "FuzzOnnx.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace {

/// Small deterministic generator (xorshift64*), so every run tries the same inputs.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Mutation number `k` of `seed`.
std::string mutate(const std::string& seed, Rng& rng, size_t k) {
  std::string s = seed;
  if (s.empty())
    return s;
  static const unsigned char interesting[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12};
  switch (k % 6) {
  case 0: // flip 1-4 bits
    for (size_t n = 1 + rng.below(4); n > 0; --n)
      s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
    break;
  case 1: // overwrite a byte with an interesting value (lengths, tags, varint ends)
    s[rng.below(s.size())] = static_cast<char>(interesting[rng.below(sizeof interesting)]);
    break;
  case 2: // truncate
    s.resize(rng.below(s.size()));
    break;
  case 3: { // delete a chunk
    size_t at = rng.below(s.size());
    s.erase(at, 1 + rng.below(16));
    break;
  }
  case 4: { // duplicate a chunk
    size_t at = rng.below(s.size());
    s.insert(at, s.substr(at, 1 + rng.below(32)));
    break;
  }
  default: // random bytes over a short span
    for (size_t i = rng.below(s.size()), n = 1 + rng.below(8); n > 0 && i < s.size(); --n, ++i)
      s[i] = static_cast<char>(rng.next());
    break;
  }
  return s;
}

} // namespace

int main(int argc, char** argv) {
  size_t mutations = 1000;
  uint64_t seedValue = 0x9e3779b97f4a7c15ull;
  std::vector<fs::path> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mutations" && i + 1 < argc)
      mutations = std::stoul(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seedValue = std::stoull(argv[++i]);
    else if (fs::is_directory(a)) {
      for (const auto& e : fs::recursive_directory_iterator(a))
        if (e.path().extension() == ".onnx")
          seeds.push_back(e.path());
    } else if (fs::exists(a))
      seeds.push_back(a);
    else {
      std::cerr << "replay_onnx: no such seed '" << a << "'\n";
      return 2;
    }
  }
  if (seeds.empty()) {
    std::cerr << "usage: replay_onnx [--mutations N] [--seed S] MODEL.onnx|DIR ...\n";
    return 2;
  }
  std::sort(seeds.begin(), seeds.end());
  size_t imported = 0, rejected = 0, bad = 0;
  for (const fs::path& p : seeds) {
    const std::string seed = readFile(p);
    Rng rng{seedValue ^ std::hash<std::string>()(p.filename().string())};
    for (size_t k = 0; k <= mutations; ++k) {
      std::string input = k == 0 ? seed : mutate(seed, rng, k);
      try {
        auto r =
            ember::fuzz::fuzzOnnxOnce(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        (r == ember::fuzz::OnnxFuzzResult::Imported ? imported : rejected)++;
      } catch (const std::exception& e) {
        ++bad;
        std::cerr << p << " mutation " << k << ": non-ember exception: " << e.what() << "\n";
      }
    }
  }
  std::cout << "replay_onnx: " << seeds.size() << " seeds, " << imported + rejected + bad
            << " inputs: " << imported << " imported, " << rejected
            << " rejected with ember::Error, " << bad << " other exceptions\n";
  return bad == 0 ? 0 : 1;
}
