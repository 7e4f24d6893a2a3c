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

// A $( ) or $(( )) planck does not run stands for one word, as its output would in bash, also when
// a variable holds it and is expanded unquoted later (microsoft/Megatron-DeepSpeed@f4157be
// examples_deepspeed/rebase/ds_pretrain_gpt_125M.sh:146 counts GPUs with
// `$(($(ds_ssh nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)-2))`, puts it in a job
// name and passes `--tensorboard-dir ${tensorboard_path}`: split, `--query-gpu=name` became a flag).
TEST_CASE("import_shell_unrun_substitution_is_one_word_wherever_it_is_expanded") {
  ShellScript s = run_ok(
      "N=$(( $(ds_ssh nvidia-smi --query-gpu=name --format=csv | wc -l) - 2 ))\n"
      "M=$(nvidia-smi --query-x=name --format-x=csv | wc -l)\n"
      "J=\"job_g${N}_m${M}\"\nK=job_$M\n"
      "python train.py --tensorboard-dir /t/${J} --name $K --gpus $N --count $(( $(nproc) + 1 ))\n");
  REQUIRE(s.commands.size() == 1);
  const std::string n = "$(( $(ds_ssh nvidia-smi --query-gpu=name --format=csv | wc -l) - 2 ))";
  const std::string m = "$(nvidia-smi --query-x=name --format-x=csv | wc -l)";
  CHECK(var(s, "N") == n);
  CHECK(var(s, "M") == m);
  CHECK(words(s.commands[0]) == "python|train.py|--tensorboard-dir|/t/job_g" + n + "_m" + m + "|--name|job_" + m +
                                    "|--gpus|" + n + "|--count|$(( $(nproc) + 1 ))");
}

// `exit` ends a bash script: what follows is never run. planck stops there only where bash surely
// runs the exit (bash(1) "exit"; "Lists": the right side of && / || runs on the left's status;
// "Pipelines": each command in its own subshell; a `{ ...; }` group or a function body, an if /
// case branch or a loop may not run, or run on a value planck left empty), and reads past it
// elsewhere, as it did before.
TEST_CASE("import_shell_exit_ends_the_script_only_where_bash_surely_runs_it") {
  ShellScript s = run_ok(
      "A=1\nusage() {\n  echo usage\n  exit 1\n}\n"
      "if [ -z \"$DATA\" ]; then\n  exit 1\nfi\n"
      "case \"$1\" in\n  *) exit 2 ;;\nesac\n"
      "for i in 1 2; do exit 3; done\n"
      "mkdir -p logs || {\n  echo failed\n  exit 1\n}\n"
      "[ -d x ] && exit 4\necho a | exit 5\n"
      "B=2\npython train.py --first\nexit 0\nC=3\npython train.py --second\n");
  CHECK(var(s, "A") == "1");
  CHECK(var(s, "B") == "2");
  CHECK(var(s, "C") == "<unset>");
  REQUIRE(s.commands.size() >= 1);
  CHECK(words(s.commands.back()) == "python|train.py|--first");
  // An assignment's status is known (true): the exit after && surely runs.
  ShellScript t = run_ok("X=1 && exit\nY=2\n");
  CHECK(var(t, "Y") == "<unset>");
}

// Megatron-Bridge's example slurm scripts run one training per parallelism config:
// `for CONFIG in "${PARALLELISM_CONFIGS[@]}"; do IFS=',' read -r TP PP EP CP SP <<< "$CONFIG"; ...`
// (NVIDIA-NeMo/Megatron-Bridge@067f987d examples/models/gpt_oss/slurm_pretrain.sh). bash runs the
// body once per element; each launch keeps the loop value it ran with.
TEST_CASE("import_shell_for_loop_runs_its_body_per_word_and_read_splits_on_ifs") {
  ShellScript s = run_ok(
      "CONFIGS=(\"2,4,4,1,True\" \"4,2,4,1,True\")\n"
      "for CONFIG in \"${CONFIGS[@]}\"; do\n"
      "    IFS=',' read -r TP PP EP CP SP <<< \"$CONFIG\"\n"
      "    python run_recipe.py model.tensor_model_parallel_size=$TP model.sequence_parallel=$SP\n"
      "done\n"
      "for x in a b; do echo $x; done\n");
  REQUIRE(s.commands.size() == 4);
  CHECK(words(s.commands[0]) == "python|run_recipe.py|model.tensor_model_parallel_size=2|model.sequence_parallel=True");
  CHECK(s.commands[0].loop == "CONFIG=2,4,4,1,True");
  CHECK(words(s.commands[1]) == "python|run_recipe.py|model.tensor_model_parallel_size=4|model.sequence_parallel=True");
  CHECK(s.commands[1].loop == "CONFIG=4,2,4,1,True");
  CHECK(words(s.commands[2]) == "echo|a");
  CHECK(words(s.commands[3]) == "echo|b");
  CHECK(var(s, "PP") == "2");  // the last iteration's, as after the loop in bash
  CHECK(s.commands[0].line == 4);
}

