// The bash subset the Megatron importer interprets: expansions, arrays, conditions, hostility.

#include <doctest/doctest.h>

#include <string>

#include "import/formats/shell_script.h"

namespace planck::import {
namespace {

ShellScript run_ok(const std::string& text) {
  auto r = run_shell(text, "s.sh");
  REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? std::string() : r.message()));
  return std::move(*r);
}

std::string var(const ShellScript& s, const std::string& name) {
  auto it = s.vars.find(name);
  if (it == s.vars.end()) return "<unset>";
  std::string out;
  for (const auto& f : it->second) out += (out.empty() ? "" : "|") + f.text;
  return out;
}

std::string words(const ShellCommand& c) {
  std::string out;
  for (const auto& w : c.words) out += (out.empty() ? "" : "|") + w.text;
  return out;
}

TEST_CASE("import_shell_defaults_arithmetic_and_quoting") {
  ShellScript s = run_ok(
      "A=${1:-\"checkpoints/x y\"}\nB=${UNSET:-localhost}\nC=${B:+set}\nN=2\nG=8\n"
      "W=$(($G*$N))\nV=$(( (G + 1) * N - 3 ))\nQ='$G literal'\nD=\"$G\"x\nE=${#A}\n");
  CHECK(var(s, "A") == "checkpoints/x y");
  CHECK(var(s, "B") == "localhost");
  CHECK(var(s, "C") == "set");
  CHECK(var(s, "W") == "16");
  CHECK(var(s, "V") == "15");
  CHECK(var(s, "Q") == "$G literal");
  CHECK(var(s, "D") == "8x");
  CHECK(var(s, "E") == "15");
  CHECK(shell_int(s, "W") == 16);
}

TEST_CASE("import_shell_arrays_append_and_word_splitting") {
  ShellScript s = run_ok(
      "TP=2\nARGS=(\n  --tp $TP   # a comment\n  \"--fp8-format hybrid\"\n  # --commented 3\n)\n"
      "ARGS+=(--x)\nMORE=( \"${ARGS[@]}\" --y )\npython pretrain_gpt.py ${MORE[@]} \\\n   --z \"a b\" 2>&1 | tee "
      "log\n");
  CHECK(var(s, "ARGS") == "--tp|2|--fp8-format hybrid|--x");
  CHECK(var(s, "MORE") == "--tp|2|--fp8-format hybrid|--x|--y");
  REQUIRE(s.commands.size() == 2);
  CHECK(words(s.commands[0]) == "python|pretrain_gpt.py|--tp|2|--fp8-format|hybrid|--x|--y|--z|a b");
  REQUIRE(s.commented_flags.size() == 1);
  CHECK(s.commented_flags[0].text == "--commented 3");
  CHECK(s.commented_flags[0].line == 5);
  CHECK(s.commands[0].words[2].line == 3);  // "--tp" keeps the line of its array element
}

TEST_CASE("import_shell_conditions_take_the_right_branch") {
  ShellScript s = run_ok(
      "X=${X:-1}\nif [ \"${X}\" = 1 ]; then\n  A=yes\nelse\n  A=no\nfi\n"
      "if [[ \"$X\" == \"2\" ]] || [[ -z \"$X\" ]]; then B=wrong; elif [ $X -ge 1 ]; then B=right; fi\n"
      "if [ ! -f missing.py ]; then\n  C=assumed\nfi\nif false; then D=1; else D=2; fi\n");
  CHECK(var(s, "A") == "yes");
  CHECK(var(s, "B") == "right");
  CHECK(var(s, "C") == "assumed");
  CHECK(var(s, "D") == "2");
  CHECK(!s.assumptions.empty());  // the file test could not be decided
}

TEST_CASE("import_shell_hostile_input_is_an_error_value") {
  CHECK(run_shell("A=\"unterminated\n", "s.sh").message().find("s.sh:1: unterminated double quote") !=
        std::string::npos);
  CHECK(run_shell("A=(a b\n", "s.sh").message().find("unterminated array") != std::string::npos);
  CHECK(run_shell("A=${B:-x\n", "s.sh").message().find("unterminated '{'") != std::string::npos);
  // Doubling a variable 40 times would need a terabyte; the expansion cap stops it.
  std::string bomb = "A=xxxxxxxxxxxxxxxx\n";
  for (int i = 0; i < 40; ++i) bomb += "A=\"$A$A\"\n";
  CHECK(run_shell(bomb, "s.sh").message().find("grows past") != std::string::npos);
  // Self-referencing defaults nest; the depth cap stops them.
  std::string nest = "A=";
  for (int i = 0; i < 100; ++i) nest += "${U:-";
  nest += "x" + std::string(100, '}') + "\n";
  CHECK(!run_shell(nest, "s.sh").is_ok());
  // Overflowing or dividing arithmetic is left unevaluated, not a crash.
  ShellScript s = run_ok("A=$((9223372036854775807 * 2))\nB=$((1 / 0))\nC=$(hostname)\n");
  CHECK(var(s, "A").find("$((") == 0);
  CHECK(var(s, "B").find("$((") == 0);
  CHECK(var(s, "C") == "$(hostname)");
}

}  // namespace
}  // namespace planck::import
