#pragma once
// The schedule: a plan lowered once into the collectives one optimizer step performs.
// sim/ times it, exec/ runs it, viz/ draws it (SPEC.md §5 for the fields).

#include <cstdint>
#include <string>
#include <vector>

#include "core/collectives.h"
#include "core/mesh.h"
#include "core/plan.h"
#include "core/status.h"

namespace planck::core {

enum class Phase { kForward, kBackward, kOptimizer, kStep };
const char* phase_name(Phase p);  // "forward", "backward", "optimizer", "step"

struct ScheduledCollective {
  std::string role;               // fsdp, replicate, dp, tp, pp, cp, ep
  std::vector<std::string> dims;  // mesh order
  CollOp op = CollOp::kAllReduce;
  Phase phase = Phase::kStep;
  std::int64_t group_size = 1;
  std::int64_t groups = 1;
  std::int64_t bytes_per_call = 0;  // nccl-tests size convention (collectives.h)
  std::int64_t calls_per_step = 0;  // all micro-batches of one optimizer step
  int dtype_bytes = 2;              // element size of the buffer
  std::string what;                 // e.g. "parameter all-gather, one per FSDP unit"
};

struct Schedule {
  std::int64_t world = 1;
  std::int64_t micro_batches = 1;  // per optimizer step per data-parallel rank
  std::vector<ScheduledCollective> collectives;
  std::vector<std::string> notes;  // assumptions the lowering made
};

// Lowers a loaded plan whose mesh is valid. Needs the plan's model (error Status otherwise).
Result<Schedule> lower(const Plan& plan, const Mesh& mesh);

}  // namespace planck::core
