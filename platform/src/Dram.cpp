// The sparse DRAM image (copy-on-write 64 KiB pages).
#include "ember/platform/Dram.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ember::platform {

namespace {
using u64 = std::uint64_t;
constexpr u64 kPage = DramImage::kPageBytes;

bool allZero(const std::uint8_t* p) {
  return std::all_of(p, p + kPage, [](std::uint8_t b) { return b == 0; });
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
      std::memcpy(out, it->second->bytes + off, k);
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

std::shared_ptr<DramImage::Page> DramImage::ownPage(const std::uint8_t* from) {
  auto p = std::make_shared<Page>();
  p->owned.reset(from ? new std::uint8_t[kPage] : new std::uint8_t[kPage]());
  p->bytes = p->owned.get();
  if (from)
    std::memcpy(p->bytes, from, kPage);
  return p;
}

std::uint8_t* DramImage::writable(u64 page) {
  auto& p = pages_[page];
  if (!p)
    p = ownPage(nullptr);
  else if (p.use_count() > 1 || !p->owned) // shared with a copy, or a view: copy first
    p = ownPage(p->bytes);
  return p->bytes;
}

void DramImage::write(u64 addr, const std::uint8_t* in, u64 n) {
  while (n) {
    const u64 page = addr / kPage, off = addr % kPage, k = std::min(n, kPage - off);
    auto it = k == kPage ? pages_.find(page) : pages_.end();
    if (k == kPage && (it == pages_.end() || it->second.use_count() > 1 || !it->second->owned))
      pages_[page] = ownPage(in); // a whole page: no zeros or copy first
    else
      std::memcpy(writable(page) + off, in, k);
    addr += k, in += k, n -= k;
  }
}

void DramImage::view(u64 addr, const std::uint8_t* bytes, u64 n) {
  if (addr % kPage || n % kPage)
    throw std::invalid_argument("DramImage::view: [" + std::to_string(addr) + ", +" +
                                std::to_string(n) + ") is not whole 64 KiB pages");
  for (u64 at = 0; at + kPage <= n; at += kPage) {
    auto p = std::make_shared<Page>();
    p->bytes = const_cast<std::uint8_t*>(bytes + at); // never written through (writable)
    pages_[(addr + at) / kPage] = std::move(p);
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
      if (it == b->pages_.end() ? !allZero(bytes->bytes)
                                : (it->second->bytes != bytes->bytes &&
                                   std::memcmp(it->second->bytes, bytes->bytes, kPage) != 0))
        return false;
    }
  }
  return true;
}

} // namespace ember::platform
