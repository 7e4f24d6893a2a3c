#include "io/nccl_log.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/base/utf8.h"
#include "io/line_reader.h"
#include "io/nccl_line.h"

namespace planck::io {
namespace {

std::string hex_id(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

// The parser state's parts: named (not anonymous), since NcclLogParser::State, declared in the
// header, holds them (-Wsubobject-linkage in a unity build).
namespace nccl_log_parts {

// (a, b, c) keys for the lookup tables: (host, pid, device|pointer|tid).
struct Key3 {
  std::int64_t a;
  std::int64_t b;
  std::uint64_t c;
  bool operator==(const Key3& o) const { return a == o.a && b == o.b && c == o.c; }
};
struct Key3Hash {
  std::size_t operator()(const Key3& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.a) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<std::uint64_t>(k.b) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    h ^= k.c + 0x94D049BB133111EBull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h);
  }
};

struct Member {
  int proc = -1;
  std::int64_t rank = 0, nranks = 0;
  std::optional<std::uint64_t> comm_id;
  bool split = false;
  int parent_member = -1;  // the parent's record in the same process, when its line was seen
  std::int64_t color = 0;
  std::string func;
  bool completed = false, closed = false;
  bool from_init = false;  // an Init START/COMPLETE line was seen (not only topology/timings)
  std::int64_t line = 0;
};

struct Comm {
  std::string id;
  std::int64_t nranks = 0;
  bool split = false;
  std::string func;
  std::vector<int> members;
};

}  // namespace nccl_log_parts
using namespace nccl_log_parts;

namespace {

int clamp_line(std::int64_t line) { return line > INT_MAX ? INT_MAX : static_cast<int>(line); }

}  // namespace

struct NcclLogParser::State {
  std::string source;
  std::vector<std::string> hosts;
  std::unordered_map<std::string, int> host_index;
  std::vector<std::pair<int, std::int64_t>> procs;  // (host, pid)
  std::unordered_map<Key3, int, Key3Hash> proc_index;    // (host, pid, device)
  std::unordered_map<Key3, int, Key3Hash> by_pointer;    // (host, pid, comm pointer) -> latest member
  std::unordered_map<Key3, int, Key3Hash> by_thread;     // (host, pid, tid) -> latest member
  std::unordered_map<int, std::int64_t> tests_rank;      // proc -> nccl-tests global rank
  std::vector<Member> members;

  int intern_host(std::string_view h) {
    auto it = host_index.find(std::string(h));
    if (it != host_index.end()) return it->second;
    hosts.push_back(core::valid_utf8(h));  // a Latin-1 host name must not break the JSON written later
    host_index.emplace(hosts.back(), static_cast<int>(hosts.size()) - 1);
    return static_cast<int>(hosts.size()) - 1;
  }
  int proc_of(int host, std::int64_t pid, int device) {
    Key3 k{host, pid, static_cast<std::uint64_t>(device)};
    auto it = proc_index.find(k);
    if (it != proc_index.end()) return it->second;
    procs.emplace_back(host, pid);
    proc_index.emplace(k, static_cast<int>(procs.size()) - 1);
    return static_cast<int>(procs.size()) - 1;
  }

  void take_split(Member& m, const NcclLine& l, int host) {
    if (!l.parent || *l.parent == 0 || m.split) return;
    m.split = true;
    m.color = l.color.value_or(0);
    auto it = by_pointer.find(Key3{host, l.pid, *l.parent});
    m.parent_member = it == by_pointer.end() ? -1 : it->second;
  }

  int add_member(const NcclLine& l, int host, std::int64_t line_no) {
    Member m;
    m.proc = proc_of(host, l.pid, l.device);
    m.rank = l.rank;
    m.nranks = l.nranks;
    m.comm_id = l.comm_id;
    m.func = std::string(l.func);
    m.completed = l.complete;
    m.from_init = l.kind == NcclLineKind::kInit;
    m.line = line_no;
    take_split(m, l, host);
    members.push_back(std::move(m));
    int idx = static_cast<int>(members.size()) - 1;
    if (l.comm) by_pointer[Key3{host, l.pid, *l.comm}] = idx;
    by_thread[Key3{host, l.pid, static_cast<std::uint64_t>(l.tid)}] = idx;
    return idx;
  }

