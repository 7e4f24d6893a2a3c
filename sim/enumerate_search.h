#pragma once
// The search behind planck enumerate (sim/enumerate.h): every (tp, cp, pp) split of the world,
// then ep, etp, dp_replicate x dp_shard, strategies, micro-batches and pipeline schedules, each
// candidate priced by the memory model and simulated. enumerate() validates the request before
// and ranks the layouts after.

#include "sim/enumerate.h"

namespace planck::sim {

// Searches every split on up to req.threads threads (0: one per core), each with its own search
// state (plan and memos are per thread), and appends the layouts to out.layouts in split order,
// so the result does not depend on the thread count; sets out.fp8. Progress is reported in
// splits through req.progress, from one thread at a time.
void search_all(const EnumerateRequest& req, EnumerateResult& out);

}  // namespace planck::sim
