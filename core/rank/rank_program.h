#pragma once
// A rank program (docs/plan-format.md `rank_program.steps`): the straight-line rank arithmetic a training
// script performs, e.g. Lingua's
//   dp_rank = dp_replicate.rank ; dp_degree = dp_replicate.size
//   dp_rank = dp_rank * dp_degree + dp_shard.rank ; dp_degree = dp_degree * dp_shard.size
// parsed into one expression DAG in SSA form: every name use is resolved to the node holding the
// value it had at that point, so reassignment needs no environment at evaluation time.
//
// Grammar (Python's precedence, integers only):
//   statement := NAME ('=' | '+=' | '-=' | '*=' | '/=' | '//=' | '%=') expr
//   expr      := term (('+' | '-') term)*
//   term      := unary (('*' | '/' | '//' | '%') unary)*
//   unary     := ('-' | '+') unary | primary
//   primary   := INT | NAME | DIM '.' ('rank' | 'size') | 'world' '.' ('rank' | 'size')
//              | 'node' '.' 'rank' | 'local' '.' ('rank' | 'size')
//              | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')'
// `/` and `//` are both floor division and `%` takes the sign of the divisor (Python), since the
// programs come from Python training scripts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace planck::core {

enum class RankOp : std::uint8_t {
  kConst,      // value
  kDimRank,    // coordinate along known dim `dim`
  kDimSize,    // size of known dim `dim`
  kWorldRank,
  kWorldSize,
  kNodeRank,   // world.rank / gpus_per_node
  kLocalRank,  // world.rank % gpus_per_node
  kLocalSize,  // gpus_per_node
  kNeg,        // -a
  kAdd,
  kSub,
  kMul,
  kDiv,  // floor division (both `/` and `//`)
  kMod,  // Python modulo: sign of the divisor
  kMin,
  kMax,
};

bool is_binary(RankOp op);

// Names a program may use as `<name>.rank` / `<name>.size`: the known mesh dims, then
// torchtitan's flattened names `dp_shard_cp` and `dp_cp` (and `dp`, when the mesh has
// dp_replicate / dp_shard instead of a dp dim): the row-major flattening of their dims, as
// DeviceMesh._flatten numbers them.
const std::vector<std::string>& rank_dim_names();

struct RankNode {
  RankOp op = RankOp::kConst;
  std::int64_t value = 0;  // kConst
  int dim = -1;            // kDimRank / kDimSize: index into rank_dim_names()
  int a = -1, b = -1;      // operand node indices (always smaller than this node's index)
  int statement = -1;      // the statement whose text holds this node
  int offset = 0;          // byte offset of the node's operator/operand in that statement
};

struct RankStatement {
  std::string target;  // the name assigned
  int root = -1;       // node holding the assigned value
};

struct RankProgram {
  std::vector<RankNode> nodes;  // operands before users (a topological order)
  std::vector<RankStatement> statements;

  // Index of the last statement assigning `name`, or -1.
  int last_assignment(std::string_view name) const;
  // Node holding the final value of `name`, or -1.
  int final_node(std::string_view name) const;
  // Indices of the nodes `root` depends on (itself included), ascending.
  std::vector<int> cone(int root) const;
};

struct RankParseError {
  int statement = 0;  // 0-based index into steps
  int offset = 0;     // byte offset of the offending token inside that statement
  std::string message;
};

struct RankParseResult {
  std::optional<RankProgram> program;
  std::optional<RankParseError> error;
};

// Parses `steps` (one statement each). Undefined names and unknown dims are parse errors.
RankParseResult parse_rank_program(const std::vector<std::string>& steps);

}  // namespace planck::core
