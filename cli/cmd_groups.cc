// planck groups PLAN [--dim NAME[,NAME...]]... [--format text|json]

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/config_input.h"
#include "cli/plan_input.h"
#include "core/mesh/mesh.h"
#include "core/plan/plan_load.h"
#include "core/check/report.h"

namespace planck::cli {
namespace {

struct GroupsOptions {
  ConfigOptions config;  // a framework config as input (cli/config_input.h)
  std::string plan;
  std::vector<std::string> dims;
  std::string format = "text";
  std::string output = "-";
};

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// The output is built in memory, so it is bounded: every set lists every rank once.
constexpr std::int64_t kMaxOutputBytes = std::int64_t{1} << 30;

// An upper bound of the output's size: per set, each rank's digits and separator, each group's key.
std::int64_t output_bytes_bound(const core::Mesh& mesh, const std::vector<std::vector<std::string>>& sets) {
  const std::int64_t digits = static_cast<std::int64_t>(std::to_string(mesh.world() - 1).size());
  std::int64_t total = 256;
  for (const auto& set : sets) {
    const core::GroupSet gs = mesh.groups(set);
    total += mesh.world() * (digits + 2) + gs.num_groups() * (static_cast<std::int64_t>(gs.key().size()) + 8);
  }
  return total;
}

// From this many ranks listed in all, the sets are formatted on several threads.
constexpr std::int64_t kParallelRanks = std::int64_t{1} << 18;

// The decimal text of every rank 0..world-1, each in an 8-byte slot (up to 7 digits, its length in
// the last byte), made once and copied from by every set: six sets of 131,072 ranks format each
// rank once instead of six times. Only for worlds of at most 7 digits and more than one set.
class RankText {
 public:
  static constexpr std::int64_t kMaxWorld = 10'000'000;
  explicit RankText(std::int64_t world) : slots_(static_cast<std::size_t>(world)) {
    for (std::int64_t r = 0; r < world; ++r) {
      Slot& s = slots_[static_cast<std::size_t>(r)];
      s[7] = static_cast<char>(std::to_chars(s.data(), s.data() + 7, r).ptr - s.data());
    }
  }
  // Writes rank r's digits at p (and up to 8 - length bytes of slack after them, which the next
  // write or the caller's bound covers); returns the end of the digits.
  char* put(char* p, std::int64_t r) const {
    const Slot& s = slots_[static_cast<std::size_t>(r)];
    std::memcpy(p, s.data(), s.size());
    return p + s[7];
  }

