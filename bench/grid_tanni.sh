#!/usr/bin/env bash
# Grid cells on Tanni's real 2-hour trajectory (3.5 x 2.5 m arena): three modules whose noise is
# set by a stated diffusion (--diffusion, cm^2/s per module, from the bump's diffusion theory),
# with the arena's wall cue (an encounter within 5 cm of a wall: a whisker's reach) and without
# (the control), run side by side, each with /usr/bin/time -v (CPU time, peak resident memory)
# and checkpoints; then the jointly decoded error (median, 95th percentile; the three modules
# decoded together without the start position) and the diffusion of each module against
# sqrt(2 D t) (bench/grid_tanni_report.py).
#   bash bench/grid_tanni.sh OUT [DURATION_S (default: the whole session)] [MODEL_DIR] [D]
set -euo pipefail
out=${1:?usage: grid_tanni.sh OUT [DURATION_S] [MODEL_DIR] [D_CM2_PER_S]}
duration=${2:-}
model=${3:-$out/torus}
diffusion=${4:-1.0}
py=${PYTHON:-python}
mkdir -p "$out"
[ -f "$model/model.pt" ] || "$py" -m neurodyn.cli fit torus --n 16 16 --out "$model" >/dev/null
common=(--model "$model" --trajectory tanni --modules 0.4,0.56,0.784 --diffusion "$diffusion"
        --cells 16 --shuffles 20 --seed 0 --checkpoint-every 5 ${duration:+--duration "$duration"})
uptime > "$out/uptime.txt"
for cue in cue nocue; do
  extra=()
  [ "$cue" = cue ] && extra=(--cue-strength 1.0 --cue-distance 0.05)
  /usr/bin/time -v -o "$out/$cue.time" "$py" -m neurodyn.cli grid-cells "${common[@]}" \
    --out "$out/$cue" "${extra[@]}" >"$out/$cue.log" 2>&1 &
done
wait
uptime >> "$out/uptime.txt"
grep -E "Maximum resident|Elapsed|User time" "$out"/*.time
"$py" bench/grid_tanni_report.py "$out" "$model"
