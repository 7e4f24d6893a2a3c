#include "sim/factorizations.h"

namespace planck::sim {

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::int64_t count_factorizations(std::int64_t n, int f) {
  std::int64_t total = 1;
  auto combos = [f](std::int64_t e) {
    std::int64_t c = 1;  // C(e + f - 1, f - 1), exact in int64 for e <= 31, f <= 6
    for (int i = 1; i < f; ++i) c = c * (e + i) / i;
    return c;
  };
  for (std::int64_t p = 2; p * p <= n; ++p) {
    std::int64_t e = 0;
    while (n % p == 0) {
      n /= p;
      ++e;
    }
    if (e) total *= combos(e);
  }
  if (n > 1) total *= combos(1);
  return total;
}

}  // namespace planck::sim
