#include "core/schedule/collectives.h"

#include <algorithm>

#include "core/base/int128.h"
#include "core/base/saturating.h"

namespace planck::core {

const CollectiveRow& collective(CollOp op) {
  for (const CollectiveRow& row : kCollectives) {
    if (row.op == op) return row;
  }
  return kCollectives[0];  // unreachable: every CollOp has a row (collectives_test checks)
}

const char* op_name(CollOp op) { return collective(op).name; }

std::optional<CollOp> parse_op(std::string_view name) {
  for (const CollectiveRow& row : kCollectives) {
    if (name == row.name) return row.op;
  }
  return std::nullopt;
}

double bus_factor(CollOp op, std::int64_t n) {
  const CollectiveRow& row = collective(op);
  if (row.ring_passes == 0) return 1.0;
  if (n <= 1) return 0.0;
  const double dn = static_cast<double>(n);
  return row.ring_passes * (dn - 1) / dn;
}

std::int64_t wire_bytes_per_rank(CollOp op, std::int64_t n, std::int64_t bytes) {
  const CollectiveRow& row = collective(op);
  if (bytes <= 0) return 0;
  if (row.point_to_point) return bytes;
  if (n <= 1) return 0;
  if (row.ring_passes == 0) return bytes;
  // Rounded up; past INT64_MAX it saturates (core/base/saturating.h).
  const Int128 q = (Int128{row.ring_passes} * (n - 1) * bytes + n - 1) / n;
  return q > kSaturated ? kSaturated : static_cast<std::int64_t>(q);
}

std::int64_t ring_steps(CollOp op, std::int64_t n) {
  const CollectiveRow& row = collective(op);
  if (row.point_to_point) return 1;
  if (n <= 1) return 0;
  return std::max(1, row.ring_passes) * (n - 1);
}

std::int64_t send_elements(CollOp op, std::int64_t n, std::int64_t count) {
  return collective(op).send_n_chunks ? count * n : count;
}

std::int64_t recv_elements(CollOp op, std::int64_t n, std::int64_t count) {
  return collective(op).recv_n_chunks ? count * n : count;
}

}  // namespace planck::core
