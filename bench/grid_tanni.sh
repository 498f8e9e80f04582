#!/usr/bin/env bash
# Grid cells on Tanni's real 2-hour trajectory: three modules with noise, with boundary cues and
# without (the control), peak resident memory and wall time of each command; then the decoding
# error (median, 95th percentile) and the bump's diffusion against sqrt(2 D t)
# (bench/grid_tanni_report.py).
#   bash bench/grid_tanni.sh OUT [DURATION_S (default: the whole session)] [MODEL_DIR]
set -euo pipefail
out=${1:?usage: grid_tanni.sh OUT [DURATION_S] [MODEL_DIR]}
duration=${2:-}
model=${3:-$out/torus}
py=${PYTHON:-python}
nd() { "$py" -m neurodyn.cli "$@"; }
mkdir -p "$out"
[ -f "$model/model.pt" ] || nd fit torus --out "$model" >/dev/null
common=(--model "$model" --trajectory tanni --modules 0.4,0.56,0.784 --noise 0.03 --cells 16
        --shuffles 20 --seed 0 ${duration:+--duration "$duration"})
for cue in cue nocue; do
  extra=()
  [ "$cue" = cue ] && extra=(--cue-strength 1.0 --cue-distance 0.1)
  /usr/bin/time -v -o "$out/$cue.time" "$py" -m neurodyn.cli grid-cells "${common[@]}" \
    --out "$out/$cue" "${extra[@]}" >/dev/null
  grep -E "Maximum resident|Elapsed" "$out/$cue.time"
done
"$py" bench/grid_tanni_report.py "$out" "$model"
