"""Whether generated activity keeps the data's attractor: one judgement, made before relaxation.

The three generators are not equal witnesses. (b) maps coordinates through the network's
manifold and (c) relaxes states onto it by the network's own dynamics: whatever the data, their
states lie near the model's ring or torus, so their topology and normal distance measure the
model, not the data (a flow trained on feed-forward counts, relaxed, reads Betti (1, 1, 0) as
one trained on an attractor's does). They are reported as *shaped by the model's manifold* and
never count as keeping an attractor. Only (a), the ambient flow's samples as generated, learned
from the data alone; those are judged.

``kept`` is true only when all of these hold:

1. the data's own verdict is an attractor: ``attractor: true`` in the ``metrics.json`` of the
   ``neurodyn fit-activity`` folder the recorded states came from (:func:`data_verdict`), or
   the states are the network's own (noise-driven or trajectory-driven runs of it);
2. the held-out states show the attractor's Betti numbers (ring (1, 1, 0), torus (1, 2, 1)):
   otherwise the judge cannot see an attractor to keep (recorded states pooled over a few bins
   are often too noisy for it; a wider ``--window`` helps);
3. (a)'s Betti numbers are the held-out states';
4. (a)'s median normal distance is the held-out states' within a factor
   :data:`DISTANCE_TOLERANCE` either way (the tolerance the generators' acceptance uses).

The intrinsic W2 ratio is reported beside them; the tuning and correlation errors are in the
judged set's :class:`~.metrics.GeneratedMetrics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from _runkit import BadInput, Result

__all__ = ["DataVerdict", "KeptVerdict", "data_verdict", "keeps_attractor", "JUDGED",
           "MODEL_SHAPED", "DISTANCE_TOLERANCE"]

#: the generator whose samples are judged, as generated
JUDGED = "ambient"
#: generators whose states the network's manifold shapes: never counted as keeping the attractor
MODEL_SHAPED = ("riemannian", "relaxed")
#: (a)'s normal distance must be within this factor of the held-out states', either way
DISTANCE_TOLERANCE = 1.5
#: the most a model folder's metrics.json may hold (fit-activity writes a few tens of kB)
_METRICS_BYTES = 16 * 2**20


@dataclass(frozen=True)
class DataVerdict(Result):
    """The data's own answer to "is there an attractor?".

    Attributes
    ----------
    attractor : bool or str
        ``True``, ``False``, ``"inconclusive"`` (fit-activity's verdict) or ``"unknown"`` (a
        model folder without one).
    reason : str
    source : str
        ``"network"`` (the network's own states) or the ``metrics.json`` read.
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
                           "verdict (a model folder of an older fit-activity?)", str(path))
    if path.stat().st_size > _METRICS_BYTES:
        raise BadInput(f"--model={str(folder)!r}: metrics.json holds {path.stat().st_size} "
                       f"bytes, more than a fit-activity verdict ({_METRICS_BYTES} at most)")
    metrics = read_json(path, "--model")
    if not isinstance(metrics, dict) or "attractor" not in metrics:
        return DataVerdict("unknown", f"{str(path)!r} holds no attractor verdict (written by "
                           "an older fit-activity)", str(path))
    value = metrics["attractor"]
    if not (isinstance(value, bool) or value == "inconclusive"):
        raise BadInput(f"--model={str(folder)!r}: metrics.json's attractor is {value!r}; "
                       "true, false or \"inconclusive\" expected (the file was edited?)")
    reason = metrics.get("reason")
    return DataVerdict(value, reason if isinstance(reason, str) else "", str(path))


@dataclass(frozen=True)
class KeptVerdict(Result):
    """Whether the generated activity keeps the data's attractor (module docstring).

    Attributes
    ----------
    data_attractor : bool or str
        The data's own verdict (:class:`DataVerdict`).
    data_reason : str
    kept : bool
    reason : str
        Why, in words: every condition that failed.
    judged : str
        The generator judged (``"ambient"``), as generated.
    model_shaped : tuple of str
        The generators shaped by the model's manifold, not judged.
    betti, held_betti, attractor_betti : tuple of int
        The judged states', the held-out states' and the attractor's Betti numbers.
    distance_ratio : float
        The judged states' median normal distance over the held-out states'.
    distance_tolerance : float
        The factor allowed either way.
    w2_ratio : float
        The judged states' intrinsic W2 over its i.i.d. floor (reported, not a condition).
    """

    data_attractor: object
    data_reason: str
    kept: bool
    reason: str
    judged: str
    model_shaped: tuple
    betti: tuple
    held_betti: tuple
    attractor_betti: tuple
    distance_ratio: float
    distance_tolerance: float
    w2_ratio: float


def _misses(data: DataVerdict, betti: tuple, held: tuple, want: tuple, ratio: float) -> list:
    """The conditions of the module docstring that fail, in words."""
    out = []
    if data.attractor is not True:
        word = {False: "no attractor"}.get(data.attractor, str(data.attractor))
        out.append(f"the data's own verdict is {word}"
                   + (f" ({data.reason})" if data.reason else ""))
    if held != want:
        out.append(f"the held-out states read Betti {held}, not the attractor's {want}, so the "
                   "judge sees no attractor to keep")
    if betti != held:
        out.append(f"(a)'s states as generated read Betti {betti} against the held-out {held}")
    lo, hi = 1.0 / DISTANCE_TOLERANCE, DISTANCE_TOLERANCE
    if not lo <= ratio <= hi:
        out.append(f"(a)'s normal distance is {ratio:.3g}x the held-out states' "
                   f"({lo:.3g}x to {hi:.3g}x matches)")
    return out


def keeps_attractor(judged, held_betti, attractor_betti, data: DataVerdict) -> KeptVerdict:
    """Judge whether (a)'s states, as generated, keep the data's attractor.

    Parameters
    ----------
    judged : GeneratedMetrics
        :func:`~.metrics.judge_states` of the ambient flow's samples, unrelaxed.
    held_betti : tuple of int
        Betti numbers of the held-out states (:func:`~.metrics.state_homology`, the judge's
        rule), as many as ``judged.betti``.
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
    >>> a = SimpleNamespace(betti=(1, 1, 0), distance_ratio=1.1, w2_ratio=1.0)
    >>> keeps_attractor(a, (1, 1, 0), (1, 1, 0), DataVerdict.network()).kept
    True
    >>> no = DataVerdict(False, "drift failed", "metrics.json")
    >>> v = keeps_attractor(a, (1, 1, 0), (1, 1, 0), no)
    >>> v.kept, v.reason.split(";")[0]
    (False, "not kept: the data's own verdict is no attractor (drift failed)")
    """
    betti, held, want = (tuple(int(b) for b in x)
                         for x in (judged.betti, held_betti, attractor_betti))
    ratio = float(judged.distance_ratio)
    misses = _misses(data, betti, held, want, ratio)
    shaped = "; (b) and (c) are shaped by the model's manifold and are not judged"
    reason = ("not kept: " + "; ".join(misses) if misses else
              f"kept: the data is an attractor's and (a)'s states as generated read the "
              f"held-out Betti {held} at {ratio:.3g}x their normal distance") + shaped
    return KeptVerdict(data.attractor, data.reason, not misses, reason, JUDGED, MODEL_SHAPED,
                       betti, held, want, ratio, DISTANCE_TOLERANCE, float(judged.w2_ratio))
