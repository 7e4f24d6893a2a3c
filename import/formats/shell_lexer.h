#pragma once
// Tokens of the bash subset shell_script.h interprets. Words keep their quoting so expansion
// can split unquoted results and keep quoted ones whole, as bash does.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace planck::import {

struct ShellSegment {
  enum Kind { kLit, kParam, kArith, kCmdSub };
  Kind kind = kLit;
  std::string text;  // literal text, or the inside of ${...}, $((...)), $(...) / `...`
  bool quoted = false;
};

struct ShellWord {
  std::vector<ShellSegment> segs;
  int line = 0;
  // The word's text when it is one unquoted literal (keywords, assignments), else nullopt.
  std::optional<std::string> literal() const;
};

struct ShellToken {
  enum Kind { kWord, kSep, kOp, kArray, kArith };
  Kind kind = kWord;
  ShellWord word;    // kWord; kArith: `(( EXPR ))`, one kArith segment holding EXPR
  std::string op;    // kOp: "&&", "||", "|", "&"
  std::string name;  // kArray: NAME=( ... ) or NAME+=( ... )
  bool append = false;
  std::vector<ShellWord> elements;
  int line = 0;
};

struct ShellComment {
  std::string text;  // after the '#'
  int line = 0;
};

core::Result<std::vector<ShellToken>> lex_shell(std::string_view text, const std::string& path,
                                                std::vector<ShellComment>* comments);
// Lexes `text` as one word in which blanks are literal (the word of ${VAR:-word}).
core::Result<ShellWord> lex_shell_word(std::string_view text, int line, const std::string& path);

}  // namespace planck::import
