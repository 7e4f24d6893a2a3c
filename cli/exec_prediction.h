#pragma once
// The prediction `planck exec` and `planck bench` hand the runner: sim's cost of one scaled
// call on the plan's placement, from --topology or the GPU preset ('cpu' for MPI, whose pinned
// ring algorithms rule out NCCL's tree).

#include <string>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"
#include "exec/runner.h"
#include "sim/topology.h"

namespace planck::cli {

// The GPU the prediction assumes for `backend`.
core::GpuSpec prediction_gpu(const core::Plan& plan, const std::string& backend);

// A predictor over `plan` and `mesh` (both must outlive it); `topology` may be null.
exec::Predictor make_predictor(const core::Plan& plan, const core::Mesh& mesh, const std::string& backend,
                               const sim::Topology* topology);

}  // namespace planck::cli
