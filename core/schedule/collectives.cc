#include "core/schedule/collectives.h"

#include "core/base/int128.h"
#include "core/base/saturating.h"

namespace planck::core {

const char* op_name(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce: return "all_reduce";
    case CollOp::kAllGather: return "all_gather";
    case CollOp::kReduceScatter: return "reduce_scatter";
    case CollOp::kAllToAll: return "all_to_all";
    case CollOp::kBroadcast: return "broadcast";
    case CollOp::kSendRecv: return "send_recv";
  }
  return "all_reduce";
}

std::optional<CollOp> parse_op(std::string_view name) {
  for (CollOp op : kAllCollOps) {
    if (name == op_name(op)) return op;
  }
  return std::nullopt;
}

double bus_factor(CollOp op, std::int64_t n) {
  if (n <= 1) return op == CollOp::kBroadcast || op == CollOp::kSendRecv ? 1.0 : 0.0;
  const double dn = static_cast<double>(n);
  switch (op) {
    case CollOp::kAllReduce: return 2.0 * (dn - 1) / dn;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll: return (dn - 1) / dn;
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

std::int64_t wire_bytes_per_rank(CollOp op, std::int64_t n, std::int64_t bytes) {
  if (bytes <= 0) return 0;
  if (n <= 1) return op == CollOp::kSendRecv ? bytes : 0;
  using i128 = Int128;
  // Rounded up; past INT64_MAX it saturates (core/base/saturating.h).
  auto ceil_div = [](i128 a, i128 b) {
    const i128 q = (a + b - 1) / b;
    return q > kSaturated ? kSaturated : static_cast<std::int64_t>(q);
  };
  switch (op) {
    case CollOp::kAllReduce: return ceil_div(i128{2} * (n - 1) * bytes, n);
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll: return ceil_div(i128{n - 1} * bytes, n);
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: return bytes;
  }
  return bytes;
}

std::int64_t ring_steps(CollOp op, std::int64_t n) {
  if (n <= 1) return op == CollOp::kSendRecv ? 1 : 0;
  switch (op) {
    case CollOp::kAllReduce: return 2 * (n - 1);
    case CollOp::kSendRecv: return 1;
    default: return n - 1;
  }
}

}  // namespace planck::core