  // The live record of this process's communicator pointer, if the line can be its.
  Member* same_comm(const NcclLine& l, int host) {
    auto it = by_pointer.find(Key3{host, l.pid, *l.comm});
    if (it == by_pointer.end()) return nullptr;
    Member& m = members[it->second];
    if (m.closed || m.rank != l.rank || m.nranks != l.nranks) return nullptr;
    if (m.comm_id && l.comm_id && *m.comm_id != *l.comm_id) return nullptr;
    return &m;
  }
};

NcclLogParser::NcclLogParser(std::string source) : state_(std::make_unique<State>()) {
  state_->source = std::move(source);
}
NcclLogParser::~NcclLogParser() = default;

core::Status NcclLogParser::add_line(std::string_view line, std::int64_t line_no) {
  ++stats_.lines;
  NcclLine l = parse_nccl_line(line);
  if (l.kind == NcclLineKind::kNone) return core::Status::ok();
  ++stats_.nccl_lines;
  State& s = *state_;
  if (static_cast<std::int64_t>(s.members.size()) >= kMaxMembers) {
    return core::Status::error(s.source + ":" + std::to_string(line_no) + ": more than " + std::to_string(kMaxMembers) +
                         " communicator-member lines; split the log per node and pass the parts to planck observe");
  }
  const int host = s.intern_host(l.host);
  switch (l.kind) {
    case NcclLineKind::kTestsRank:
      s.tests_rank.emplace(s.proc_of(host, l.pid, l.device), l.rank);
      break;
    case NcclLineKind::kInit:
    case NcclLineKind::kBootstrapSplit:
    case NcclLineKind::kTopology: {
      Member* m = s.same_comm(l, host);
      // A START after COMPLETE on one pointer is a new communicator at a reused address.
      if (m && l.kind == NcclLineKind::kInit && m->completed && !l.complete) m = nullptr;
      if (!m) {
        s.add_member(l, host, line_no);
        break;
      }
      if (!m->comm_id) m->comm_id = l.comm_id;
      if (m->func.empty()) m->func = std::string(l.func);
      m->completed = m->completed || l.complete;
      m->from_init = m->from_init || l.kind == NcclLineKind::kInit;
      s.take_split(*m, l, host);
      break;
    }
    case NcclLineKind::kInitTimings: {
      auto it = s.by_thread.find(Key3{host, l.pid, static_cast<std::uint64_t>(l.tid)});
      if (it != s.by_thread.end()) {
        const Member& m = s.members[it->second];
        if (m.rank == l.rank && m.nranks == l.nranks) break;
      }
      s.add_member(l, host, line_no);
      break;
    }
    case NcclLineKind::kDestroy:
      if (Member* m = s.same_comm(l, host)) m->closed = true;
      break;
    case NcclLineKind::kNone:
      break;
  }
  return core::Status::ok();
}

namespace {

// Communicator identity of every member: its commId; for a split child without one, its
// parent's identity plus color ("split(0xabc,color=7)"); "" when the log gives none (pre-2.16).
std::vector<std::string> comm_identities(const std::vector<Member>& members) {
  std::vector<std::string> id(members.size());
  std::unordered_map<std::string, std::string> alias;  // split key -> commId, from lines with both
  auto split_key = [&](const Member& m) {
    std::string parent = m.parent_member >= 0 ? id[m.parent_member] : "";
    if (parent.empty()) return "split(?,color=" + std::to_string(m.color) + ",nranks=" + std::to_string(m.nranks) + ")";
    return "split(" + parent + ",color=" + std::to_string(m.color) + ")";
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < members.size(); ++i) {
      const Member& m = members[i];
      if (m.comm_id) {
        id[i] = hex_id(*m.comm_id);
        if (m.split) alias.emplace(split_key(m), id[i]);
      } else if (m.split) {
        std::string k = split_key(m);
        auto it = alias.find(k);
        id[i] = it == alias.end() ? k : it->second;
      }
    }
  }
  return id;
}

}  // namespace