// Expected values: what bash 5.2 prints for the same lines (`IFS=, read -r A B C <<< " x , y,z,w "`
// gives "[ x ][ y][z,w ]": only IFS whitespace is trimmed; the last name takes the rest).
TEST_CASE("import_shell_read_here_string_field_splitting") {
  ShellScript s = run_ok(
      "IFS=, read -r A B C <<< \" x , y,z,w \"\nIFS=, read -r P Q R <<< \"1\"\nOLD_IFS=$IFS\nIFS=$OLD_IFS\n"
      "read -r S T <<< \"  a   b  c \"\nIFS=, read -ra ARR <<< \"a,b,,c\"\n");
  CHECK(var(s, "A") == " x ");
  CHECK(var(s, "B") == " y");
  CHECK(var(s, "C") == "z,w ");
  CHECK(var(s, "P") == "1");
  CHECK(var(s, "Q").empty());
  CHECK(var(s, "S") == "a");
  CHECK(var(s, "T") == "b  c");
  CHECK(var(s, "ARR") == "a|b||c");
  CHECK(s.commands.empty());  // read is a builtin, not a command
}

TEST_CASE("import_shell_loop_over_command_output_is_read_once_and_said") {
  ShellScript s = run_ok("for i in $(seq 1 10); do\n  P=\"x_$i\"\ndone\nfor ((;;)); do\n  Q=1\ndone\n");
  CHECK(var(s, "P") == "x_");
  CHECK(var(s, "Q") == "1");
  bool said = false;
  for (const auto& a : s.assumptions) said = said || a.find("loops over a command's output") != std::string::npos;
  CHECK(said);
}

TEST_CASE("import_shell_nested_loops_past_the_budget_are_an_error") {
  std::string text = "W=\"a b c d e f g h i j k l m n o p\"\n";
  for (int k = 0; k < 4; ++k) text += "for v" + std::to_string(k) + " in $W; do\n";
  text += "  X=1\n";
  for (int k = 0; k < 4; ++k) text += "done\n";
  auto r = run_shell(text, "s.sh");  // 16^4 = 65536 body runs
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.message().find("more than 4096 times") != std::string::npos);
}

// `case` as Megatron-Bridge's deepseek_v4 slurm_sft.sh picks its recipe
// (`case "$MTP" in on) RECIPE_NAME=... ;; off) ... ;; *) echo ...; exit 1 ;; esac`): only the
// first matching clause runs, as in bash.
TEST_CASE("import_shell_case_runs_the_first_matching_clause") {
  ShellScript s = run_ok(
      "MTP=on\ncase \"$MTP\" in\n    on)  RECIPE_NAME=a_sft_config ;;\n    off) RECIPE_NAME=b_sft_config ;;\n"
      "    *)   echo \"ERROR\"; exit 1 ;;\nesac\n"
      "case \"$RECIPE_NAME\" in\n  x_config|a_*)\n    O=one\n    python run.py --o $O\n    ;;\n  *)\n    O=two\n    ;;\nesac\n"
      "case x in y) Z=1 ;; esac\n");
  CHECK(var(s, "RECIPE_NAME") == "a_sft_config");
  CHECK(var(s, "O") == "one");
  CHECK(var(s, "Z") == "<unset>");
  REQUIRE(s.commands.size() == 1);  // neither `echo ERROR` nor `exit 1` of the `*)` clause
  CHECK(words(s.commands[0]) == "python|run.py|--o|one");
}

