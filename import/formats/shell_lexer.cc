// Lexer for the bash subset of Megatron launch scripts (see shell_script.h).

#include "import/formats/shell_lexer.h"

#include <cctype>
#include <utility>

namespace planck::import {

std::optional<std::string> ShellWord::literal() const {
  std::string out;
  for (const ShellSegment& s : segs) {
    if (s.kind != ShellSegment::kLit || s.quoted) return std::nullopt;
    out += s.text;
  }
  return out;
}

namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "NAME=" or "NAME+=" (the start of an array assignment when '(' follows).
bool assignment_head(const std::string& s, std::string* name, bool* append) {
  if (s.size() < 2 || s.back() != '=' || !is_name_start(s[0])) return false;
  std::size_t end = s.size() - 1;
  *append = s[end - 1] == '+';
  if (*append) --end;
  for (std::size_t i = 0; i < end; ++i) {
    if (!is_name_char(s[i])) return false;
  }
  *name = s.substr(0, end);
  return !name->empty();
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& path, int line, bool blanks_literal)
      : t_(text), path_(path), line_(line), blanks_literal_(blanks_literal) {}

  core::Status run(std::vector<ShellToken>& out, std::vector<ShellComment>* comments);
  core::Status read_word(ShellWord& w);

 private:
  bool at_end() const { return pos_ >= t_.size(); }
  char peek(std::size_t k = 0) const { return pos_ + k < t_.size() ? t_[pos_ + k] : '\0'; }
  void advance() {
    if (peek() == '\n') ++line_;
    ++pos_;
  }
  core::Status error(int line, const std::string& what) const {
    return core::Status::error(path_ + ":" + std::to_string(line) + ": " + what);
  }
  bool word_end(char c) const {
    if (blanks_literal_) return false;
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
           c == '>' || c == '(' || c == ')';
  }
  static void flush(std::string& lit, bool quoted, ShellWord& w, bool force = false) {
    if (!lit.empty() || force) w.segs.push_back({ShellSegment::kLit, std::move(lit), quoted});
    lit.clear();
  }
  core::Result<std::string> balanced(char open, char close);
  core::Status read_dollar(ShellWord& w, bool quoted);
  core::Status read_double_quoted(ShellWord& w);
  core::Status read_array(ShellToken& tok);
  void skip_redirect_target();
  void skip_comment(std::vector<ShellComment>* comments);

  std::string_view t_;
  const std::string& path_;
  std::size_t pos_ = 0;
  int line_;
  bool blanks_literal_;
  std::vector<ShellComment>* comments_ = nullptr;  // also collects comments inside arrays
};

// Content between `open` and its matching `close` (peek() is `open`), quotes respected.
core::Result<std::string> Lexer::balanced(char open, char close) {
  const int start_line = line_;
  const std::size_t start = pos_ + 1;
  int depth = 0;
  while (!at_end()) {
    char c = peek();
    if (c == '\\') {
      advance();
      if (!at_end()) advance();
      continue;
    }
    if (c == '\'' || c == '"') {
      advance();
      while (!at_end() && peek() != c) {
        if (c == '"' && peek() == '\\') advance();
        if (!at_end()) advance();
      }
      if (at_end()) break;
      advance();
      continue;
    }
    // A closing char closes only once something is open: for backticks (open == close) the
    // first one opens and the next one closes; counting both as opens ran to the end of the file.
    if (c == close && depth > 0) {
      if (--depth == 0) {
        std::string inner(t_.substr(start, pos_ - start));
        advance();
        return inner;
      }
    } else if (c == open) {
      ++depth;
    }
    advance();
  }
  return error(start_line, std::string("unterminated '") + open + "' (no matching '" + close + "')");
}

core::Status Lexer::read_dollar(ShellWord& w, bool quoted) {
  advance();  // '$'
  const char c = peek();
  if (c == '(') {
    auto inner = balanced('(', ')');
    if (!inner) return inner.status();
    const std::string& s = *inner;
    if (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
      w.segs.push_back({ShellSegment::kArith, s.substr(1, s.size() - 2), quoted});
    } else {
      w.segs.push_back({ShellSegment::kCmdSub, s, quoted});
    }
  } else if (c == '{') {
    auto inner = balanced('{', '}');
    if (!inner) return inner.status();
    w.segs.push_back({ShellSegment::kParam, *inner, quoted});
  } else if (is_name_start(c)) {
    std::string name;
    while (is_name_char(peek())) {
      name += peek();
      advance();
    }
    w.segs.push_back({ShellSegment::kParam, name, quoted});
  } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '@' || c == '*' || c == '#' || c == '?' || c == '$' ||
             c == '!' || c == '-') {
    advance();
    w.segs.push_back({ShellSegment::kParam, std::string(1, c), quoted});
  } else {
    w.segs.push_back({ShellSegment::kLit, "$", quoted});
  }
  return core::Status::ok();
}

