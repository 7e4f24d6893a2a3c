// Group generation against PyTorch DeviceMesh and Megatron-LM vectors
// (docs/sources/mesh.md §1.2 and §3.2): expected lists are written out here.

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "core/mesh/mesh.h"

using namespace planck::core;
using Groups = std::vector<std::vector<std::int64_t>>;

namespace {

Mesh make(std::vector<std::string> dims, std::vector<std::int64_t> sizes) {
  auto m = Mesh::create(std::move(dims), std::move(sizes));
  REQUIRE(m);
  return *m;
}

// All groups of `dims`, each sorted, the list sorted: DeviceMesh's row order is not
// lexicographic for >= 3 dims, so the anchors compare as sets (docs/sources/mesh.md §1.1).
Groups groups_of(const Mesh& m, std::vector<std::string> dims) {
  GroupSet gs = m.groups(dims);
  Groups out;
  for (std::int64_t g = 0; g < gs.num_groups(); ++g) {
    auto mem = gs.members(g);
    std::sort(mem.begin(), mem.end());
    out.push_back(mem);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("core_mesh DeviceMesh V1: 2x2 groups per dim") {
  Mesh m = make({"a", "b"}, {2, 2});
  CHECK(groups_of(m, {"a"}) == Groups{{0, 2}, {1, 3}});
  CHECK(groups_of(m, {"b"}) == Groups{{0, 1}, {2, 3}});
}

TEST_CASE("core_mesh DeviceMesh V2: HSDP+TP 2x2x2") {
  Mesh m = make({"dp_replicate", "dp_shard", "tp"}, {2, 2, 2});
  CHECK(groups_of(m, {"tp"}) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(groups_of(m, {"dp_shard"}) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(groups_of(m, {"dp_replicate"}) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
}

TEST_CASE("core_mesh DeviceMesh V3/V4: flattened groups, local rank row-major over the flattened dims") {
  Mesh m = make({"dp", "cp", "tp"}, {2, 2, 2});
  CHECK(groups_of(m, {"dp", "cp"}) == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(groups_of(m, {"dp", "tp"}) == Groups{{0, 1, 4, 5}, {2, 3, 6, 7}});
  Mesh r = make({"dp_replicate", "dp_shard", "cp"}, {2, 2, 2});
  CHECK(groups_of(r, {"dp_shard", "cp"}) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(groups_of(r, {"dp_replicate"}) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  // V6: local rank in flatten(dp, tp) of (dp, pp, tp) 2x2x2: dp*2 + tp.
  Mesh v6 = make({"dp", "pp", "tp"}, {2, 2, 2});
  GroupSet f = v6.groups({"dp", "tp"});
  for (std::int64_t r = 0; r < 8; ++r) {
    CHECK(f.index_in_group(r) == (r / 4) * 2 + r % 2);
    CHECK(v6.coord(r, "pp") == (r % 4 <= 1 ? 0 : 1));
    CHECK(f.member(f.group_of(r), f.index_in_group(r)) == r);
  }
}

TEST_CASE("core_mesh torchtitan HSDP 2x8 and the derived pp2 x dpr2 x dps2 x tp2 layout") {
  Mesh m = make({"dp_replicate", "dp_shard"}, {2, 8});
  CHECK(groups_of(m, {"dp_replicate"}) ==
        Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  CHECK(groups_of(m, {"dp_shard"}) == Groups{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}});
  CHECK(groups_of(m, {"dp_replicate", "dp_shard"}).size() == 1);

  Mesh d = make({"pp", "dp_replicate", "dp_shard", "tp"}, {2, 2, 2, 2});
  CHECK(groups_of(d, {"pp"}) == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  CHECK(groups_of(d, {"dp_replicate"}) ==
        Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(groups_of(d, {"dp_shard"}) ==
        Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(groups_of(d, {"dp_replicate", "dp_shard"}) ==
        Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
}

TEST_CASE("core_mesh Megatron order strings: first token fastest (M1-M5)") {
  auto dims = megatron_order_to_mesh_dims("tp-cp-ep-dp-pp");
  REQUIRE(dims);
  CHECK(*dims == std::vector<std::string>{"pp", "dp", "ep", "cp", "tp"});
  CHECK_FALSE(megatron_order_to_mesh_dims("tp-xx-pp"));
  CHECK_FALSE(megatron_order_to_mesh_dims("tp-tp"));

  // M1: W=16, tp=2, pp=4, dp=2, order tp-dp-pp.
  auto o = megatron_order_to_mesh_dims("tp-dp-pp");
  REQUIRE(o);
  Mesh m1 = make(*o, {4, 2, 2});
  CHECK(groups_of(m1, {"tp"}) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(groups_of(m1, {"dp"}) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(groups_of(m1, {"pp"}) == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(groups_of(m1, {"tp", "pp"}) == Groups{{0, 1, 4, 5, 8, 9, 12, 13}, {2, 3, 6, 7, 10, 11, 14, 15}});
  CHECK(groups_of(m1, {"tp", "dp"}) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});

  // M2: order tp-pp-dp sizes 2-2-2: dp groups [[0,4],[1,5],[2,6],[3,7]]; [tp,dp,pp] = [2,3,4].
  Mesh m2 = make(*megatron_order_to_mesh_dims("tp-pp-dp"), {2, 2, 2});
  CHECK(groups_of(m2, {"dp"}) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  Mesh m2b = make(*megatron_order_to_mesh_dims("tp-dp-pp"), {4, 3, 2});
  auto dp = groups_of(m2b, {"dp"});
  CHECK(dp.front() == std::vector<std::int64_t>{0, 2, 4});
  CHECK(dp[1] == std::vector<std::int64_t>{1, 3, 5});
  CHECK(dp.back() == std::vector<std::int64_t>{19, 21, 23});

  // M3: W=8, tp=4, cp=2.
  Mesh m3 = make(*megatron_order_to_mesh_dims("tp-cp"), {2, 4});
  CHECK(groups_of(m3, {"cp"}) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});

  // M5: W=8, tp=2, cp=2, dp=2, order tp-cp-dp-pp.
  Mesh m5 = make(*megatron_order_to_mesh_dims("tp-cp-dp"), {2, 2, 2});
  CHECK(groups_of(m5, {"cp"}) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(groups_of(m5, {"dp"}) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(groups_of(m5, {"dp", "cp"}) == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(groups_of(m5, {"tp", "cp"}) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
}

TEST_CASE("core_mesh every rank is in exactly one group of each dim set, for awkward sizes") {
  for (std::int64_t a : {1, 2, 3, 7}) {
    for (std::int64_t b : {1, 3, 8}) {
      for (std::int64_t c : {1, 2, 16}) {
        Mesh m = make({"pp", "dp", "tp"}, {a, b, c});
        for (auto dims : std::vector<std::vector<std::string>>{{"pp"}, {"dp"}, {"tp"}, {"pp", "tp"}, {"pp", "dp", "tp"}, {}}) {
          GroupSet gs = m.groups(dims);
          std::vector<int> seen(static_cast<std::size_t>(m.world()), 0);
          for (std::int64_t g = 0; g < gs.num_groups(); ++g) {
            for (std::int64_t i = 0; i < gs.group_size(); ++i) {
              std::int64_t r = gs.member(g, i);
              ++seen[static_cast<std::size_t>(r)];
              CHECK(gs.group_of(r) == g);
              CHECK(gs.index_in_group(r) == i);
            }
          }
          CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
          CHECK(gs.num_groups() * gs.group_size() == m.world());
        }
      }
    }
  }
}

TEST_CASE("core_mesh validation, overflow, canonical text and dim specs") {
  CHECK_FALSE(Mesh::create({"dp"}, {0}));
  CHECK_FALSE(Mesh::create({"dp", "dp"}, {2, 2}));
  CHECK_FALSE(Mesh::create({"dp", "tp"}, {INT64_MAX, 2}));
  CHECK_FALSE(Mesh::create({"dp", "tp"}, {65536, 65536}));  // 2^32 > 2^31 - 1
  Mesh m = make({"pp", "dp_replicate", "dp_shard", "cp", "tp"}, {1, 2, 8, 1, 1});
  CHECK(m.to_string() == "mesh[pp=1,dp_replicate=2,dp_shard=8,cp=1,tp=1]");
  CHECK(*resolve_dim_spec(m, "dp") == std::vector<std::string>{"dp_replicate", "dp_shard"});
  CHECK(*resolve_dim_spec(m, "dp_shard_cp") == std::vector<std::string>{"dp_shard", "cp"});
  CHECK(*resolve_dim_spec(m, "tp,dp_shard") == std::vector<std::string>{"dp_shard", "tp"});
  CHECK(*resolve_dim_spec(m, "dp_cp") == std::vector<std::string>{"dp_replicate", "dp_shard", "cp"});
  auto bad = resolve_dim_spec(m, "dp_sahrd");
  REQUIRE_FALSE(bad);
  CHECK(bad.message().find("unknown dim 'dp_sahrd'") != std::string::npos);
  // Node spans under block placement: HSDP 2x8 on 8-GPU nodes.
  Mesh h = make({"dp_replicate", "dp_shard"}, {2, 8});
  CHECK(h.groups({"dp_shard"}).max_nodes_spanned(8) == 1);
  CHECK(h.groups({"dp_replicate"}).max_nodes_spanned(8) == 2);
  CHECK(h.groups({"dp_shard"}).max_nodes_spanned(4) == 2);
}
