"""A survey of an attractor manifold: activity, embeddings, topology, energy landscape, path.

:func:`survey_manifold` computes everything :func:`neurodyn.runs.manifold_report` draws and
writes: :func:`~neurodyn.analysis.activity.manifold_activity`, its PCA and Isomap embeddings, the
persistent homology of the activity, :func:`~neurodyn.analysis.landscape.energy_landscape` and a
path-integration run (:func:`~neurodyn.analysis.activity.path_on_manifold`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from _runkit.results import Result
from _runkit.seeds import child_seeds

from .._util import check_int, require_manifold, to_numpy
from ..dynamics.simulation import SimulationResult
from ..network import HopfieldNetwork
from .activity import ManifoldActivity, manifold_activity, path_on_manifold
from .embedding import Embedding, isomap, pca, subsample
from .landscape import EnergyLandscape, energy_landscape

__all__ = ["ManifoldSurvey", "survey_manifold", "MIN_SURVEY_SAMPLES"]

#: Fewest activity samples :func:`survey_manifold` accepts (Isomap needs a connected graph).
MIN_SURVEY_SAMPLES = 20


@dataclass(frozen=True)
class ManifoldSurvey(Result):
    """Outcome of :func:`survey_manifold`.

    Attributes
    ----------
    activity : ManifoldActivity
        The activity samples, ``rates (samples, N)``.
    pca : Embedding
        PCA of the rates with ``min(10, N, samples)`` components.
    isomap : Embedding
        Isomap (2 coordinates) of ``pca.coords[isomap_index]``.
    isomap_index : ndarray of int, shape (points,)
        The samples Isomap embeds.
    homology : Homology or None
        Persistent homology of the rates (``None`` without ``topology``).
    landscape : EnergyLandscape
        The energy along and across the manifold.
    path : SimulationResult
        Four path-integration runs of 200 tau (decoded phases and their reference).
    metrics : dict
        JSON-ready numbers; see :func:`survey_manifold`.
    seconds : dict
        Wall time of each step (s).
    """

    activity: ManifoldActivity
    pca: Embedding
    isomap: Embedding
    isomap_index: np.ndarray
    homology: Any
    landscape: EnergyLandscape
    path: SimulationResult
    metrics: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The metrics with the wall times under ``seconds`` (JSON-ready)."""
        return {**self.metrics, "seconds": dict(self.seconds)}


def survey_manifold(network: HopfieldNetwork, samples: int = 2000, seed: int = 0,
                    topology: bool = True, isomap_points: int = 1000,
                    max_landmarks: int = 250) -> ManifoldSurvey:
    """Embeddings, topology, energy landscape and path of a network's attractor manifold.

    Steps: :func:`~neurodyn.analysis.activity.manifold_activity` (``samples`` rates); PCA to 10
    components and Isomap to 2 (on ``isomap_points`` max-min landmarks of the activity projected
    on its 10 leading principal components); persistent homology up to dimension 2 on
    ``max_landmarks`` landmarks (:func:`~neurodyn.analysis.topology.persistent_homology`), Betti
    numbers by the widest-gap rule (a ring gives ``(1, 1, 0)``, a torus ``(1, 2, 1)``);
    :func:`~neurodyn.analysis.landscape.energy_landscape`; path integration of four runs for 200
    tau.
    Every step has its own seed derived from ``seed``.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold and transport.
    samples : int
        Activity samples, >= 20.
    seed : int
        Seeds every random draw.
    topology : bool
        Compute persistent homology (needs the optional ``ripser``).
    isomap_points : int
        At most this many samples enter Isomap, >= 20.
    max_landmarks : int
        Landmarks of the persistent homology, >= 2.

    Returns
    -------
    ManifoldSurvey
        Its ``metrics``: ``betti`` ``[b0, b1, b2]``, ``expected_betti``, ``betti_ok`` and
        ``homology`` (with ``topology``), ``pca_explained_variance`` (first six ratios),
        ``pca_top3``, ``isomap_explained_variance``, ``energy`` (see
        :meth:`~neurodyn.analysis.landscape.EnergyLandscape.metrics`), ``path_error_rms_final``
        (rad), ``activity`` (samples, runs, max/median distance), ``geometry``.
    """
    require_manifold(network)
    samples = check_int(samples, "samples", MIN_SURVEY_SAMPLES)
    isomap_points = check_int(isomap_points, "isomap_points", MIN_SURVEY_SAMPLES)
    max_landmarks = check_int(max_landmarks, "max_landmarks", 2)
    s_act, s_top, s_land, s_path, s_iso = child_seeds(seed, 5)
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def tick(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = now - clock
        clock = now

    act = manifold_activity(network, samples=samples, seed=s_act)
    tick("activity")
    g = network.geometry
    metrics: dict[str, Any] = {
        "geometry": g.config(),
        "activity": {"samples": act.samples, "runs": act.runs,
                     "distance_max": float(act.distance.max()),
                     "distance_median": float(np.median(act.distance))},
    }
    emb, idx, iso = _embeddings(act, isomap_points, s_iso, metrics)
    tick("embedding")
    hom = None
    if topology:
        from .topology import persistent_homology

        hom = persistent_homology(act.rates, maxdim=2, max_points=max_landmarks, seed=s_top)
        metrics.update(_homology_metrics(hom, g.dim))
        tick("topology")
    land = energy_landscape(network, seed=s_land)
    metrics["energy"] = land.metrics()
    tick("energy_landscape")
    tr = path_on_manifold(network, seed=s_path)
    err = to_numpy(tr.path_error())
    metrics["path_error_rms_final"] = float(np.sqrt(np.mean(err[-1] ** 2)))
    tick("path")
    return ManifoldSurvey(act, emb, iso, idx, hom, land, tr, metrics, seconds)


def _embeddings(act, isomap_points: int, seed: int, metrics: dict):
    """PCA of the activity (10 components at most) and Isomap of at most ``isomap_points`` of
    its PCA coordinates; their explained variances go into ``metrics``. Returns
    ``(pca, Isomap's sample indices, isomap)``."""
    emb = pca(act.rates, min(10, act.rates.shape[1], act.samples))
    metrics["pca_explained_variance"] = [float(x) for x in emb.explained_variance_ratio[:6]]
    metrics["pca_top3"] = float(emb.explained_variance_ratio[:3].sum())
    low = emb.coords  # activity on its leading principal components (noise removed)
    idx = subsample(low, isomap_points, seed=seed)
    iso = isomap(low[idx], 2, n_neighbors=min(10, len(idx) - 1))
    metrics["isomap_explained_variance"] = [float(x) for x in iso.explained_variance_ratio]
    return emb, idx, iso


def _homology_metrics(hom, dim: int) -> dict[str, Any]:
    """Betti numbers against those of a ring (``dim`` 1) or a torus, and the landmarks, scale
    and four longest bars per dimension."""
    betti = list(hom.betti())
    expected = [1, 1, 0] if dim == 1 else [1, 2, 1]
    return {"betti": betti, "expected_betti": expected, "betti_ok": betti == expected,
            "homology": {"landmarks": int(len(hom.landmarks)),
                         "cover_radius": hom.cover_radius, "diameter": hom.diameter,
                         "longest_bars": [[float(x) for x in hom.lifetimes(k)[:4]]
                                          for k in range(3)]}}
