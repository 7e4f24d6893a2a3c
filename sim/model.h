#pragma once
// Model arithmetic beyond core/plan/presets.h: model FLOPs per token and the pipeline bubble.
// Kernel times: sim/compute.h.

#include <cstdint>

#include "core/plan/plan.h"

namespace planck::sim {

// Model FLOPs per token for one training step (forward + backward, no recompute):
// 6 x (active non-embedding parameters) + 6 x L x s x heads x (d_qk + d_v), the attention
// matmuls QK^T and AV (PaLM, Chowdhery et al. 2022, Appendix B: 6N + 12 L H Q T with
// d_qk = d_v = Q; torchtitan get_num_flop_per_token uses the same count). The attention term is
// the full s x s (not halved for causal masks), as PaLM and Megatron count; the output head
// counts whether or not it is tied to the embedding.
double flops_per_token(const core::ModelSpec& model, std::int64_t seq_len);

// Pipeline bubble as a fraction of the ideal compute time, m micro-batches, p stages, v chunks:
// gpipe and 1f1b (p-1)/m, interleaved (p-1)/(v m) (Narayanan et al. SC'21 §2.2); zbv and
// interleaved_zb 0 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024).
double bubble_fraction(core::PipelineSchedule schedule, std::int64_t p, std::int64_t v, std::int64_t m);

}  // namespace planck::sim
