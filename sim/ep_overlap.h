#pragma once
// Expert-parallel all-to-all hidden under another micro-batch's compute (docs/simulator.md
// "Expert-parallel overlap"). The dispatch / combine of one micro-batch waits on its own
// attention and expert GEMMs, so the frameworks pair the forward chunk of one micro-batch with
// the backward chunk of another: the compute stream runs both chunks' kernels while the
// communication stream runs both chunks' all-to-alls.
//   - dualpipev: DeepSeek's DualPipe (DeepSeek-V3 report arXiv:2412.19437 §3.2.1;
//     deepseek-ai/DualPipe dualpipev.py step 4 "nF0B1F1B0" and step 5 "nB1F1B0") and torchtitan's
//     ScheduleDualPipeV with pipeline_parallel_expert_parallel_overlap (default true;
//     torchtitan/distributed/dual_pipe_v.py overlap_callback on OVERLAP_F_B): on by default;
//   - Megatron-Core --overlap-moe-expert-parallel-comm (opt-in, parallelism.ep_overlap):
//     combined 1F1B without a pipeline (combined_1f1b.py, micro-batch i's backward with i+1's
//     forward) and with interleaved pipelining (virtual stages required when pp > 1).
// Full recomputation turns it off (Megatron asserts recompute_granularity != "full").

#include <cstdint>
#include <optional>
#include <string>

#include "core/plan/plan.h"

namespace planck::sim {

// Share of a rank's chunk passes that run in a forward/backward pair, on the rank with the
// fewest pairs (rank 0), for pp ranks, v chunks per rank, m micro-batches:
//   pp = 1:            (m - 1) / m
//   interleaved_1f1b:  (m v - W) / (m v), W = 2 (pp - 1) + (v - 1) pp + 1 warm-up chunks
//   dualpipev:         (2m - 3pp + 1) / (2m)   (step 4: 2 (m - 2pp + 1) pairs, step 5: pp - 1)
// Empty, with the reason, when the plan does not ask for the overlap (why_not empty) or asks but
// its schedule / checkpointing cannot run it (why_not says which).
struct PairedShare {
  std::optional<double> share;
  std::string why_not;
};
PairedShare ep_overlap_share(const core::Plan& plan, std::int64_t pp, std::int64_t v, std::int64_t m);

// Exposed seconds of a pass's expert all-to-all A = a2a_forward + a2a_backward against the
// layer compute C = compute_forward + compute_backward a pair runs beside it:
//   (1 - s) A + s max(0, A - C)
// The two chunks' all-to-alls share the same links, so their times add.
double ep_overlap_exposed_s(double paired_share, double a2a_forward_s, double a2a_backward_s,
                            double compute_forward_s, double compute_backward_s);

}  // namespace planck::sim