// The idioms scripts use to find their own directory (slime's run-qwen3-30B-A3B.sh line 27,
// Megatron-Bridge's gemma4 slurm_pretrain.sh line 36), worked out as bash works them out when the
// script at /srv/proj/scripts/train/run.sh is run from its own directory. Expected values are
// what bash 5.2 prints for the same lines (dirname(1), realpath(1) -m, readlink(1) -f).
TEST_CASE("import_shell_script_directory_idioms_resolve_as_bash_does") {
  auto r = run_shell(
      "D1=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")\" &>/dev/null && pwd)\"\n"
      "D2=$(cd \"$D1/../..\" && pwd)\n"
      "D3=$(dirname $(dirname $0))\n"
      "D4=$(realpath \"$D1/../x.sh\")\n"
      "D5=$(readlink -f ../y)\n"
      "D6=$(dirname out/ckpt/)\n"
      "D7=$(cd /data/runs; pwd -P)\n"
      "D8=$(readlink some_link)\n"
      "D9=$(cd \"$D1\" && ls)\n"
      "source \"$D2/conf/model.sh\"\n",
      "/srv/proj/scripts/train/run.sh");
  REQUIRE(r.is_ok());
  const ShellScript& s = *r;
  CHECK(var(s, "D1") == "/srv/proj/scripts/train");
  CHECK(var(s, "D2") == "/srv/proj");
  CHECK(var(s, "D3") == "/srv/proj/scripts");
  CHECK(var(s, "D4") == "/srv/proj/scripts/x.sh");
  CHECK(var(s, "D5") == "/srv/proj/scripts/y");
  CHECK(var(s, "D6") == "out");
  CHECK(var(s, "D7") == "/data/runs");
  // readlink without -f prints a link's target, and `ls` lists files: neither is run.
  CHECK(var(s, "D8") == "$(readlink some_link)");
  CHECK(var(s, "D9").rfind("$(cd", 0) == 0);
  bool named = false;  // the sourced file is looked for where bash would look
  for (const auto& w : s.warnings) named = named || w.find("not at /srv/proj/conf/model.sh") != std::string::npos;
  CHECK(named);
}

// The option loop of epfllm's finetune.sh and Megatron-LM's examples/gptoss/02_train.sh
// (`while [[ $# -gt 0 ]]; do case $1 in --tp) TP="$2"; shift; shift;; ... esac; done`): run as bash
// runs it, over the positional parameters --script-args gives; with none, the body never runs.
TEST_CASE("import_shell_while_option_loop_consumes_the_arguments") {
  const std::string text =
      "TP=8\nPP=1\nN=1\nWANDB=0\n"
      "while [[ $# -gt 0 ]]; do\n"
      "  case $1 in\n"
      "    --tp) TP=\"$2\"; shift; shift;;\n"
      "    --pp) PP=\"$2\"; shift 2;;\n"
      "    --wandb) WANDB=1; shift;;\n"
      "    --nodes) N=$2; shift; shift;;\n"
      "    *) echo unknown argument $1; exit 1;;\n"
      "  esac\n"
      "done\n"
      "python pretrain_gpt.py --tp $TP --pp $PP --rest \"$@\" --count $#\n";
  auto none = run_shell(text, "s.sh");
  REQUIRE(none.is_ok());
  CHECK(var(*none, "TP") == "8");
  REQUIRE(none->commands.size() == 1);  // the `*)` clause never ran: no echo
  CHECK(words(none->commands[0]) == "python|pretrain_gpt.py|--tp|8|--pp|1|--rest|--count|0");
  auto given = run_shell(text, "s.sh", {{"1", "--tp"}, {"2", "4"}, {"3", "--wandb"}, {"4", "--pp"}, {"5", "2"}});
  REQUIRE(given.is_ok());
  CHECK(var(*given, "TP") == "4");
  CHECK(var(*given, "PP") == "2");
  CHECK(var(*given, "WANDB") == "1");
  CHECK(var(*given, "N") == "1");
  REQUIRE(given->commands.size() == 1);
  CHECK(words(given->commands[0]) == "python|pretrain_gpt.py|--tp|4|--pp|2|--rest|--count|0");
}

