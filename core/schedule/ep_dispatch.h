#pragma once
// How an MoE layer's token dispatch and combine cross the links (docs/simulator.md "Token
// dispatch"): which bytes of one all-to-all call leave the node over the NIC and which stay on
// NVLink, for the dispatcher the plan names (parallelism.moe_dispatcher).

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/plan/plan.h"

namespace planck::core {

// The dispatcher a plan runs: parallelism.moe_dispatcher; absent, alltoall, or deepep when the
// model routes node-limited (DeepSeek-V3's own dispatch, report §3.2.2) and no capacity factor pads.
MoeDispatcher effective_dispatcher(const Plan& plan);

struct DispatchSplit {
  std::int64_t inter_node = 0;  // bytes one rank sends across nodes per call
  std::int64_t intra_node = 0;  // bytes it moves over NVLink at the same time
  std::string note;             // what the split assumed, for the schedule's notes
};

// The split of one all-to-all call of `bytes` (the per-rank send buffer of routed copies) over
// the expert-parallel dims, for `tokens` tokens routed by this rank; zeros when the group stays
// inside one node.
//   - alltoall: the routed copies spread evenly over the n ranks; (n - r) / n of them go to the
//     ranks of other nodes over this GPU's NIC, (r - 1) / n to the r - 1 others of its node over
//     NVLink (NCCL runs both at once);
//   - deepep / hybridep: each token crosses once to each destination node holding one of its
//     experts (DeepEP's internode dispatch, deepseek-ai/DeepEP README), M (N - 1) / N copies per
//     token for M nodes reached of N: node_limited_reach with node-limited routing (DeepSeek-V3
//     report §2.1.2), else the expected
//     distinct nodes of k experts drawn evenly, N (1 - (1 - 1/N)^k); NVLink then forwards
//     (r - 1) / r of the routed copies to their GPUs inside the node.
// The expected number of the N nodes a token reaches under node-limited routing: g of G expert
// groups drawn evenly (the router's top-g groups), then k experts among them. With G >= N each
// node holds G / N groups and is reached unless none of its groups is drawn,
// N (1 - C(G - G/N, g) / C(G, g)) (DeepSeek-V3's 8 groups, 4 per token, on 4 nodes: 3.14, not
// 4); with G < N each group spans N / G nodes and its k / g experts reach
// (N / G)(1 - (1 - G / N)^(k / g)) of them. At most N and k.
double node_limited_reach(double nodes, double groups, double groups_per_token, double k);

DispatchSplit dispatch_split(const Plan& plan, const Mesh& mesh, const std::vector<std::string>& ep_dims,
                             std::int64_t tokens, std::int64_t bytes, int activation_bytes);

}  // namespace planck::core
