#!/usr/bin/env bash
# Whole-process timings of the commands users run, as docs/performance.md reports them: wall
# time (median of N runs) and peak resident memory of `planck` started afresh each time, so the
# dynamic loader, static initialisation and output are counted, not only the library call.
#   bash bench/bench_cli.sh [PLANCK] [N]     (default build/cli/planck, N = 5)
#   MEGATRON_LM=DIR  also times Megatron-Core's RankGenerator from a Megatron-LM checkout on the
#                    same mesh (bench/megatron_rank_generator.py reads its parallel_state.py; no torch needed)
# With root and unshare, --version and verify are timed again with /usr/local/cuda hidden.
set -uo pipefail
cd "$(dirname "$0")/.."
planck=${1:-build/cli/planck}
n=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One line: label, median wall ms, max RSS MB over the n runs.
measure() {
  local label=$1
  shift
  local walls=() rss=0
  for _ in $(seq "$n"); do
    # Wall time from bash's microsecond clock (time(1)'s is 10 ms); peak RSS from time(1).
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$tmp/t" "$@" >/dev/null 2>&1
    local t1=$EPOCHREALTIME
    walls+=("$(echo "($t1 - $t0) * 1000" | bc -l)")
    read -r kb <"$tmp/t"
    ((kb > rss)) && rss=$kb
  done
  local median
  median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-58s %9.1f ms %7.1f MB\n' "$label" "$median" "$(echo "$rss / 1024" | bc -l)"
  last_median=$median
}

# The 131,072-rank mesh of docs/performance.md: pp 16, dp 512, cp 2, tp 8 (Megatron's order
# tp-cp-dp-pp: tp fastest).
cat >"$tmp/mesh.json" <<'JSON'
{"format": "planck/1", "cluster": {"nodes": 16384, "gpus_per_node": 8},
 "mesh": {"dims": ["pp", "dp", "cp", "tp"], "shape": [16, 512, 2, 8]},
 "parallelism": {"data_parallel": "ddp"}}
JSON

echo "# planck $("$planck" --version | head -1), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), median of $n"
measure "planck --version" "$planck" --version
measure "planck verify plans/hsdp-2x4.json" "$planck" verify plans/hsdp-2x4.json
# The six sets as JSON, written to a file two ways: `-o` (planck's atomic writer: a temporary
# file, fsync, rename) and a shell redirect (write and close, as the Python script's json.dump
# does; the sh start-up is counted against planck). The ratio to Megatron uses the second, the
# same work; both are printed.
groups=("$planck" groups "$tmp/mesh.json" --dim tp --dim cp --dim dp --dim pp --dim pp,tp --dim dp,cp --format json)
measure "planck groups (tp,cp,dp,pp,pp-tp,dp-cp of 131,072) json -o" "${groups[@]}" -o "$tmp/groups.json"
groups_atomic=$last_median
measure "the same, > file (write + close, no fsync)" sh -c '"$@" > "$0"' "$tmp/groups-redirect.json" "${groups[@]}"
groups_redirect=$last_median
cmp -s "$tmp/groups.json" "$tmp/groups-redirect.json" || echo "groups: -o and > wrote different bytes"
measure "enumerate llama3-405b 131,072 GPUs, 2,048 x 8,192" \
  "$planck" enumerate --world 131072 --gpus-per-node 8 --model llama3-405b --global-batch 2048 --seq-len 8192
measure "enumerate llama3-405b 131,072 GPUs, 16,384 x 8,192" \
  "$planck" enumerate --world 131072 --gpus-per-node 8 --model llama3-405b --global-batch 16384 --seq-len 8192
measure "enumerate deepseek-v3 2,048 H800, 15,360 x 4,096" \
  "$planck" enumerate --world 2048 --gpus-per-node 8 --model deepseek-v3 --gpu h800 --global-batch 15360 --seq-len 4096

if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null && [[ -d /usr/local/cuda ]]; then
  measure "planck --version (/usr/local/cuda hidden, incl. unshare)" unshare -m sh -c \
    "mount -t tmpfs none /usr/local/cuda && exec $planck --version"
  measure "unshare + mount alone (subtract from the line above)" unshare -m sh -c \
    "mount -t tmpfs none /usr/local/cuda && exec /bin/true"
fi

if [[ -n "${MEGATRON_LM:-}" ]]; then
  /usr/bin/python3 bench/megatron_rank_generator.py "$MEGATRON_LM" "$tmp/megatron.json" || echo "megatron: could not run"
  measure "Megatron-Core RankGenerator, same groups (python3 process)" \
    /usr/bin/python3 bench/megatron_rank_generator.py "$MEGATRON_LM" "$tmp/megatron.json"
  printf '%-58s %9.0fx (%.0fx with -o)\n' "ratio, RankGenerator / planck groups > file" \
    "$(echo "$last_median / $groups_redirect" | bc -l)" "$(echo "$last_median / $groups_atomic" | bc -l)"
fi