core::Status Lexer::read_double_quoted(ShellWord& w) {
  const int start_line = line_;
  advance();  // '"'
  std::string lit;
  bool any = false;
  while (true) {
    if (at_end()) return error(start_line, "unterminated double quote");
    const char c = peek();
    if (c == '"') {
      advance();
      break;
    }
    if (c == '\\') {
      const char n = peek(1);
      if (n == '$' || n == '`' || n == '"' || n == '\\') {
        lit += n;
        advance();
        advance();
      } else if (n == '\n') {
        advance();
        advance();
      } else {
        lit += c;
        advance();
      }
    } else if (c == '$' || c == '`') {
      flush(lit, true, w);
      any = true;
      if (c == '$') {
        if (auto st = read_dollar(w, true); !st) return st;
      } else {
        auto inner = balanced('`', '`');
        if (!inner) return inner.status();
        w.segs.push_back({ShellSegment::kCmdSub, *inner, true});
      }
    } else {
      lit += c;
      advance();
    }
  }
  // "" is still a (quoted, empty) field.
  flush(lit, true, w, !any || !lit.empty());
  return core::Status::ok();
}

core::Status Lexer::read_word(ShellWord& w) {
  w.line = line_;
  std::string lit;
  while (!at_end()) {
    const char c = peek();
    if (word_end(c)) break;
    if (c == '\\') {
      if (peek(1) == '\n') {
        advance();
        advance();
        continue;
      }
      advance();
      if (!at_end()) {
        lit += peek();
        advance();
      } else {
        lit += '\\';
      }
    } else if (c == '\'') {
      flush(lit, false, w);
      const int start_line = line_;
      advance();
      std::string q;
      while (!at_end() && peek() != '\'') {
        q += peek();
        advance();
      }
      if (at_end()) return error(start_line, "unterminated single quote");
      advance();
      flush(q, true, w, true);
    } else if (c == '"') {
      flush(lit, false, w);
      if (auto st = read_double_quoted(w); !st) return st;
    } else if (c == '$') {
      flush(lit, false, w);
      if (auto st = read_dollar(w, false); !st) return st;
    } else if (c == '`') {
      flush(lit, false, w);
      auto inner = balanced('`', '`');
      if (!inner) return inner.status();
      w.segs.push_back({ShellSegment::kCmdSub, *inner, false});
    } else {
      lit += c;
      advance();
    }
  }
  flush(lit, false, w);
  return core::Status::ok();
}

core::Status Lexer::read_array(ShellToken& tok) {
  const int start_line = line_;
  advance();  // '('
  while (true) {
    if (at_end()) return error(start_line, "unterminated array '" + tok.name + "=(' (no ')')");
    const char c = peek();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else if (c == '\\' && peek(1) == '\n') {
      advance();
      advance();
    } else if (c == '#') {
      skip_comment(comments_);
    } else if (c == ')') {
      advance();
      return core::Status::ok();
    } else {
      ShellWord w;
      if (auto st = read_word(w); !st) return st;
      if (w.segs.empty())
        advance();  // a stray operator character inside ( ): skip it
      else
        tok.elements.push_back(std::move(w));
    }
  }
}

void Lexer::skip_comment(std::vector<ShellComment>* comments) {
  ShellComment c;
  c.line = line_;
  advance();
  while (!at_end() && peek() != '\n') {
    c.text += peek();
    advance();
  }
  if (comments) comments->push_back(std::move(c));
}

// After '<' / '>': the operator's other characters, then the target word (dropped).
void Lexer::skip_redirect_target() {
  while (peek() == '>' || peek() == '<' || peek() == '&' || peek() == '|') advance();
  while (peek() == ' ' || peek() == '\t') advance();
  ShellWord ignored;
  (void)read_word(ignored);
}

// Whether the tokens so far end inside a `[[ ... ]]` of the current command. `state` carries
// how far `out` was scanned, so the lexer reads each token once.
struct BracketScan {
  std::size_t scanned = 0;
  bool inside = false;
};
bool in_double_bracket(const std::vector<ShellToken>& out, BracketScan& state) {
  for (; state.scanned < out.size(); ++state.scanned) {
    const ShellToken& t = out[state.scanned];
    if (t.kind == ShellToken::kSep) state.inside = false;
    if (t.kind != ShellToken::kWord) continue;
    const auto lit = t.word.literal();
    if (lit && *lit == "]]") state.inside = false;
    if (lit && *lit == "[[") state.inside = true;
  }
  return state.inside;
}

