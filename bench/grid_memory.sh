#!/usr/bin/env bash
# Peak resident memory of grid-cell runs on Tanni's session against their duration (10, 20, 40
# simulated minutes and the whole session), three modules with the stated diffusion: a run that
# kept a (T, N) array of rates would grow by T x 3 x 256 x 8 bytes (about 550 MB per 40 minutes
# at 50 Hz on a 16 x 16 sheet); a streaming one grows only by its per-sample phases and path.
#   bash bench/grid_memory.sh OUT MODEL_DIR [DURATIONS_S (default "600 1200 2400")]
set -euo pipefail
out=${1:?usage: grid_memory.sh OUT MODEL_DIR [DURATIONS_S]}
model=${2:?usage: grid_memory.sh OUT MODEL_DIR [DURATIONS_S]}
durations=${3:-600 1200 2400}
py=${PYTHON:-python}
mkdir -p "$out"
for d in $durations; do
  /usr/bin/time -v -o "$out/d$d.time" "$py" -m neurodyn.cli grid-cells --model "$model" \
    --trajectory tanni --duration "$d" --modules 0.4,0.56,0.784 --diffusion 1 --cells 16 \
    --shuffles 20 --seed 0 --out "$out/d$d" >/dev/null 2>&1
  printf '%6s s: peak RSS %s kB, CPU %s s\n' "$d" \
    "$(grep 'Maximum resident' "$out/d$d.time" | awk '{print $NF}')" \
    "$(grep -E 'User time|System time' "$out/d$d.time" | awk '{s += $NF} END {print s}')"
done
