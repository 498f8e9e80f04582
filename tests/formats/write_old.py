"""Write the model files of ``tests/formats`` with the library as it was at a commit.

Run from a copy of that commit's tree, with that tree first on the path::

    git archive COMMIT | tar -x -C /tmp/old-COMMIT
    cd /tmp/old-COMMIT && PYTHONPATH=. python /path/to/tests/formats/write_old.py \\
        neurodyn COMMIT /path/to/tests/formats

It fits (neurodyn: a 32-neuron ring and an 8x8 torus, two steps) or trains (flows: moons,
width 16, three steps) with that commit's own code, saves the model with that commit's own
writer, and records beside it, in ``.json``, what that code computes at a fixed input: the
field ``du/dt`` and energy at the stored bump plus a fixed wave (neurodyn), the velocity at
five fixed (x, t) (flows). The tests compare today's loader with those numbers.
"""

import importlib
import inspect
import json
import math
import sys
import tempfile
from pathlib import Path

import torch


def neurodyn_files(commit: str, out: Path) -> None:
    for name in ("neurodyn.fitting.core", "neurodyn.fitting", "neurodyn.fit"):
        try:
            module = importlib.import_module(name)
            break
        except ImportError:
            continue
    from neurodyn.io import load_model, save_model

    progress = {k: False for k in ("progress", "progress_bar")
                if k in inspect.signature(module.fit).parameters}
    for geometry, n in (("ring", 32), ("torus", (8, 8))):
        result = module.fit(module.FitConfig(geometry=geometry, n=n, steps=2), **progress)
        path = out / f"neurodyn-{commit}-{geometry}.pt"
        save_model(result.network, path, extra={"written_by": commit})
        net = load_model(path)[0]
        u0 = torch.load(path, weights_only=True)["manifold_u0"].to(torch.float64)
        i = torch.arange(u0.numel(), dtype=torch.float64)
        wave = 0.1 * torch.cos(2 * math.pi * 3 * i / u0.numel()) + 0.05
        u = (u0.reshape(-1) + wave).reshape(u0.shape)[None]
        with torch.no_grad():
            field = net.field(u).reshape(-1).tolist()
        energy = float(net.energy(u).detach().reshape(-1)[0])
        path.with_suffix(".json").write_text(json.dumps({"field": field, "energy": energy}))


def flows_files(commit: str, out: Path) -> None:
    from flows import TrainConfig, train

    try:
        from flows.training.checkpoint import load_model, save_model
    except ImportError:
        from flows.checkpoint import load_model, save_model
    keys = dict(data="moons", width=16, steps=3, batch=64, n_eval=200)
    cfg = TrainConfig(**{k: v for k, v in keys.items() if k in TrainConfig.__dataclass_fields__})
    result = train(cfg, out_dir=tempfile.mkdtemp())
    path = out / f"flows-{commit}.pt"
    save_model(path, result.field, cfg.to_dict())
    field = load_model(path)[0]
    x = torch.linspace(-2, 2, 10).reshape(5, 2)
    t = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
    with torch.no_grad():
        v = field(x, t)
    path.with_suffix(".json").write_text(json.dumps(
        {"x": x.tolist(), "t": t.tolist(), "v": v.tolist(), "spec": field.spec.to_dict()}))


if __name__ == "__main__":
    torch.set_num_threads(1)
    package, commit, folder = sys.argv[1:4]
    (neurodyn_files if package == "neurodyn" else flows_files)(commit, Path(folder))
