"""Class-conditional training: labels through the split, OT within classes, guidance, per-class
evaluation with floors."""

import numpy as np
import pytest
import torch
from scipy.optimize import linear_sum_assignment

from flows import TrainConfig, train
from flows.conditions import Guided, LabelledSplits, load_labels, per_class_metric
from flows.coupling import couple_within_classes
from flows.data import load_digits
from flows.errors import FlowsError
from flows.field import FieldSpec, TwoLayerReLUField
from flows.training.loop import prepare_data


def test_labels_travel_with_their_rows_through_the_split():
    images, labels = load_digits()
    cfg = TrainConfig(data="digits", labels="data", n_eval=300, steps=1)
    splits, _ = prepare_data(cfg)
    assert isinstance(splits, LabelledSplits) and splits.classes == 10
    lookup = {tuple(r.tolist()): int(c) for r, c in zip(images, labels, strict=True)}
    for part, lab in ((splits.train, splits.train_labels), (splits.heldout,
                      splits.heldout_labels), (splits.floor, splits.floor_labels)):
        assert [lookup[tuple(r.tolist())] for r in part[:200]] == lab[:200].tolist()


def test_user_label_files_are_checked(tmp_path):
    x = np.random.default_rng(0).standard_normal((40, 2))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "ok.npy", np.arange(40) % 3)
    np.save(tmp_path / "short.npy", np.arange(10) % 3)
    np.save(tmp_path / "gap.npy", (np.arange(40) % 2) * 2)
    assert load_labels(str(tmp_path / "ok.npy"), str(tmp_path / "x.npy"), 40).max() == 2
    with pytest.raises(FlowsError, match="one label per row"):
        load_labels(str(tmp_path / "short.npy"), "x", 40)
    with pytest.raises(FlowsError, match="0..K-1"):
        load_labels(str(tmp_path / "gap.npy"), "x", 40)
    with pytest.raises(FlowsError, match="labelled data set"):
        load_labels("data", "moons", 40)


def test_ot_within_classes_pairs_only_inside_a_class_and_optimally():
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(90, 2, generator=g), torch.randn(90, 2, generator=g) * 2
    labels = torch.randint(0, 3, (90,), generator=g)
    y0, y1, c = couple_within_classes("ot", x0, x1, labels)
    assert torch.equal(y0, x0)
    # every target point is kept once, with its own label
    key = {tuple(r.tolist()): int(k) for r, k in zip(x1, labels, strict=True)}
    assert sorted(tuple(r.tolist()) for r in y1) == sorted(key)
    assert [key[tuple(r.tolist())] for r in y1] == c.tolist()
    for k in range(3):
        a, b = y0[c == k].double(), y1[c == k].double()
        cost = ((a[:, None] - b[None]) ** 2).sum(-1).numpy()
        ref = cost[linear_sum_assignment(cost)].sum()
        assert np.trace(cost) == pytest.approx(ref, rel=1e-9)


def test_guidance_is_the_affine_combination_of_the_two_fields():
    field = TwoLayerReLUField(FieldSpec(2, 32, classes=3), seed=0)
    x = torch.randn(6, 2, generator=torch.Generator().manual_seed(1))
    c = torch.tensor([0, 1, 2, 0, 1, 2])
    null = torch.full_like(c, 3)
    v_c, v_0 = field(x, 0.3, c), field(x, 0.3, null)
    assert not torch.allclose(v_c, v_0)
    for w in (0.0, 1.0, 2.5):
        assert torch.allclose(Guided(field, c, 3, w)(x, 0.3), v_0 + w * (v_c - v_0), atol=1e-6)
    # the null label is the all-zero one-hot
    assert torch.equal(field.features(x, 0.3, null)[:, 3:6], torch.zeros(6, 3))
    with pytest.raises(FlowsError, match="pass labels"):
        field(x, 0.3)


def test_per_class_metric_sees_a_wrong_class_and_not_a_right_one():
    cfg = TrainConfig(data="digits", labels="data", n_eval=300, steps=1)
    splits, _ = prepare_data(cfg)
    right = per_class_metric(splits.floor, splits.floor_labels, splits, "sliced", 0)
    wrong = per_class_metric(splits.floor, (splits.floor_labels + 1) % 10, splits, "sliced", 0)
    r_ok = [r["ratio"] for r in right if r["ratio"] is not None]
    r_bad = [r["ratio"] for r in wrong if r["ratio"] is not None]
    assert len(r_ok) == 10 and max(r_ok) < 1.6
    assert min(r_bad) > 2.0
    # each floor is a mean over independent pairs, with its spread
    assert all(r["floor_pairs"] == 3 and 0 < r["floor_std"] < r["floor"] for r in right)
    few = per_class_metric(splits.floor, splits.floor_labels, splits, "w2", 0)
    more = per_class_metric(splits.floor, splits.floor_labels, splits, "w2", 0, floor_pairs=6)
    for a, b in zip(few, more, strict=True):
        assert a["value"] == b["value"]
        assert abs(a["floor"] - b["floor"]) < 3 * max(a["floor_std"], b["floor_std"])


def test_conditional_training_with_a_module_and_the_builtin_field():
    cfg = TrainConfig(data="digits", labels="data", steps=30, batch=64, width=64, n_eval=100,
                      coupling="ot", lr=3e-3, label_dropout=0.2)
    res = train(cfg, progress=False)
    assert res.classes == 10 and res.field.spec.classes == 10
    two = np.random.default_rng(0).standard_normal((60, 2))
    res_m = None
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        np.save(Path(d) / "x.npy", two)
        np.save(Path(d) / "c.npy", (two[:, 0] > 0).astype(int))
        cfg_m = TrainConfig(data=str(Path(d) / "x.npy"), labels=str(Path(d) / "c.npy"),
                            model="flows_user_models:ConditionalMLP", model_args={"classes": 2},
                            steps=20, batch=16, n_eval=10, coupling="ot")
        res_m = train(cfg_m, progress=False)
    assert res_m.classes == 2 and torch.isfinite(res_m.losses).all()
    with pytest.raises(FlowsError, match="label_dropout"):
        TrainConfig(label_dropout=1.0)