 private:
  using Slot = std::array<char, 8>;
  std::vector<Slot> slots_;
};

// One set's text, in a buffer that is never zero-filled first (the pages are written once).
struct SetText {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;
  std::string_view view() const { return {data.get(), size}; }
};

// One set's text: JSON `"KEY": [[r, ...], ...]`, or text lines `KEY: r r ...`.
SetText set_text(const core::Mesh& mesh, const std::vector<std::string>& set, bool json, const RankText* ranks) {
  const core::GroupSet gs = mesh.groups(set);
  std::string key = gs.key().empty() ? "world" : gs.key();
  if (set.empty()) key = "(none)";
  const std::string head = json ? nlohmann::json(key).dump() + ": [" : "";
  // Every group is group 0 shifted by its first member (GroupSet::member is fixed offset +
  // varied offset), so the varied offsets are computed once. The ranks are written through a
  // pointer into space sized from the bound (a std::string append per number costs more than
  // the number).
  const std::vector<std::int64_t> shape = gs.members(0);
  const std::string open = json ? "[" : key + ":";
  SetText out;
  out.data = std::make_unique_for_overwrite<char[]>(head.size() + 8 +
                                                     static_cast<std::size_t>(output_bytes_bound(mesh, {set})));
  char* p = out.data.get();
  auto put = [&p](const std::string& text) { p = std::copy(text.begin(), text.end(), p); };
  // The separator written in place: a copy call per number cost a tenth of the listing.
  auto put_sep = [&p, json] {
    if (json) *p++ = ',';
    *p++ = ' ';
  };
  put(head);
  for (std::int64_t g = 0; g < gs.num_groups(); ++g) {
    const std::int64_t base = gs.member(g, 0);
    if (json && g) put_sep();
    if (json) {
      *p++ = '[';
    } else {
      put(open);
    }
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (i || !json) put_sep();
      p = ranks ? ranks->put(p, base + shape[i]) : std::to_chars(p, p + 24, base + shape[i]).ptr;
    }
    *p++ = json ? ']' : '\n';
  }
  if (json) *p++ = ']';
  out.size = static_cast<std::size_t>(p - out.data.get());
  return out;
}

int run_groups(const GroupsOptions& o) {
  auto input = load_plan_input(o.plan, o.config);
  if (!input) return kExitCannotRun;
  const core::Mesh* mesh = &input->mesh;

  // One result per --dim occurrence (default: every mesh dim), keyed in mesh order.
  std::vector<std::vector<std::string>> sets;
  if (o.dims.empty()) {
    for (const auto& d : mesh->dims()) sets.push_back({d});
  }
  for (const auto& spec : o.dims) {
    auto dims = core::resolve_dim_spec(*mesh, spec);
    if (!dims) {
      print_error("--dim " + spec + ": " + dims.message());
      return kExitCannotRun;
    }
    sets.push_back(*dims);
  }

  const std::int64_t bound = output_bytes_bound(*mesh, sets);
  if (bound > kMaxOutputBytes) {
    print_error(o.plan + ": listing " + std::to_string(sets.size()) + " dim set(s) of " + mesh->to_string() + " (" +
                std::to_string(mesh->world()) + " ranks) would take about " + std::to_string(bound) +
                " bytes, more than the " + std::to_string(kMaxOutputBytes) +
                " bytes (1 GiB) planck groups builds in memory; pick fewer sets with --dim, or use a smaller mesh "
                "(verify checks any size)");
    return kExitCannotRun;
  }
  // Each set is formatted on its own (on up to as many threads as cores: the 131,072-rank
  // listing of docs/performance.md is six sets of 131,072 ranks), then joined in order.
  const bool json = o.format == "json";
  std::vector<SetText> parts(sets.size());
  std::optional<RankText> ranks;
  if (sets.size() > 1 && mesh->world() <= RankText::kMaxWorld) ranks.emplace(mesh->world());
  const RankText* text = ranks ? &*ranks : nullptr;
  const std::size_t threads = std::min<std::size_t>(sets.size(), std::max(1u, std::thread::hardware_concurrency()));
  auto format_from = [&](std::size_t first) {
    for (std::size_t s = first; s < sets.size(); s += threads) parts[s] = set_text(*mesh, sets[s], json, text);
  };
  if (threads > 1 && mesh->world() * static_cast<std::int64_t>(sets.size()) >= kParallelRanks) {
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(format_from, t);
    format_from(0);
    for (auto& t : pool) t.join();
  } else {
    for (std::size_t s = 0; s < sets.size(); ++s) parts[s] = set_text(*mesh, sets[s], json, text);
  }
  // Written as pieces: the sets are megabytes each at 131,072 ranks, and joining them would copy
  // (and fault in) all of it once more.
  std::string head;
  if (json) {
    // Built as text: a 2^20-rank mesh has millions of entries and a json tree of them is slow.
    head = "{\"format\": \"planck-groups/1\", \"plan\": " + nlohmann::json(o.plan).dump() +
           ", \"mesh\": " + nlohmann::json(mesh->to_string()).dump() + ", \"world\": ";
    append_int(head, mesh->world());
    head += ", \"groups\": {";
  }
  const std::string_view sep = json ? ", " : "";
  std::vector<std::string_view> pieces{head};
  for (std::size_t s = 0; s < parts.size(); ++s) {
    if (s) pieces.push_back(sep);
    pieces.push_back(parts[s].view());
  }
  if (json) pieces.push_back("}}\n");
  return write_output(o.output, pieces) ? kExitOk : kExitCannotRun;
}

void setup_groups(CLI::App& app, Action& action) {
  auto o = std::make_shared<GroupsOptions>();
  app.description(
      "List the communicators of each mesh dim, or of a flattened set of dims, as global rank lists (exactly "
      "what init_device_mesh / DeviceMesh._flatten create). Text: one line per group, 'KEY: r0 r1 ...'.\n"
      "The output is built in memory and bounded at 1 GiB: a listing that would be larger (e.g. every dim of a "
      "2^31-rank mesh) is refused before anything is allocated, naming its size.\n"
      "Exit 2 when the plan cannot be loaded, its mesh is invalid or the listing is over the bound, else 0.");
  app.add_option("plan", o->plan, "a planck plan or a framework config (as verify takes: torchtitan TOML or config_registry.py:FUNCTION, Lingua YAML, Megatron script, DeepSpeed JSON), with --nodes/--gpus-per-node and the run's facts")->required();
  add_config_options(app, o->config);
  app.add_option("--dim", o->dims,
                 "dim or comma-joined dims (one result per occurrence; default: every mesh dim); torchtitan's "
                 "flattened names dp, dp_shard_cp and dp_cp are accepted")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}))->default_str("text");
  app.add_option("-o,--output", o->output, "write here ('-' = stdout), atomically")->default_str("-");
  action = [o] { return run_groups(*o); };
}

}  // namespace

PLANCK_COMMAND(groups, "the communicators of each dim or flattened set of dims, as rank lists", setup_groups);

}  // namespace planck::cli
