"""Whether generated activity is an attractor population: one judgement, made before relaxation.

The three generators are not equal witnesses. (b) maps coordinates through the network's
manifold and (c) relaxes states onto it by the network's own dynamics: whatever the data, their
states lie near the model's ring or torus, so their topology and distances measure the model,
not the data (a flow trained on feed-forward counts, relaxed, reads Betti (1, 1, 0) as one
trained on an attractor's does). Only (a), the ambient flow's samples as generated, learned from
the data alone; those are judged, and (c)'s numbers are reported beside them.

``kept`` (the generated population is called an attractor population) is true only when both
hold:

1. **the data is an attractor's**: its own verdict is ``attractor: true`` -- the
   ``metrics.json`` of the ``neurodyn fit-activity`` run the model came from
   (:func:`data_verdict`), or a fit of the recorded counts where the folder holds none
   (:func:`fitted_verdict`), or the states are the network's own runs (noise- or
   trajectory-driven), an attractor's by construction (:meth:`DataVerdict.network`);
2. **the samples match the held-out data**: (a)'s rate W2 in the neurons' (ambient) space,
   over its floor (real training states against the held-out ones,
   :func:`~.metrics.rate_floor`), is at most :data:`W2_TOLERANCE`.

Otherwise ``reason`` names every condition that failed. The Betti numbers of (a)'s cloud, of
the held-out states and of the attractor, the normal distance and the intrinsic W2 are reported
beside them; they do not decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _runkit import BadInput, Result

__all__ = ["DataVerdict", "KeptVerdict", "data_verdict", "fitted_verdict", "keeps_attractor",
           "JUDGED", "MODEL_SHAPED", "W2_TOLERANCE"]

#: the generator whose samples are judged, as generated
JUDGED = "ambient"
#: generators whose states the network's manifold shapes: reported, never judged
MODEL_SHAPED = ("riemannian", "relaxed")
#: (a)'s rate W2 over its floor must be at most this (the generators' W2 acceptance, 1.2x)
W2_TOLERANCE = 1.2
#: the most a model folder's metrics.json may hold (fit-activity writes a few tens of kB)
_METRICS_BYTES = 16 * 2**20


@dataclass(frozen=True)
class DataVerdict(Result):
    """The data's own answer to "is there an attractor?".

    Attributes
    ----------
    attractor : bool or str
        ``True``, ``False``, ``"inconclusive"`` (fit-activity's verdict) or ``"unknown"`` (no
        verdict was available).
    reason : str
    source : str
        ``"network"`` (the network's own states), the ``metrics.json`` read, ``"fit"`` (the
        recorded counts fitted here) or ``"none"``.
    """

    attractor: object
    reason: str
    source: str

    @classmethod
    def network(cls) -> DataVerdict:
        """The verdict of the network's own states: its manifold is an attractor by
        construction."""
        return cls(True, "the states are the network's own runs, about its attractor",
                   "network")


def data_verdict(model) -> DataVerdict:
    """The attractor verdict of a ``neurodyn fit-activity`` model folder (its ``metrics.json``).

    Parameters
    ----------
    model : str or Path
        The model folder.

    Returns
    -------
    DataVerdict
        ``attractor`` ``"unknown"`` where the folder holds no ``metrics.json`` or one without
        a verdict (folders of older versions), with the reason saying so.

    Raises
    ------
    BadInput
        A ``metrics.json`` that is not JSON, is too large, or holds a verdict other than
        true, false or ``"inconclusive"``.

    Examples
    --------
    >>> import json, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> data_verdict(d).attractor
    'unknown'
    >>> _ = (d / "metrics.json").write_text(json.dumps({"attractor": False, "reason": "x"}))
    >>> data_verdict(d).attractor
    False
    """
    from _runkit.files import read_json

    folder = Path(model)
    path = folder / "metrics.json"
    if not folder.is_dir() or not path.is_file():
        return DataVerdict("unknown", f"{str(folder)!r} holds no metrics.json with the data's "
                           "verdict", "none")
    if path.stat().st_size > _METRICS_BYTES:
        raise BadInput(f"--model={str(folder)!r}: metrics.json holds {path.stat().st_size} "
                       f"bytes, more than a fit-activity verdict ({_METRICS_BYTES} at most)")
    metrics = read_json(path, "--model")
    if not isinstance(metrics, dict) or "attractor" not in metrics:
        return DataVerdict("unknown", f"{str(path)!r} holds no attractor verdict", "none")
    value = metrics["attractor"]
    if not (isinstance(value, bool) or value == "inconclusive"):
        raise BadInput(f"--model={str(folder)!r}: metrics.json's attractor is {value!r}; "
                       "true, false or \"inconclusive\" expected")
    reason = metrics.get("reason")
    return DataVerdict(value, reason if isinstance(reason, str) else "", str(path))


def fitted_verdict(counts, dt: float, geometry: str, covariate=None, seed: int = 0
                   ) -> DataVerdict:
    """The attractor verdict of recorded counts, fitted here
    (:func:`neurodyn.inference.fit_activity`, every test it runs by default).

    Parameters
    ----------
    counts : array, shape (T, cells)
    dt : float
        Bin width (s).
    geometry : str
        ``"ring"`` or ``"torus"``.
    covariate : array, shape (T,) or (T, 2), or None
        The heading (ring, rad) or position (torus, m), if recorded.
    seed : int

    Returns
    -------
    DataVerdict
        ``source`` ``"fit"``.
    """
    from ..inference.core import fit_activity

    fit = fit_activity(counts, dt, geometry, covariate, seed=seed)
    return DataVerdict(fit.attractor, fit.verdict.reason, "fit")


@dataclass(frozen=True)
class KeptVerdict(Result):
    """Whether the generated population is an attractor population (module docstring).

    Attributes
    ----------
    kept : bool
    reason : str
        Why, in words: every condition that failed, or both that held.
    data_attractor : bool or str
        The data's own verdict (:class:`DataVerdict`), its ``data_reason`` and
        ``data_source``.
    data_reason, data_source : str
    judged : str
        The generator judged (``"ambient"``), as generated.
    rate_w2_ratio : float
        (a)'s rate W2 over its floor (:class:`~.metrics.GeneratedMetrics`).
    w2_tolerance : float
        The most ``rate_w2_ratio`` may be (:data:`W2_TOLERANCE`).
    betti, held_betti, attractor_betti : tuple of int
        (a)'s, the held-out states' and the attractor's Betti numbers (reported).
    distance_ratio, w2_ratio : float
        (a)'s normal distance and intrinsic W2 over their floors (reported).
    model_shaped : dict
        Per generator shaped by the model's manifold, its ``rate_w2_ratio``, ``w2_ratio``,
        ``distance_ratio`` and ``betti``: reported beside (a), never judged.
    """

    kept: bool
    reason: str
    data_attractor: object
    data_reason: str
    data_source: str
    judged: str
    rate_w2_ratio: float
    w2_tolerance: float
    betti: tuple
    held_betti: tuple
    attractor_betti: tuple
    distance_ratio: float
    w2_ratio: float
    model_shaped: dict


def _misses(data: DataVerdict, ratio: float) -> list:
    """The conditions of the module docstring that fail, in words."""
    out = []
    if data.attractor is not True:
        word = {False: "no attractor"}.get(data.attractor, str(data.attractor))
        out.append(f"the data's own verdict is {word}"
                   + (f" ({data.reason})" if data.reason else ""))
    if not ratio <= W2_TOLERANCE:
        out.append(f"(a)'s states as generated do not match the held-out data: rate W2 "
                   f"{ratio:.3g}x its floor (at most {W2_TOLERANCE:g}x)")
    return out


def keeps_attractor(methods: dict, held_betti, attractor_betti, data: DataVerdict
                    ) -> KeptVerdict:
    """Judge whether (a)'s states, as generated, are an attractor population.

    Parameters
    ----------
    methods : dict
        ``name -> GeneratedMetrics`` (:func:`~.metrics.judge_states`); ``"ambient"`` (the
        samples as generated) is judged, the others are reported.
    held_betti : tuple of int
        Betti numbers of the held-out states (:func:`~.metrics.state_betti`).
    attractor_betti : tuple of int
        The attractor's (:data:`~neurodyn.analysis.topology.ATTRACTOR_BETTI`).
    data : DataVerdict
        The data's own verdict.

    Returns
    -------
    KeptVerdict

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> a = SimpleNamespace(betti=(1, 1, 0), rate_w2_ratio=1.05, distance_ratio=1.1,
    ...                     w2_ratio=1.0)
    >>> keeps_attractor({"ambient": a}, (1, 1, 0), (1, 1, 0), DataVerdict.network()).kept
    True
    >>> no = DataVerdict(False, "drift failed", "metrics.json")
    >>> v = keeps_attractor({"ambient": a}, (1, 1, 0), (1, 1, 0), no)
    >>> v.kept, v.reason
    (False, "not kept: the data's own verdict is no attractor (drift failed)")
    """
    a = methods[JUDGED]
    ratio = float(a.rate_w2_ratio)
    misses = _misses(data, ratio)
    reason = ("not kept: " + "; ".join(misses) if misses else
              f"kept: the data is an attractor's ({data.source}) and (a)'s states as generated "
              f"match the held-out data (rate W2 {ratio:.3g}x its floor, at most "
              f"{W2_TOLERANCE:g}x)")
    shaped = {k: {"rate_w2_ratio": float(m.rate_w2_ratio), "w2_ratio": float(m.w2_ratio),
                  "distance_ratio": float(m.distance_ratio),
                  "betti": tuple(int(b) for b in m.betti)}
              for k, m in methods.items() if k in MODEL_SHAPED}
    return KeptVerdict(not misses, reason, data.attractor, data.reason, data.source, JUDGED,
                       ratio, W2_TOLERANCE, tuple(int(b) for b in a.betti),
                       tuple(int(b) for b in held_betti), tuple(int(b) for b in attractor_betti),
                       float(a.distance_ratio), float(a.w2_ratio), shaped)
