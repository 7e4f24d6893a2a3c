#include "core/plan/pipeline_split.h"

#include <algorithm>
#include <cctype>

namespace planck::core {
namespace {

std::string s(std::int64_t v) { return std::to_string(v); }

constexpr const char* kBlock = "transformer_block.py:190-202";
constexpr const char* kLayout = "pipeline_parallel_layer_layout.py:86-150";

Status refuse(const std::string& what, const char* where) { return Status::error(what + " (Megatron-LM megatron/core/transformer/" + where + ")"); }

// Leading decimal digits of text from i; 0 characters when none.
std::size_t digits_at(const std::string& text, std::size_t i) {
  std::size_t j = i;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
  return j - i;
}

// One left-to-right pass of re.sub(r'\(([^)]+)\)\*(\d+)', ...): a '(' whose first ')' follows at
// least one character and is followed by '*' and digits is replaced by the inside, repeated.
Result<std::string> unroll_groups(const std::string& in) {
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    if (in[i] == '(') {
      const std::size_t close = in.find(')', i + 1);
      if (close != std::string::npos && close > i + 1 && close + 1 < in.size() && in[close + 1] == '*') {
        const std::size_t nd = digits_at(in, close + 2);
        if (nd > 0) {
          const std::string count = in.substr(close + 2, nd);
          if (nd > 6) return Status::error("repeat count " + count + " is too large");
          const std::string inside = in.substr(i + 1, close - i - 1);
          for (int k = std::stoi(count); k > 0; --k) out += inside;
          if (out.size() > (std::size_t{1} << 20)) return Status::error("the layout unrolls to over 2^20 characters");
          i = close + 2 + nd;
          continue;
        }
      }
    }
    out += in[i++];
  }
  return out;
}

// One pass of re.sub(r'(.)\*(\d+)', ...): a character followed by '*' and digits, repeated.
Result<std::string> unroll_chars(const std::string& in) {
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    if (in[i] != '\n' && i + 1 < in.size() && in[i + 1] == '*') {
      const std::size_t nd = digits_at(in, i + 2);
      if (nd > 0) {
        const std::string count = in.substr(i + 2, nd);
        if (nd > 6) return Status::error("repeat count " + count + " is too large");
        out.append(static_cast<std::size_t>(std::stoi(count)), in[i]);
        if (out.size() > (std::size_t{1} << 20)) return Status::error("the layout unrolls to over 2^20 characters");
        i += 2 + nd;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

std::int64_t count(const std::string& stage, char c) { return std::count(stage.begin(), stage.end(), c); }

Result<PipelineSplit> layout_split(const std::string& layout, std::int64_t layers, std::int64_t pp, std::int64_t v) {
  auto parsed = parse_pipeline_layout(layout);
  if (!parsed) return parsed.status();
  const std::vector<std::string>& stages = *parsed;
  const auto n = static_cast<std::int64_t>(stages.size());
  if (n % pp != 0) {
    return refuse("the layout has " + s(n) + " stages, not a multiple of pp " + s(pp) +
                      " (\"pipeline_model_parallel_layout must be divisible by pipeline_model_parallel_size\")",
                  "pipeline_parallel_layer_layout.py:41-45");
  }
  PipelineSplit out;
  out.virtual_stages = n / pp;
  if (v > 1 && v != out.virtual_stages) {
    return refuse("virtual_stages " + s(v) + " conflicts with the layout's " + s(out.virtual_stages) +
                      " chunks per rank (" + s(n) + " stages / pp " + s(pp) + ")",
                  "transformer_config.py:2275-2282");
  }
  std::string flat;
  for (const auto& st : stages) flat += st;
  if (flat.empty() || flat.front() != 'E') return refuse("the first layer of the layout must be the embedding E", kLayout);
  if (flat.back() != 'L') return refuse("the last layer of the layout must be the loss L", kLayout);
  if (count(flat, 'E') != 1) return refuse("the layout must hold the embedding E exactly once", kLayout);
  if (count(flat, 'L') != 1) return refuse("the layout must hold the loss L exactly once", kLayout);
  if (count(flat, 't') != layers) {
    return refuse("the layout holds " + s(count(flat, 't')) + " transformer layers t, the model " + s(layers) +
                      " (\"Number of decoder layers ... must match num_layers\")",
                  "pipeline_parallel_layer_layout.py:107-110");
  }
  if (const auto m = flat.find('m'); m != std::string::npos && flat.find('t', m) != std::string::npos) {
    return refuse("decoder layers t must be placed before MTP layers m", kLayout);
  }
  std::int64_t mtp_stages = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string& st = stages[static_cast<std::size_t>(i)];
    if (count(st, 'm') == 0) continue;
    ++mtp_stages;
    out.mtp_stage = i;
    if (i / pp != out.virtual_stages - 1) {
      return refuse("MTP layers m must be in the last virtual stage of their pipeline rank (stage " + s(i) + " is not)",
                    kLayout);
    }
  }
  if (mtp_stages > 1) return refuse("all MTP layers m must be in one stage", kLayout);
  out.mtp_layers = count(flat, 'm');
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string& st = stages[static_cast<std::size_t>(i)];
    out.layers.push_back(count(st, 't'));
    if (count(st, 'E') > 0) out.embedding_stage = i;
    if (count(st, 'L') > 0) out.loss_stage = i;
  }
  return out;
}

}  // namespace

std::int64_t trained_mtp_layers(const Plan& plan) {
  if (plan.training && plan.training->mtp_layers > 0) return plan.training->mtp_layers;
  if (!plan.parallelism.pipeline_layout) return 0;
  auto stages = parse_pipeline_layout(*plan.parallelism.pipeline_layout);
  if (!stages) return 0;
  std::int64_t m = 0;
  for (const auto& st : *stages) m += count(st, 'm');
  return m;
}

bool has_megatron_split(const Parallelism& p) {
  return p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split ||
         p.first_stage_layers.has_value() || p.last_stage_layers.has_value() || p.pipeline_layout.has_value();
}

Result<std::vector<std::string>> parse_pipeline_layout(const std::string& layout) {
  std::string text;
  for (char c : layout) {
    if (c != ',') text += c;  // "remove purely cosmetic commas"
  }
  auto groups = unroll_groups(text);
  if (!groups) return refuse(groups.message(), kLayout);
  auto chars = unroll_chars(*groups);
  if (!chars) return refuse(chars.message(), kLayout);
  std::vector<std::string> stages(1);
  for (char c : *chars) {
    if (c == '|') {
      stages.emplace_back();
    } else if (c == 'E' || c == 'L' || c == 't' || c == 'm') {
      stages.back() += c;
    } else {
      return refuse(std::string("invalid layer character '") + c + "' in \"" + layout +
                        "\" (known: E embedding, L loss, t transformer layer, m MTP layer, | between stages)",
                    "pipeline_parallel_layer_layout.py:314-318");
    }
  }
  return stages;
}

Result<PipelineSplit> megatron_split(const Parallelism& p, std::int64_t layers, std::int64_t pp, std::int64_t v) {
  pp = std::max<std::int64_t>(1, pp);
  v = std::max<std::int64_t>(1, v);
  const bool account = p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split;
  const bool uneven = p.first_stage_layers.has_value() || p.last_stage_layers.has_value();
  if (p.pipeline_layout) {
    if (account || uneven) {
      return refuse("pipeline_layout cannot be set with account_for_*_in_pipeline_split or first/last_stage_layers",
                    "transformer_config.py:2242-2259");
    }
    return layout_split(*p.pipeline_layout, layers, pp, v);
  }
  if (uneven && account) {
    return refuse("first_stage_layers / last_stage_layers cannot be set with account_for_*_in_pipeline_split",
                  "transformer_config.py:2229-2239");
  }
  PipelineSplit out;
  out.virtual_stages = v;
  out.loss_stage = pp * v - 1;
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(pp), 0);
  if (uneven) {
    // transformer_config.py:2294-2368, then transformer_block.py:103-146.
    std::int64_t middle = layers, middle_ranks = pp;
    struct Edge {
      std::optional<std::int64_t> n;
      const char* what;
      const char* where;
    };
    for (const Edge& e : {Edge{p.first_stage_layers, "first", "transformer_config.py:2306-2317"},
                          Edge{p.last_stage_layers, "last", "transformer_config.py:2325-2336"}}) {
      const auto& n = e.n;
      if (!n) continue;
      if (v > 1 && *n % v != 0) {
        return refuse(std::string(e.what) + "_stage_layers " + s(*n) + " must be divisible by virtual_stages " + s(v),
                      e.where);
      }
      middle -= *n;
      middle_ranks -= 1;
    }
    if ((middle != 0) != (middle_ranks != 0)) {
      return refuse("mismatch: " + s(middle) + " middle layers remaining but " + s(middle_ranks) +
                        " middle pipeline stages available",
                    "transformer_config.py:2341-2346");
    }
    if (middle_ranks > 0 && middle % middle_ranks != 0) {
      return refuse("the " + s(middle) + " middle layers must be divisible by the " + s(middle_ranks) +
                        " middle pipeline ranks",
                    "transformer_config.py:2349-2355");
    }
    const std::int64_t each = middle_ranks > 0 ? middle / middle_ranks : 0;
    if (middle_ranks > 0 && v > 1 && each % v != 0) {
      return refuse(s(each) + " layers on each middle pipeline rank must be divisible by virtual_stages " + s(v),
                    "transformer_config.py:2357-2368");
    }
    std::fill(per_rank.begin(), per_rank.end(), each);
    if (p.first_stage_layers) per_rank.front() = *p.first_stage_layers;
    if (p.last_stage_layers) per_rank.back() = *p.last_stage_layers;
  } else {
    // transformer_config.py:2370-2405 and transformer_block.py:148-158: the embedding and the loss
    // count as one layer each in the even split.
    const std::int64_t units = layers + (p.account_for_embedding_in_pipeline_split ? 1 : 0) +
                               (p.account_for_loss_in_pipeline_split ? 1 : 0);
    if (units % pp != 0) {
      return refuse(s(layers) + " layers + " + s(units - layers) + " (embedding / loss) = " + s(units) +
                        " must be divisible by pp " + s(pp),
                    "transformer_config.py:2373-2402");
    }
    if ((units / pp) % v != 0) {
      return refuse(s(units / pp) + " layers on each pipeline rank (embedding / loss counted) must be divisible by "
                        "virtual_stages " + s(v),
                    "transformer_config.py:2405-2415");
    }
    std::fill(per_rank.begin(), per_rank.end(), units / pp);
  }
  // transformer_block.py:160-202: a rank's layers split evenly over its chunks; the first chunk of
  // the first rank gives one up to the embedding, the last chunk of the last rank to the loss.
  out.layers.assign(static_cast<std::size_t>(pp * v), 0);
  for (std::int64_t chunk = 0; chunk < v; ++chunk) {
    for (std::int64_t r = 0; r < pp; ++r) out.layers[static_cast<std::size_t>(chunk * pp + r)] = per_rank[static_cast<std::size_t>(r)] / v;
  }
  if (p.account_for_embedding_in_pipeline_split && --out.layers.front() < 0) {
    return refuse("not enough layers in the first virtual pipeline stage for the embedding", kBlock);
  }
  if (p.account_for_loss_in_pipeline_split && --out.layers.back() < 0) {
    return refuse("not enough layers in the last virtual pipeline stage for the loss", kBlock);
  }
  return out;
}

}  // namespace planck::core