// `break` / `continue` as bash runs them; a `while true` retry loop (a launch restarted until it
// succeeds) is read once, and said, instead of forever.
TEST_CASE("import_shell_break_continue_and_endless_loops") {
  ShellScript s = run_ok(
      "i=0\nwhile [ $i -lt 10 ]; do\n  i=$((i + 1))\n  if [ $i -eq 2 ]; then continue; fi\n"
      "  if [ $i -ge 4 ]; then break; fi\n  SEEN=\"$SEEN $i\"\ndone\n"
      "for x in a b c; do\n  if [ $x = b ]; then break; fi\n  L=\"$L$x\"\ndone\n"
      "until [ ${k:-0} -ge 3 ]; do k=$(( ${k:-0} + 1 )); done\n"
      "while true; do\n  torchrun pretrain_gpt.py --tp 2\n  sleep 10\ndone\n");
  CHECK(var(s, "i") == "4");
  CHECK(var(s, "SEEN") == " 1 3");
  CHECK(var(s, "L") == "a");
  CHECK(var(s, "k") == "3");
  std::size_t launches = 0;
  for (const auto& c : s.commands) launches += !c.words.empty() && c.words[0].text == "torchrun";
  CHECK(launches == 1);
  bool said = false;
  for (const auto& a : s.assumptions) said = said || a.find("changed no variable it reads") != std::string::npos;
  CHECK(said);
}

// slime's scripts/models/deepseek-v3.sh builds --moe-layer-freq with a C-style loop, `(( ))`
// tests, `printf -v` and `$(IFS=', '; echo "${arr[*]}")` (audit D7: the three dense layers were
// lost). Expected values are what bash 5.2 prints for the same lines: "${arr[*]}" joins with the
// first character of IFS, and the $( )'s IFS does not leak out of it.
TEST_CASE("import_shell_arithmetic_loops_and_printf_build_values_as_bash_does") {
  ShellScript s = run_ok(
      "NLAYERS=\"${MODEL_ARGS_NUM_LAYERS:-6}\"\nFIRST_K_DENSE_REPLACE=2\narr=()\n"
      "for ((i=0; i<NLAYERS; i++)); do\n  if (( i < FIRST_K_DENSE_REPLACE )); then\n    arr+=(0)\n"
      "  else\n    arr+=(1)\n  fi\ndone\n"
      "printf -v MOE_LAYER_FREQ \"[%s]\" \"$(IFS=', '; echo \"${arr[*]}\")\"\n"
      "printf -v PAIRS '%s=%d;' a 1 b 2\n"
      "printf -v WIDE '%05.1f' 3\n"
      "T=$(( (NLAYERS > 1) ? 1 : 0 ))\nP=$(( 2 ** 10 ))\nL=$(( NLAYERS >= 6 && !0 || 1 / 0 ))\n"
      "(( n = 3, n ))\nc=0\n(( c += 5 ))\n(( c++ ))\nd=$(( c-- ))\nZ=$(( 0 && (q = 7) ))\n");
  CHECK(var(s, "MOE_LAYER_FREQ") == "[0,0,1,1,1,1]");
  CHECK(var(s, "IFS") == " \t\n");
  CHECK(var(s, "i") == "6");
  CHECK(var(s, "PAIRS") == "a=1;b=2;");
  CHECK(var(s, "WIDE").find("$(printf") == 0);  // a width / %f: not evaluated, and said
  CHECK(var(s, "T") == "1");
  CHECK(var(s, "P") == "1024");
  CHECK(var(s, "L") == "1");  // || short-circuits: the division by zero is never evaluated
  CHECK(var(s, "n") == "<unset>");  // the comma operator is not evaluated
  CHECK(var(s, "c") == "5");
  CHECK(var(s, "d") == "6");
  CHECK(var(s, "q") == "<unset>");  // && short-circuits: no assignment
  CHECK(var(s, "Z") == "0");
  bool said = false;
  for (const auto& a : s.assumptions) said = said || a.find("printf -v WIDE") != std::string::npos;
  CHECK(said);
}

