#include "cli/exec_prediction.h"

#include "core/mesh/placement.h"
#include "core/plan/presets.h"
#include "sim/cost.h"

namespace planck::cli {

core::GpuSpec prediction_gpu(const core::Plan& plan, const std::string& backend) {
  return backend == "mpi" ? *core::gpu_preset("cpu") : plan.cluster.gpu;
}

exec::Predictor make_predictor(const core::Plan& plan, const core::Mesh& mesh, const std::string& backend,
                               const sim::Topology* topology) {
  sim::CostOptions cost;
  if (backend == "mpi") cost.allow_tree = false;
  const core::GpuSpec gpu = prediction_gpu(plan, backend);
  return [&plan, &mesh, topology, cost, gpu](const core::ScheduledCollective& s) {
    const core::Placement place = core::placement_of(mesh.groups(s.dims), core::link_domain(plan.cluster));
    const sim::CallCost c = sim::predict_call(s.op, s.group_size, s.bytes_per_call, place, gpu, topology, cost);
    return exec::Prediction{c.wire_bytes, c.time_s, sim::link_name(c.link), sim::algorithm_name(c.algorithm)};
  };
}

}  // namespace planck::cli