core::Result<core::Observed> NcclLogParser::finish() {
  State& s = *state_;
  if (s.members.empty()) {
    return core::Status::error(s.source + ": no NCCL communicator-init line among " + std::to_string(stats_.lines) +
                         " lines (expected lines like 'host:pid:tid [0] NCCL INFO comm 0x... rank 0 nranks 8 "
                         "cudaDev 0 busId 1a000 ... - Init COMPLETE'); run with NCCL_DEBUG=INFO "
                         "(NCCL_DEBUG_SUBSYS must include INIT)");
  }
  const std::vector<std::string> ids = comm_identities(s.members);
  std::vector<core::ObservedNote> obs_notes;
  std::vector<Comm> comms;
  std::unordered_map<std::string, int> comm_index;
  std::vector<int> anon;  // members no other process's line can be joined to
  for (std::size_t i = 0; i < s.members.size(); ++i) {
    const Member& m = s.members[i];
    if (ids[i].empty()) {
      anon.push_back(static_cast<int>(i));
      continue;
    }
    std::string key = ids[i] + "#" + std::to_string(m.nranks);
    auto [it, fresh] = comm_index.emplace(key, static_cast<int>(comms.size()));
    if (fresh) comms.push_back(Comm{ids[i], m.nranks, m.split, m.func, {}});
    Comm& c = comms[it->second];
    if (c.func.empty()) c.func = m.func;
    c.members.push_back(static_cast<int>(i));
  }

  // Init-timings lines whose init line is not in the log (an excerpt) carry the creating API and
  // the size: they belong to the one logged communicator with that API and size, if only one has.
  std::vector<int> still_anon;
  for (int i : anon) {
    const Member& m = s.members[i];
    int match = -1, count = 0;
    if (!m.func.empty() && !m.split) {
      for (std::size_t c = 0; c < comms.size(); ++c) {
        if (!comms[c].split && comms[c].nranks == m.nranks && comms[c].func == m.func) {
          match = static_cast<int>(c);
          ++count;
        }
      }
    }
    bool clash = false;
    if (count == 1) {
      for (int o : comms[match].members) clash = clash || s.members[o].rank == m.rank || s.members[o].proc == m.proc;
    }
    if (count == 1 && !clash) comms[match].members.push_back(i);
    else still_anon.push_back(i);
  }

  // The world: every process of a run joins its world communicator, so the world is the largest
  // communicator not made by a split that is seen from more than half as many processes as the most
  // widely seen one. A larger one seen from fewer (a stray line, another job's output) is not taken
  // as the world: it is dropped from the groups and noted as suspicious.
  struct Candidate {
    std::int64_t size = 0;
    std::size_t procs = 0;
    int comm = -1;          // index in comms, or -1 for lines no other line joins
    std::int64_t line = 0;  // first line
  };
  std::vector<Candidate> cands;
  for (std::size_t c = 0; c < comms.size(); ++c) {
    if (comms[c].split) continue;
    std::set<int> procs;
    std::int64_t line = INT64_MAX;
    for (int i : comms[c].members) {
      procs.insert(s.members[i].proc);
      line = std::min(line, s.members[i].line);
    }
    cands.push_back({comms[c].nranks, procs.size(), static_cast<int>(c), line});
  }
  std::map<std::int64_t, std::pair<std::set<int>, std::int64_t>> anon_sizes;  // size -> (processes, first line)
  for (int i : still_anon) {
    const Member& m = s.members[i];
    if (m.split || !m.from_init) continue;
    auto [it, fresh] = anon_sizes.try_emplace(m.nranks, std::set<int>{}, m.line);
    it->second.first.insert(m.proc);
    it->second.second = std::min(it->second.second, m.line);
  }
  for (const auto& [size, seen] : anon_sizes) cands.push_back({size, seen.first.size(), -1, seen.second});
  std::size_t most_procs = 0;
  for (const Candidate& c : cands) most_procs = std::max(most_procs, c.procs);
  std::int64_t world_n = 0;
  for (const Candidate& c : cands) {
    if (2 * c.procs > most_procs) world_n = std::max(world_n, c.size);
  }
  std::set<int> dropped_comms;
  std::set<std::int64_t> dropped_sizes;
  for (const Candidate& c : cands) {
    if (c.size <= world_n) continue;
    obs_notes.push_back(core::ObservedNote{
        s.source, clamp_line(c.line),
        "a communicator of " + std::to_string(c.size) + " ranks is seen from " + std::to_string(c.procs) + " of " +
            std::to_string(s.procs.size()) + " processes, while the " + std::to_string(world_n) +
            "-rank world is seen from more: not taken as the world (a stray line or another job's output?)"});
    if (c.comm >= 0) dropped_comms.insert(c.comm);
    else dropped_sizes.insert(c.size);
  }
  int world_comm = -1;
  for (std::size_t c = 0; c < comms.size() && world_comm < 0; ++c) {
    if (!comms[c].split && comms[c].nranks == world_n) world_comm = static_cast<int>(c);
  }
  std::unordered_map<int, std::int64_t> global;  // proc -> global rank
  std::set<std::int64_t> taken;
  std::vector<int> world_anon, other_anon;
  auto link = [&](const Member& m) {
    if (global.count(m.proc) || taken.count(m.rank)) return false;
    global[m.proc] = m.rank;
    taken.insert(m.rank);
    return true;
  };
  if (world_comm >= 0) {
    for (int i : comms[world_comm].members) link(s.members[i]);
    other_anon = still_anon;
  } else {
    // Pre-2.16 logs: each process's first world-sized init line is its world membership. (A
    // topology line alone means the init line is not in the log: it proves no world.)
    for (int i : still_anon) {
      const Member& m = s.members[i];
      if (!m.split && m.from_init && m.nranks == world_n && world_n > 0 && link(m)) world_anon.push_back(i);
      else other_anon.push_back(i);
    }
  }
  for (const auto& [proc, rank] : s.tests_rank) {
    if (!global.count(proc) && !taken.count(rank)) {
      global[proc] = rank;
      taken.insert(rank);
    }
  }

  core::Observed obs;
  obs.sources.push_back(s.source);
  obs.notes = std::move(obs_notes);
  if (world_comm >= 0 || !world_anon.empty()) obs.world = world_n;
  for (const auto& [proc, rank] : global) obs.hosts[rank] = s.hosts[s.procs[proc].first];
  obs.ranks_seen.assign(taken.begin(), taken.end());

  auto make_group = [&](const std::vector<int>& idx, std::int64_t nranks, std::string id, std::string name) {
    core::ObservedGroup g;
    std::set<std::int64_t> ranks, local;
    std::int64_t first = INT64_MAX;
    for (int i : idx) {
      const Member& m = s.members[i];
      local.insert(m.rank);
      first = std::min(first, m.line);
      auto it = global.find(m.proc);
      if (it != global.end()) ranks.insert(it->second);
    }
    g.ranks.assign(ranks.begin(), ranks.end());
    g.size = nranks;
    g.complete = static_cast<std::int64_t>(ranks.size()) == nranks && static_cast<std::int64_t>(local.size()) == nranks;
    g.id = std::move(id);
    g.name = std::move(name);
    g.source = s.source;
    g.line = clamp_line(first);
    obs.groups.push_back(std::move(g));
  };
  for (std::size_t c = 0; c < comms.size(); ++c) {
    if (dropped_comms.count(static_cast<int>(c))) continue;
    make_group(comms[c].members, comms[c].nranks, comms[c].id, static_cast<int>(c) == world_comm ? "world" : "");
  }
  if (!world_anon.empty()) make_group(world_anon, world_n, "", "world");
  for (int i : other_anon) {
    const Member& m = s.members[i];
    if (!(dropped_sizes.count(m.nranks) && !m.split && m.from_init)) make_group({i}, m.nranks, "", "");
  }
  std::stable_sort(obs.groups.begin(), obs.groups.end(),
                   [](const core::ObservedGroup& a, const core::ObservedGroup& b) { return a.line < b.line; });
  return obs;
}

core::Result<core::Observed> read_nccl_log(const std::string& path) {
  core::InputFile in;
  core::Status st = in.open(path);
  if (!st) return st;
  return read_nccl_log(std::move(in));
}

core::Result<core::Observed> read_nccl_log(core::InputFile in) {
  const std::string path = in.path();
  LineReader reader(std::move(in));
  NcclLogParser parser(path);
  std::string_view line;
  while (reader.next(line)) {
    if (reader.truncated()) continue;  // a cut line is not trusted
    core::Status st = parser.add_line(line, reader.line_number());
    if (!st) return st;
  }
  if (!reader.error()) return reader.error();
  return parser.finish();
}

core::Result<core::Observed> parse_nccl_log_text(std::string_view text, const std::string& source) {
  NcclLogParser parser(source);
  std::int64_t line_no = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    if (line.size() > LineReader::kMaxLine) continue;
    core::Status st = parser.add_line(line, line_no);
    if (!st) return st;
  }
  return parser.finish();
}

}  // namespace planck::io