// Inside [[ ]] bash neither splits words nor drops empty ones (HYGON's train_deepseekv3_671B.sh:270
// `if [[ $profiling == "torch" ]]` with profiling unset): bash 5.2 takes the else branches below.
TEST_CASE("import_shell_double_brackets_do_not_split_or_drop_words") {
  ShellScript s = run_ok(
      "if [[ $use_pp == \"true\" ]]; then A=taken; else A=not; fi\n"
      "if [[ -n $use_pp ]]; then B=taken; else B=not; fi\n"
      "MODE=\"tp pp\"\nif [[ $MODE == \"tp pp\" ]]; then C=taken; else C=not; fi\n");
  CHECK(var(s, "A") == "not");
  CHECK(var(s, "B") == "not");
  CHECK(var(s, "C") == "taken");
  for (const auto& a : s.assumptions) CHECK_MESSAGE(a.find("cannot be decided") == std::string::npos, a);
}
// `eval` as ROCm's train_llama3.sh and HYGON's DeepSeek-V3 scripts launch: bash joins the words
// and parses them anew, so the appended `|& tee LOG` / `>& LOG` end the command (a pipe and a
// redirection, not flag values) and quotes balance across words.
TEST_CASE("import_shell_compound_conditions_are_decided_as_bash_decides_them") {
  // bash(1) "[[ expression ]]": ( ), !, && binding tighter than ||, on the usual primaries; test(1)
  // with five or more arguments: -a binding tighter than -o. Each branch below is the one bash takes.
  ShellScript s = run_ok(
      "E=\"\"\nCAP=none\n"
      "if [[ -n \"$E\" && \"a\" != \"a\" ]]; then A=taken; else A=skipped; fi\n"
      "if [[ -n \"$CAP\" && \"$CAP\" != \"none\" ]]; then B=taken; else B=skipped; fi\n"
      "if [[ -z \"$E\" || $CAP == x ]]; then C=taken; else C=skipped; fi\n"
      "if [[ ( -n \"$E\" || -n \"$CAP\" ) && ! ( $CAP == none ) ]]; then D=taken; else D=skipped; fi\n"
      "if [[ $CAP == none && ( -z \"$E\" ) ]]; then F=taken; else F=skipped; fi\n"
      "if [ \"$CAP\" = none -a -n \"$E\" ]; then G=taken; else G=skipped; fi\n"
      "if [ \"$CAP\" = none -o -n \"$E\" ]; then H=taken; else H=skipped; fi\n");
  CHECK(var(s, "A") == "skipped");
  CHECK(var(s, "B") == "skipped");
  CHECK(var(s, "C") == "taken");
  CHECK(var(s, "D") == "skipped");
  CHECK(var(s, "F") == "taken");
  CHECK(var(s, "G") == "skipped");
  CHECK(var(s, "H") == "taken");
  CHECK(s.assumptions.empty());
  // An operand that cannot be known (a file test) decides nothing alone: false && it is false, it ||
  // true is true.
  ShellScript u = run_ok("if [[ -f /nonexistent/x && -n \"$HOME_UNSET\" ]]; then Z=1; fi\n");
  CHECK(var(u, "Z") == "<unset>");
  ShellScript v = run_ok("if [[ -f /some/file || -z \"\" ]]; then Z=1; fi\n");
  CHECK(var(v, "Z") == "1");
}

TEST_CASE("import_shell_and_or_lists_run_what_bash_runs") {
  // bash(1) "Lists": after && the command runs when the list so far succeeded, after || when it
  // failed; `[ TEST ] && VAR=...` is the scripts' one-line if.
  ShellScript s = run_ok(
      "TP=1\nE=\"\"\n[ -n \"$E\" ] && TP=4\n[[ -z \"$E\" && 1 == 2 ]] && TP=8\n"
      "[ -z \"$E\" ] && A=yes || A=no\n[ -n \"$E\" ] && B=yes || B=no\nC=1 || C=2\n");
  CHECK(var(s, "TP") == "1");
  CHECK(var(s, "A") == "yes");
  CHECK(var(s, "B") == "no");
  CHECK(var(s, "C") == "1");
  // An undecidable test runs what follows it, as an undecidable `if` takes its branch, and is said.
  ShellScript u = run_ok("[ -f /some/file ] && X=1\n");
  CHECK(var(u, "X") == "1");
  CHECK_FALSE(u.assumptions.empty());
}

