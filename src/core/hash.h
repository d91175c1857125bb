// FNV-1a, 64 bits: a stable hash of bytes for names and contents (not for security).
//
//   uint64_t h = fnv1a("model bytes");
//   h = fnv1a("more bytes", h);   // chained
#pragma once

#include <cstdint>
#include <string_view>

namespace nncheck {

inline uint64_t fnv1a(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace nncheck
