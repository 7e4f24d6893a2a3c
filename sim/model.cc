#include "sim/model.h"

#include "core/plan/presets.h"

namespace planck::sim {

double flops_per_token(const core::ModelSpec& m, std::int64_t seq_len) {
  const core::ParamCounts c = core::param_counts(m);
  // The input embedding is a lookup, not a matmul; the output head is a matmul and counts, tied
  // to the embedding or not (its V x h weight is multiplied either way).
  const double head = m.tied_embeddings ? static_cast<double>(m.vocab) * static_cast<double>(m.hidden) : 0.0;
  const double matmul_params = c.active - c.embedding + head;
  double qk, v;
  if (m.kv_lora_rank > 0) {
    qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
    v = static_cast<double>(m.v_head_dim);
  } else {
    qk = v = static_cast<double>(m.effective_head_dim());
  }
  const double attn = 6.0 * static_cast<double>(m.layers) * static_cast<double>(seq_len) *
                      static_cast<double>(m.heads) * (qk + v);
  return 6.0 * matmul_params + attn;
}

double bubble_fraction(core::PipelineSchedule schedule, std::int64_t p, std::int64_t v, std::int64_t m) {
  if (p <= 1 || m <= 0) return 0.0;
  const double pm1 = static_cast<double>(p - 1), dm = static_cast<double>(m);
  switch (schedule) {
    case core::PipelineSchedule::kGpipe:
    case core::PipelineSchedule::k1F1B: return pm1 / dm;
    case core::PipelineSchedule::kInterleaved1F1B: return pm1 / (static_cast<double>(v < 1 ? 1 : v) * dm);
    case core::PipelineSchedule::kZbv:
    case core::PipelineSchedule::kDualPipeV:
    case core::PipelineSchedule::kInterleavedZb: return 0.0;
  }
  return pm1 / dm;
}

}  // namespace planck::sim