TEST_CASE("import_shell_sbatch_lines_read_every_option") {
  // sbatch(1): an #SBATCH line holds options as the command line does, several to a line; words that
  // are no option (a template's placeholder) are passed over.
  const std::string text =
      "#!/bin/bash\n#SBATCH <SLURM OPTIONS> --nodes=128 --exclusive --ntasks-per-node=8 --job-name=x\n"
      "#SBATCH -t 0:30:00 --gpus-per-node=h100:8\n";
  SbatchRequest r = sbatch_request(split_lines(text));
  CHECK(r.nodes == 128);
  CHECK(r.tasks_per_node == 8);
  CHECK(r.gpus_per_node == 8);
  SbatchRequest n = sbatch_request(split_lines("#SBATCH -N 2 --ntasks-per-node 4\n#SBATCHX --nodes=9\n"));
  CHECK(n.nodes == 2);
  CHECK(n.tasks_per_node == 4);
}

TEST_CASE("import_shell_arrays_are_told_apart_from_scalars") {
  ShellScript s = run_ok("HIP_PROF_ARGS=( --profile --use-hip-profiler )\nX=(a b)\nX=c\nexport HSA_X=1\n");
  CHECK(s.arrays.count("HIP_PROF_ARGS") == 1);
  CHECK(s.arrays.count("X") == 0);
  CHECK(s.arrays.count("HSA_X") == 0);
}

TEST_CASE("import_shell_eval_parses_its_words_as_a_command_line") {
  ShellScript s = run_ok(
      "run_cmd=\"torchrun pretrain_gpt.py --global-batch-size 64\"\n"
      "run_cmd=\"$run_cmd >& /tmp/train.log\"\neval $run_cmd\n"
      "CMD=\"python pretrain_gpt.py --name 'a b' |& tee log\"\neval \"$CMD\"\n");
  REQUIRE(s.commands.size() >= 2);
  CHECK(words(s.commands[0]) == "torchrun|pretrain_gpt.py|--global-batch-size|64");
  CHECK(words(s.commands[1]) == "python|pretrain_gpt.py|--name|a b");
}
// ROCm/Megatron-LM's examples take `bash train_llama3.sh TP=2 PP=2`: a loop over "$@" that cuts
// each KEY=VALUE with `$(echo $ARGUMENT | cut -f1 -d=)`, `${ARGUMENT:$KEY_LENGTH+1}` and exports
// "$KEY"="$VALUE" (examples/llama/train_llama3.sh:25-33). bash 5.2 leaves TP=2, PP=3, and the
// script's own `${TP:-8}` defaults keep them.
TEST_CASE("import_shell_key_value_argument_loop") {
  auto r = run_shell(
      "for ARGUMENT in \"$@\"\ndo\n   KEY=$(echo $ARGUMENT | cut -f1 -d=)\n   KEY_LENGTH=${#KEY}\n"
      "   VALUE=\"${ARGUMENT:$KEY_LENGTH+1}\"\n   export \"$KEY\"=\"$VALUE\"\ndone\nTP=\"${TP:-8}\"\nPP=\"${PP:-1}\"\n"
      "S=abcdef\nA=${S:2:3}\nB=${S: -2}\nC=$(echo a:b:c | cut -d: -f2)\n",
      "s.sh", {{"1", "TP=2"}, {"2", "PP=3"}});
  REQUIRE(r.is_ok());
  CHECK(var(*r, "TP") == "2");
  CHECK(var(*r, "PP") == "3");
  CHECK(var(*r, "KEY") == "PP");
  CHECK(var(*r, "VALUE") == "3");
  CHECK(var(*r, "KEY_LENGTH") == "2");
  CHECK(var(*r, "A") == "cde");
  CHECK(var(*r, "B") == "ef");
  CHECK(var(*r, "C") == "b");
}
}  // namespace
}  // namespace planck::import
