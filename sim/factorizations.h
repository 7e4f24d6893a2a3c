#pragma once
// The integer arithmetic of enumerate's search over mesh shapes.

#include <cstdint>
#include <vector>

namespace planck::sim {

// The divisors of n, ascending.
std::vector<std::int64_t> divisors(std::int64_t n);

// Ordered factorizations of n into f factors: prod over primes p^e of C(e + f - 1, f - 1).
std::int64_t count_factorizations(std::int64_t n, int f);

}  // namespace planck::sim
