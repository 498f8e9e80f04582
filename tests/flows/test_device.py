"""--device without a GPU: refusals name the option, batches stay on the model's device, and the
CUDA branch of the OT coupling (costs formed as a tensor, assignment on the CPU) is exact.

CUDA itself is exercised by the skipped-here tests of tests/test_flows_models.py.
"""

import collections
import sys

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from flows import TrainConfig, train
from flows.cli.commands import main
from flows.coupling import ot_permutation, squared_distances
from flows.training.batches import WARM_BATCHES

no_cuda = not torch.cuda.is_available()


@pytest.mark.skipif(not no_cuda, reason="this machine has CUDA: the refusal cannot be tested")
@pytest.mark.parametrize("command", ["train", "sample"])
def test_an_unavailable_device_is_refused_naming_the_option(tmp_path, capsys, command):
    out = tmp_path / "run"
    args = (["train", "--data", "moons", "--steps", "2", "--out", str(out)] if command == "train"
            else ["sample", "--model", str(out), "--n", "3", "--out", str(tmp_path / "s.npy")])
    for device in ("cuda", "cuda:1"):
        assert main([*args, "--device", device]) == 2
        err = capsys.readouterr().err
        assert "--device" in err and repr(device) in err and "no CUDA device" in err
    assert not out.exists()  # refused before any run directory is made


def test_an_unknown_device_is_refused_naming_the_option(tmp_path, capsys):
    assert main(["train", "--data", "moons", "--out", str(tmp_path / "r"), "--device",
                 "tpu"]) == 2
    err = capsys.readouterr().err
    assert "--device" in err and "'tpu'" in err and "cpu, cuda" in err


def test_training_steps_copy_nothing_to_the_cpu(monkeypatch):
    # a hard-coded .cpu() / .numpy() in a step would cost a device sync and copy per step on a
    # GPU; on the CPU it is a no-op, so count the calls instead
    seen = collections.Counter()

    def spy(name, original):
        def method(self, *args, **kwargs):
            frame = sys._getframe(1)
            seen[name, frame.f_code.co_filename.rsplit("/", 1)[-1], frame.f_code.co_name] += 1
            return original(self, *args, **kwargs)
        return method

    monkeypatch.setattr(torch.Tensor, "cpu", spy("cpu", torch.Tensor.cpu))
    monkeypatch.setattr(torch.Tensor, "numpy", spy("numpy", torch.Tensor.numpy))
    for coupling, steps in (("independent", 4), ("independent", 9), ("ot", 4), ("ot", 9)):
        seen.clear()
        cfg = TrainConfig(data="moons", coupling=coupling, steps=steps, batch=32, width=16,
                          n_train=200, n_eval=20)
        train(cfg, progress=False, workers=0)
        per_run = {k: v for k, v in seen.items() if k[0] == "cpu"}
        assert sum(per_run.values()) <= 1, per_run  # the initial weights, once per run
        numpy_calls = {k: v for k, v in seen.items() if k[0] == "numpy"}
        if coupling == "independent":
            assert not numpy_calls
        else:  # only the assignment's own inputs (x0 and x1) leave torch, once per step,
            # and the warm start's reference batches, once per run
            assert numpy_calls == {("numpy", "coupling.py", "ot_permutation"): 2 * steps,
                                   ("numpy", "batches.py", "ot_warm_start"): 2 * WARM_BATCHES}


@pytest.mark.parametrize("kind", ["gaussian", "duplicates", "ties", "grid"])
def test_the_device_branch_of_the_coupling_is_exact(kind):
    # on a GPU the costs are formed as a tensor and the assignment solves them on the CPU;
    # that branch is the cost-matrix route of ot_permutation, run here on CPU tensors
    from flows.assignment.auction import auction_assignment

    g = torch.Generator().manual_seed(3)
    x0, x1 = torch.randn(512, 2, generator=g), torch.randn(512, 2, generator=g) + 1.0
    if kind == "duplicates":
        x1 = x1[torch.randint(0, 24, (512,), generator=g)]
    elif kind == "ties":
        x1[:] = x1[0]
    elif kind == "grid":
        x0, x1 = torch.round(x0 * 2) / 2, torch.round(x1 * 2) / 2
    c = squared_distances(x0, x1)
    assert c.dtype == np.float64 and c.shape == (512, 512)
    ref = c[np.arange(512), linear_sum_assignment(c)[1]].sum()
    for sigma in (auction_assignment(c), ot_permutation(x0, x1).numpy()):
        assert sorted(sigma.tolist()) == list(range(512))
        assert c[np.arange(512), sigma].sum() == pytest.approx(ref, rel=1e-12, abs=1e-9)