core::Status Lexer::run(std::vector<ShellToken>& out, std::vector<ShellComment>* comments) {
  comments_ = comments;
  BracketScan brackets;
  while (!at_end()) {
    const char c = peek();
    ShellToken tok;
    tok.line = line_;
    if (c == '(' && peek(1) == '(') {
      // `(( EXPR ))`, bash's arithmetic command (`for (( ; ; ))`, `if (( i < N ))`): one token.
      advance();
      advance();
      std::string expr;
      for (int depth = 0;; advance()) {
        if (at_end()) return error(tok.line, "`((` without its `))`");
        if (peek() == ')' && depth == 0 && peek(1) == ')') break;
        if (peek() == '(') ++depth;
        if (peek() == ')') --depth;
        if (peek() != '\\' || peek(1) != '\n') expr += peek() == '\n' ? ' ' : peek();
      }
      advance();
      advance();
      tok.kind = ShellToken::kArith;
      tok.word.line = tok.line;
      tok.word.segs.push_back({ShellSegment::kArith, expr, false});
      out.push_back(std::move(tok));
    } else if (c == '(' && in_double_bracket(out, brackets)) {
      // Grouping inside `[[ ]]` (bash(1) "( expression )"): an operator the condition reads.
      tok.kind = ShellToken::kOp;
      tok.op = std::string(1, c);  // not a literal: GCC 12's -Wrestrict misfires on `= "("` here
      out.push_back(std::move(tok));
      advance();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '(') {
      advance();
    } else if (c == ')') {
      // Closes a case pattern (`on) ...`) or a subshell; kept so `case` can find its patterns.
      tok.kind = ShellToken::kOp;
      tok.op = std::string(1, c);
      out.push_back(std::move(tok));
      advance();
    } else if (c == ';' && peek(1) == ';') {
      // `;;` ends a case clause: a statement of its own between two separators.
      out.push_back({ShellToken::kSep, {}, "", "", false, {}, line_});
      out.push_back({ShellToken::kOp, {}, ";;", "", false, {}, line_});
      out.push_back({ShellToken::kSep, {}, "", "", false, {}, line_});
      advance();
      advance();
    } else if (c == '\\' && peek(1) == '\n') {
      advance();
      advance();
    } else if (c == '\n' || c == ';') {
      tok.kind = ShellToken::kSep;
      out.push_back(std::move(tok));
      advance();
    } else if (c == '#') {
      skip_comment(comments);
    } else if (c == '<' && peek(1) == '<' && peek(2) == '<') {
      // A here-string's word is kept (after a "<<<" word) for the `read` builtin; the
      // interpreter drops both from any other command.
      for (int k = 0; k < 3; ++k) advance();
      tok.kind = ShellToken::kWord;
      tok.word.line = tok.line;
      tok.word.segs.push_back({ShellSegment::kLit, "<<<", false});
      out.push_back(std::move(tok));
    } else if (c == '<' || c == '>' || (c == '&' && peek(1) == '>')) {
      skip_redirect_target();
    } else if (c == '&' || c == '|') {
      tok.kind = ShellToken::kOp;
      tok.op = std::string(1, c);
      advance();
      if (peek() == c) {
        tok.op += c;
        advance();
      }
      out.push_back(std::move(tok));
    } else {
      ShellWord w;
      if (auto st = read_word(w); !st) return st;
      std::string name;
      bool append = false;
      auto lit = w.literal();
      if (lit && peek() == '(' && assignment_head(*lit, &name, &append)) {
        tok.kind = ShellToken::kArray;
        tok.name = name;
        tok.append = append;
        if (auto st = read_array(tok); !st) return st;
        out.push_back(std::move(tok));
        continue;
      }
      // "2>&1": a file-descriptor number right before a redirection is not an argument.
      if (lit && (peek() == '>' || peek() == '<') && !lit->empty() &&
          lit->find_first_not_of("0123456789") == std::string::npos) {
        continue;
      }
      if (w.segs.empty()) {
        advance();  // defensive: never loop without progress
        continue;
      }
      tok.kind = ShellToken::kWord;
      tok.word = std::move(w);
      out.push_back(std::move(tok));
    }
  }
  return core::Status::ok();
}

}  // namespace

core::Result<std::vector<ShellToken>> lex_shell(std::string_view text, const std::string& path,
                                                std::vector<ShellComment>* comments) {
  std::vector<ShellToken> out;
  Lexer lexer(text, path, 1, false);
  if (auto st = lexer.run(out, comments); !st) return st;
  return out;
}

core::Result<ShellWord> lex_shell_word(std::string_view text, int line, const std::string& path) {
  ShellWord w;
  Lexer lexer(text, path, line, true);
  if (auto st = lexer.read_word(w); !st) return st;
  w.line = line;
  return w;
}

}  // namespace planck::import
