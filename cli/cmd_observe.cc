// planck observe FILE... [-o OBSERVED]: NCCL logs / flight-recorder dumps / planck-observed
// files -> one planck-observed/1 JSON (docs/observed.md).

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/mesh/group_text.h"
#include "core/observed/observed_merge.h"
#include "io/observed_io.h"

namespace planck::cli {
namespace {

struct ObserveOptions {
  std::vector<std::string> files;
  std::string output = "-";
  std::string format = "json";
};

std::string text_summary(const core::Observed& o) {
  std::string s = "sources: ";
  for (std::size_t i = 0; i < o.sources.size(); ++i) s += (i ? ", " : "") + o.sources[i];
  s += "\nworld: " + (o.world ? std::to_string(*o.world) : std::string("unknown (no world communicator in the input)"));
  s += "\nranks seen: " + std::to_string(o.ranks_seen.size()) + " " + core::rank_list_text(o.ranks_seen, 16);
  std::set<std::string> hosts;
  for (const auto& [r, h] : o.hosts) hosts.insert(h);
  s += "\nhosts: " + std::to_string(hosts.size()) + " (" + std::to_string(o.hosts.size()) + " ranks placed)";
  s += "\ncommunicators: " + std::to_string(o.groups.size()) + "\n";
  for (const auto& g : o.groups) {
    s += "  " + (g.name.empty() ? std::string("-") : g.name) + " size " + std::to_string(g.size) + " ranks " +
         core::rank_list_text(g.ranks, 16) +
         (g.complete ? " complete" : " partial (" + std::to_string(g.ranks.size()) + " of " + std::to_string(g.size) + " global ranks known)") +
         (g.id.empty() ? "" : " id " + g.id) + " at " + g.source + ":" + std::to_string(g.line) + "\n";
  }
  for (const auto& n : o.notes) s += "note: " + n.source + ":" + std::to_string(n.line) + ": " + n.message + "\n";
  return s;
}

int run(const ObserveOptions& opts) {
  std::vector<core::Observed> parts;
  for (const auto& f : opts.files) {
    auto o = io::read_observed_file(f);
    if (!o) {
      print_error(o.message());
      return kExitCannotRun;
    }
    parts.push_back(std::move(*o));
  }
  auto merged = core::observed::merge_observed(parts);
  if (!merged) {
    print_error(merged.message());
    return kExitCannotRun;
  }
  std::string out = opts.format == "text" ? text_summary(*merged) : io::observed_to_json(*merged);
  return write_output(opts.output, out) ? kExitOk : kExitCannotRun;
}

void setup(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ObserveOptions>();
  app.add_option("FILE", opts->files,
                 "NCCL_DEBUG=INFO logs (any launcher prefix, interleaved ranks), PyTorch flight-recorder dumps "
                 "(JSON or pickle; read without executing anything) or planck-observed/1 files; format "
                 "detected from the content. Several files are merged into one observation of one run. '-' reads "
                 "standard input; each input is capped at 512 MiB.")
      ->required();
  app.add_option("-o,--output", opts->output, "where to write the planck-observed/1 JSON ('-' = stdout)");
  app.add_option("--format", opts->format, "json (planck-observed/1) or text (a readable summary)")
      ->check(CLI::IsMember({"json", "text"}));
  app.footer(
      "Global ranks come from each process's line in the world communicator (host:pid:cudaDev); groups\n"
      "whose members' global ranks are not all in the input are written with \"complete\": false.\n"
      "Then: planck verify PLAN --observed OBSERVED.json (or pass the logs to --observed directly).\n"
      "Details: docs/observed.md");
  action = [opts] { return run(*opts); };
}

}  // namespace

PLANCK_COMMAND(observe, "convert NCCL logs / flight-recorder dumps into one planck-observed JSON", setup);

}  // namespace planck::cli
