#!/usr/bin/env bash
# Runs one small run of each command with fixed seeds into OUT (default: runs-compare) and prints
# each metrics.json's sha256, so that two checkouts can be compared byte for byte:
#   bash bench/compare_runs.sh /tmp/a && (cd OTHER && bash bench/compare_runs.sh /tmp/b) && diff ...
set -euo pipefail
out=${1:-runs-compare}
py=${PYTHON:-python}
rm -rf "$out"; mkdir -p "$out"
nd() { "$py" -c 'import sys; from neurodyn.cli import main; sys.exit(main(sys.argv[1:]))' "$@"; }
fl() { "$py" -c 'import sys; from flows.cli import main; sys.exit(main(sys.argv[1:]))' "$@"; }
nd fit ring --out "$out/ring" --n 32 --steps 2 --seed 0 >/dev/null
nd simulate --model "$out/ring" --out "$out/sim" --perturb noise --strength 0.2 --count 2 \
   --duration 5 --seed 0 >/dev/null
nd fit torus --out "$out/torus" --n 12 12 --steps 2 --seed 0 >/dev/null
nd grid-cells --model "$out/torus" --out "$out/grid" --duration 20 --seed 0 --shuffles 2 >/dev/null
fl train --data moons --out "$out/indep" --steps 40 --coupling independent --seed 0 >/dev/null
fl train --data moons --out "$out/ot" --steps 40 --coupling ot --seed 0 >/dev/null
fl experiment width --out "$out/width" --widths 64,128 --n 32 --steps 20 --seed 0 >/dev/null
# entries that now live in timing.json (wall_time_s, seconds, realtime_factor, resumed_from_step)
# are left out, so a checkout from before they moved compares too; everything else must be equal
"$py" - "$out" <<'PY'
import hashlib, json, pathlib, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("wall_time_s", "seconds", "realtime_factor", "resumed_from_step")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
for p in sorted(pathlib.Path(sys.argv[1]).glob("*/metrics.json")):
    raw = p.read_bytes()
    body = json.dumps(strip(json.loads(raw)), sort_keys=True).encode()
    print(hashlib.sha256(body).hexdigest()[:16], p.parent.name)
PY
