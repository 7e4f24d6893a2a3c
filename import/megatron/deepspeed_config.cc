// The ds_config of a Megatron-DeepSpeed launch: the examples write it with a here-document just
// before the launch (examples_deepspeed/azure/run-1t.sh: `cat <<EOT > $DS_CONFIG`, variables
// expanded by bash) or pass a file beside the script. A config made some other way (sed over a
// template, examples_deepspeed/MoE/*.sh) is not read, and the caller says so.

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "import/megatron/deepspeed_fork.h"

namespace planck::import {
namespace {

std::string value_of(const ShellScript& script, const std::string& name, bool* unknown) {
  auto it = script.vars.find(name);
  if (it == script.vars.end()) {
    *unknown = true;
    return std::string();
  }
  std::string out;
  for (const ShellField& fld : it->second) out += (out.empty() ? "" : " ") + fld.text;
  return out;
}

// $NAME and ${NAME} (bash's unquoted here-document expansion; ${NAME:-x} and $(...) are left as
// written, so the JSON does not parse and the config is said unread rather than guessed).
std::string expand(const std::string& s, const ShellScript& script, bool* unknown) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    std::size_t start = i + 1, end = start;
    const bool braced = s[start] == '{';
    if (braced) ++start, end = start;
    while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
    if (end == start || (braced && (end >= s.size() || s[end] != '}'))) {
      out += s[i];
      continue;
    }
    out += value_of(script, s.substr(start, end - start), unknown);
    i = braced ? end : end - 1;
  }
  return out;
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::string unquote(std::string s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return s;
}

// `cat <<TAG > FILE` or `cat > FILE <<TAG` (also <<- and a quoted TAG): TAG and the FILE word.
bool heredoc_target(const std::string& line, std::string* tag, std::string* file, bool* quoted, bool* dash) {
  const std::size_t cat = line.find("cat");
  const std::size_t here = line.find("<<");
  if (cat == std::string::npos || here == std::string::npos || line.find("<<<") != std::string::npos) return false;
  std::istringstream words(line.substr(cat + 3));
  std::string w, pending;
  bool want_file = false, want_tag = false;
  while (words >> w) {
    if (want_file) {
      *file = unquote(w);
      want_file = false;
    } else if (want_tag) {
      *tag = w;
      want_tag = false;
    } else if (w == ">" || w == ">>") {
      want_file = true;
    } else if (w.rfind(">>", 0) == 0 || (w[0] == '>' && w.size() > 1)) {
      *file = unquote(w.substr(w.find_first_not_of('>')));
    } else if (w.rfind("<<", 0) == 0) {
      *dash = w.size() > 2 && w[2] == '-';
      const std::string rest = w.substr(*dash ? 3 : 2);
      if (rest.empty())
        want_tag = true;
      else
        *tag = rest;
    }
  }
  if (tag->empty() || file->empty()) return false;
  *quoted = (*tag)[0] == '\'' || (*tag)[0] == '"';
  *tag = unquote(*tag);
  return true;
}

}  // namespace

DsConfigText find_ds_config(const std::string& name, const ShellScript& script, std::string_view script_text,
                            const std::string& script_path) {
  DsConfigText out;
  std::vector<std::string> lines;
  std::istringstream in{std::string(script_text)};
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // The last here-document writing the file wins, as the last `cat >` before the launch would.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string tag, file;
    bool quoted = false, dash = false, unknown = false;
    if (!heredoc_target(lines[i], &tag, &file, &quoted, &dash)) continue;
    if (expand(file, script, &unknown) != name || unknown) continue;
    std::string body(i + 1, '\n');  // the JSON's line k is the script's line k
    std::size_t j = i + 1;
    bool unresolved = false;
    for (; j < lines.size(); ++j) {
      std::string l = dash ? lines[j].substr(std::min(lines[j].find_first_not_of('\t'), lines[j].size())) : lines[j];
      if (trim(l) == tag && (dash || l == tag || trim(l) == l)) break;
      body += (quoted ? l : expand(l, script, &unresolved)) + "\n";
    }
    out.text = body;
    out.path = script_path;
    out.why = unresolved ? "a variable of its here-document at line " + std::to_string(i + 1) + " is not set" : "";
  }
  if (!out.text.empty()) return out;
  namespace fs = std::filesystem;
  fs::path p(name);
  if (p.is_relative()) p = fs::path(script_path).parent_path() / p;
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    out.text = ss.str();
    out.path = p.string();
    return out;
  }
  out.why = "the script does not write " + name + " with a here-document and no such file is beside it";
  return out;
}

}  // namespace planck::import
