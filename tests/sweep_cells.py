"""Cell functions of the sweep tests (a module, so that Dask worker processes can import it)."""

import os
import time
import uuid
from pathlib import Path

import numpy as np


def noisy_mean(p):
    """A seeded result that differs between cells and seeds."""
    rng = np.random.default_rng(p["seed"])
    x = rng.normal(p["mu"], 1.0, size=int(p["n"]))
    return {"mean": float(x.mean()), "std": float(x.std()), "pid": None}


def slow_marked(p):
    """Sleeps, then leaves one marker file per execution (to count how often a cell ran)."""
    time.sleep(float(p["sleep"]))
    marks = Path(p["marks"])
    (marks / f"{p['i']}-{os.getpid()}-{uuid.uuid4().hex}").write_text("")
    return {"value": p["i"] * 10 + p["seed"] % 7}
