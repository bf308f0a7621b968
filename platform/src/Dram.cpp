// The sparse DRAM image (copy-on-write 64 KiB pages).
#include "ember/platform/Dram.h"

#include <algorithm>
#include <cstring>

namespace ember::platform {

namespace {
using u64 = std::uint64_t;
constexpr u64 kPage = DramImage::kPageBytes;

bool allZero(const std::vector<std::uint8_t>& p) {
  return std::all_of(p.begin(), p.end(), [](std::uint8_t b) { return b == 0; });
}
} // namespace

DramImage::DramImage(const std::vector<std::uint8_t>& flat) {
  write(0, flat.data(), flat.size());
}

void DramImage::read(u64 addr, std::uint8_t* out, u64 n) const {
  while (n) {
    const u64 page = addr / kPage, off = addr % kPage, k = std::min(n, kPage - off);
    auto it = pages_.find(page);
    if (it == pages_.end())
      std::memset(out, 0, k);
    else
      std::memcpy(out, it->second->data() + off, k);
    addr += k, out += k, n -= k;
  }
}

std::vector<std::uint8_t> DramImage::read(u64 addr, u64 n) const {
  std::vector<std::uint8_t> v(n);
  read(addr, v.data(), n);
  return v;
}

std::uint8_t DramImage::operator[](u64 addr) const {
  std::uint8_t b = 0;
  read(addr, &b, 1);
  return b;
}

std::uint8_t* DramImage::writable(u64 page) {
  auto& p = pages_[page];
  if (!p)
    p = std::make_shared<Page>(kPage, 0);
  else if (p.use_count() > 1) // shared with a copy: unshare before writing
    p = std::make_shared<Page>(*p);
  return p->data();
}

void DramImage::write(u64 addr, const std::uint8_t* in, u64 n) {
  while (n) {
    const u64 page = addr / kPage, off = addr % kPage, k = std::min(n, kPage - off);
    auto it = k == kPage ? pages_.find(page) : pages_.end();
    if (k == kPage && (it == pages_.end() || it->second.use_count() > 1))
      pages_[page] = std::make_shared<Page>(in, in + kPage); // a whole page: no zeros first
    else
      std::memcpy(writable(page) + off, in, k);
    addr += k, in += k, n -= k;
  }
}

u64 DramImage::extent() const {
  return pages_.empty() ? 0 : (pages_.rbegin()->first + 1) * kPage;
}

bool DramImage::operator==(const DramImage& o) const {
  for (const auto* a : {this, &o}) {
    const DramImage* b = a == this ? &o : this;
    for (const auto& [page, bytes] : a->pages_) {
      auto it = b->pages_.find(page);
      if (it == b->pages_.end() ? !allZero(*bytes) : (it->second != bytes && *it->second != *bytes))
        return false;
    }
  }
  return true;
}

} // namespace ember::platform
