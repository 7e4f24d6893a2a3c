#pragma once
// Concatenation by appending into one string. `"[" + std::to_string(x)` uses
// operator+(const char*, std::string&&), which inserts at the front of the temporary; GCC 12
// then warns -Wrestrict on a memcpy it cannot prove disjoint (a false positive, GCC bug 105329).
// Appending never takes that path, so code that builds text from literals and temporaries
// writes str_cat("[", std::to_string(x), "]") instead.

#include <string>
#include <string_view>

namespace planck::core {

template <class... Parts>
std::string str_cat(const Parts&... parts) {
  std::string out;
  out.reserve((std::string_view(parts).size() + ... + 0));
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace planck::core
