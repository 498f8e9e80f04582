r"""Sleep as evidence: does the wake manifold persist without the covariate?

An attractor's manifold is the network's own, so it outlives its input: in sleep the bump still
exists, the cells that fire together awake still fire together, and the activity stays on the
manifold (Peyrache et al. 2015, Nat. Neurosci. 18: 569; Chaudhuri et al. 2019, Nat. Neurosci.
22: 1512). A population driven by its input alone has no reason to. Each recording made without
the covariate is decoded with the wake fit's cells, and three statistics are compared with the
**rolled control**: the same recording with every cell rolled in time by its own lag (at least
``min_shift`` seconds), which keeps each cell's rates and temporal statistics and destroys the
population's coordination.

- ``sleep co-firing``: across cell pairs, the correlation between the wake and the sleep
  pairwise count correlations (bins of ``cofiring_bin`` s, 0.1); p-value from ``rolls`` rolled
  controls; ``details`` also give the correlation of sleep co-firing with the cells' tuning
  similarity (the correlation of their wake tuning curves);
- ``sleep manifold``: in windows of ``window_s`` seconds with at least two spikes, the
  log-likelihood ratio per spike of the best bump position over the cells' mean rates, both
  with a free gain (the multinomial likelihood of *which* cells fired: sleep rates differ
  from wake rates) -- how well the population vectors fit the manifold; p-value from the
  rolled controls;
- ``sleep continuity`` (reported, never decides): the median step of the decoded bump between
  consecutive windows against the rolled control's. With tens of cells and 50 ms windows
  sleep's step is about half the rolled control's: weak evidence alone.

A test passes at ``p <= alpha`` (0.01); it fails when the control's spread was small enough to
see the effect (co-firing: the controls' 99th percentile below 0.5; manifold: at least 1,000
windows) and ``p`` is above ``alpha``; otherwise it is inconclusive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from _runkit import BadInput
from _runkit.results import Result, artifact

from ..decode import wrapped
from .rule import Evidence

__all__ = ["SleepDecoding", "check_sleep", "sleep_decoding", "cofiring", "rolled"]

#: the decoding grid's angles per axis
GRID = {"ring": 120, "torus": 32}
#: windows sampled at most for the manifold statistic and its controls
MAX_WINDOWS = 40000


def check_sleep(sleep, used, dt: float) -> list:
    """Sleep recordings as float arrays of the used cells, checked.

    Parameters
    ----------
    sleep : sequence of array_like, shape (T_s, cells)
        Counts per bin of ``dt`` (NaN: not observed).
    used : ndarray of bool, shape (cells,)
        The wake fit's used cells.
    dt : float
        Bin width (s).

    Returns
    -------
    list of ndarray, shape (T_s, used cells)
    """
    out = []
    if isinstance(sleep, np.ndarray):
        sleep = [sleep]
    for k, s in enumerate(sleep or ()):
        x = np.asarray(s, dtype=float)
        name = f"sleep[{k}]"
        if x.ndim != 2 or x.shape[1] != used.size:
            raise BadInput(f"{name}: counts of shape {x.shape}; expected (T, {used.size}), the "
                           "wake recording's cells")
        if np.isinf(x).any() or np.any(x[np.isfinite(x)] < 0):
            raise BadInput(f"{name}: counts must be finite and >= 0 (NaN: not observed)")
        if x.shape[0] * dt < 60:
            raise BadInput(f"{name}: {x.shape[0] * dt:.0f} s; the sleep tests need >= 60 s")
        out.append(x[:, used])
    return out


def rolled(x, seed: int, min_bins: int) -> np.ndarray:
    """Every column of ``x`` rolled by its own lag in ``[min_bins, T - min_bins]``.

    Examples
    --------
    >>> y = rolled(np.arange(20.0).reshape(10, 2), 0, 2)
    >>> sorted(y[:, 0].tolist()) == sorted(range(0, 20, 2))
    True
    """
    T = x.shape[0]
    lo = max(1, min(min_bins, T // 3))
    lags = np.random.default_rng(seed).integers(lo, T - lo + 1, size=x.shape[1])
    idx = (np.arange(T)[:, None] - lags[None, :]) % T
    return np.take_along_axis(x, idx, axis=0)


def _summed(x, k: int) -> np.ndarray:
    """Counts summed over consecutive runs of ``k`` bins (NaN bins as the cell's mean)."""
    mean = np.nanmean(x, axis=0)
    x = np.where(np.isfinite(x), x, mean)
    n = (x.shape[0] // k) * k
    return x[:n].reshape(-1, k, x.shape[1]).sum(1)


def _pair_corr(x) -> np.ndarray:
    c = np.corrcoef(x, rowvar=False)
    return c[np.triu_indices(x.shape[1], 1)]


def _corr(a, b) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3:
        return float("nan")
    return float(np.corrcoef(a[ok], b[ok])[0, 1])


def cofiring(wake, sleeps, dt: float, tuning_similarity=None, bin_s: float = 0.1,
             rolls: int = 199, min_shift: float = 10.0, alpha: float = 0.01,
             seed: int = 0) -> Evidence:
    """The ``sleep co-firing`` test (module docstring).

    Parameters
    ----------
    wake : ndarray, shape (T, cells)
        Wake counts.
    sleeps : list of ndarray, shape (T_s, cells)
        Sleep counts.
    dt : float
        Bin width (s).
    tuning_similarity : ndarray, shape (pairs,) or None
        The pairs' tuning similarity (upper triangle, row by row).
    bin_s : float
        Bin (s) of the pairwise correlations.
    rolls : int
        Rolled controls.
    min_shift : float
        Least lag (s) of a roll.
    alpha : float
        Level of the test.
    seed : int
        Seeds the rolls.

    Returns
    -------
    Evidence
    """
    k = max(1, int(round(bin_s / dt)))
    w = _pair_corr(_summed(wake, k))
    parts = [_summed(s, k) for s in sleeps]
    obs = _corr(w, _pair_corr(np.vstack(parts)))
    shift = max(1, int(round(min_shift / (k * dt))))
    null = np.array([_corr(w, _pair_corr(np.vstack([rolled(p, seed + 7919 * i + j, shift)
                                                    for j, p in enumerate(parts)])))
                     for i in range(rolls)])
    null = null[np.isfinite(null)]
    p = float((1 + np.count_nonzero(null >= obs)) / (1 + null.size))
    q99 = float(np.quantile(null, 0.99)) if null.size else float("nan")
    details = {"null_mean": float(null.mean()) if null.size else float("nan"), "null_q99": q99,
               "rolls": int(null.size), "bin_s": bin_s, "pairs": int(w.size)}
    if tuning_similarity is not None:
        details["with_tuning_similarity"] = _corr(np.asarray(tuning_similarity),
                                                  _pair_corr(np.vstack(parts)))
    if math.isfinite(obs) and p <= alpha:
        status = "pass"
        why = (f"wake and sleep co-firing correlate at {obs:.2f} (rolled: "
               f"{details['null_mean']:.2f})")
    elif math.isfinite(obs) and q99 < 0.5:
        status = "fail"
        why = f"co-firing correlation {obs:.2f} is within the rolled control's (p = {p:.2g})"
    else:
        status = "inconclusive"
        why = "too few pairs or spikes: the rolled control alone reaches 0.5"
    return Evidence("sleep co-firing", "specific", status, obs, alpha, p_value=p,
                    power=status != "inconclusive", reason=why, details=details, veto=True)


@dataclass(frozen=True)
class _Windows:
    counts: np.ndarray   # (W, cells) counts per window
    rows: np.ndarray     # windows kept (>= 2 spikes)


def _windows(x, k: int) -> _Windows:
    n = _summed(x, k)
    return _Windows(n, np.flatnonzero(n.sum(1) >= 2))


def _log_shares(cells, geometry):
    g = np.arange(GRID[geometry]) * 2 * np.pi / GRID[geometry]
    grid = g if geometry == "ring" else np.stack(np.meshgrid(g, g, indexing="ij"), -1)
    lam = np.maximum(cells.rates(grid).reshape(-1, cells.gain.size), 1e-9)
    shares = lam / lam.sum(1, keepdims=True)
    mean = lam.mean(0)
    return np.log(shares).T, np.log(mean / mean.sum()), grid.reshape(-1, *grid.shape[
        1 if geometry == "ring" else 2:])


def _llr_and_decode(n, log_q, log_qbar, block: int = 8192):
    """Per window: the best bump's log-likelihood ratio over the mean rates (free gain), and
    the best grid index. Windows go through in blocks, so memory stays at ``block`` rows of
    the grid whatever the recording's length."""
    best = np.empty(n.shape[0], dtype=np.intp)
    top = np.empty(n.shape[0])
    for start in range(0, n.shape[0], block):
        ll = n[start:start + block] @ log_q
        b = ll.argmax(1)
        best[start:start + block] = b
        top[start:start + block] = ll[np.arange(b.size), b]
    return top - n @ log_qbar, best


def _sampled(rows, most: int) -> np.ndarray:
    return rows if rows.size <= most else rows[np.linspace(0, rows.size - 1, most).astype(int)]


def _per_spike(n, log_q, log_qbar) -> float:
    llr, _ = _llr_and_decode(n, log_q, log_qbar)
    return float(llr.sum() / max(n.sum(), 1))


def manifold_test(windows, log_q, log_qbar, rolls: int = 99, min_windows: int = 1000,
                  shift: int = 200, alpha: float = 0.01, seed: int = 0) -> Evidence:
    """The ``sleep manifold`` test on windowed counts (module docstring)."""
    counts = np.vstack([w.counts for w in windows])
    rows = _sampled(np.flatnonzero(counts.sum(1) >= 2), MAX_WINDOWS)
    obs = _per_spike(counts[rows], log_q, log_qbar)
    null = []
    for i in range(rolls):
        r = np.vstack([rolled(w.counts, seed + 104729 * i + j, shift)
                       for j, w in enumerate(windows)])
        keep = _sampled(np.flatnonzero(r.sum(1) >= 2), MAX_WINDOWS)
        null.append(_per_spike(r[keep], log_q, log_qbar))
    null = np.array(null)
    p = float((1 + np.count_nonzero(null >= obs)) / (1 + rolls))
    details = {"null_mean": float(null.mean()), "null_sd": float(null.std()),
               "windows": int(rows.size), "rolls": rolls, "unit": "nats per spike"}
    if p <= alpha:
        status, why = "pass", (f"sleep activity fits the wake manifold at {obs:.3f} nats per "
                               f"spike against {null.mean():.3f} rolled")
    elif rows.size >= min_windows:
        status, why = "fail", (f"the fit to the wake manifold ({obs:.3f} nats per spike) is the "
                               f"rolled control's (p = {p:.2g})")
    else:
        status, why = "inconclusive", f"{rows.size} windows with two spikes or more; too few"
    return Evidence("sleep manifold", "specific", status, obs, float(null.mean()), p_value=p,
                    power=status != "inconclusive", reason=why, details=details, veto=True)


def _steps(best, rows, grid, geometry) -> np.ndarray:
    """Bump steps (deg; torus: phase-distance deg) between consecutive kept windows."""
    adjacent = np.flatnonzero(np.diff(rows) == 1)
    a, b = grid[best[adjacent]], grid[best[adjacent + 1]]
    d = np.abs(wrapped(b - a))
    return np.degrees(d if geometry == "ring" else np.hypot(d[:, 0], d[:, 1]))


def _decoded(w: _Windows, log_q, log_qbar, grid, geometry):
    """Decoded bump per window (NaN below two spikes) and the steps between kept windows."""
    _, best = _llr_and_decode(w.counts[w.rows], log_q, log_qbar)
    out = np.full((w.counts.shape[0],) + grid.shape[1:], np.nan)
    out[w.rows] = grid[best]
    return out, _steps(best, w.rows, grid, geometry)


@dataclass(frozen=True)
class SleepDecoding(Result):
    """Sleep recordings decoded with the wake fit, and the sleep tests.

    Attributes
    ----------
    window_s : float
        Decoding window (s).
    step_deg, rolled_step_deg : float
        Median step of the decoded bump between consecutive windows, sleep and rolled.
    seconds : float
        Sleep recorded.
    evidence : list of Evidence
        ``sleep co-firing``, ``sleep manifold``, ``sleep continuity``.
    decoded : list of ndarray (not in ``to_dict``)
        Per recording, the decoded bump per window (rad; NaN below two spikes).
    rolled_decoded : ndarray (not in ``to_dict``)
        The first recording's rolled control, decoded the same way.
    """

    window_s: float
    step_deg: float
    rolled_step_deg: float
    seconds: float
    evidence: list = field(default_factory=list, repr=False)
    decoded: list = artifact(default_factory=list)
    rolled_decoded: np.ndarray = artifact(default=None)

    def summary(self) -> dict:
        """JSON-ready: the window, steps, seconds and each test's status and statistic."""
        return {"window_s": self.window_s, "step_deg": self.step_deg,
                "rolled_step_deg": self.rolled_step_deg, "seconds": self.seconds,
                "tests": {e.name: {"status": e.status, "statistic": e.statistic,
                                   "p_value": e.p_value} for e in self.evidence}}

    def __repr__(self) -> str:
        tests = ", ".join(f"{e.name.split()[-1]} {e.status}" for e in self.evidence[:3])
        if len(self.evidence) > 3:
            tests += f", {len(self.evidence) - 3} more"
        return (f"SleepDecoding({self.seconds:.0f} s, step {self.step_deg:.0f} deg vs "
                f"{self.rolled_step_deg:.0f} rolled; {tests})")


def _continuity(steps, rolled_steps) -> Evidence:
    s, r = float(np.median(steps)), float(np.median(rolled_steps))
    return Evidence("sleep continuity", "reported", "pass" if s < 0.75 * r else "fail", s, r,
                    reason=f"median step {s:.0f} deg between windows against {r:.0f} rolled",
                    details={"unit": "deg", "pairs": int(steps.size)})


def _tuning_similarity(cells, geometry) -> np.ndarray:
    g = np.arange(GRID[geometry]) * 2 * np.pi / GRID[geometry]
    grid = g if geometry == "ring" else np.stack(np.meshgrid(g, g, indexing="ij"), -1)
    f = cells.own_rates(grid).reshape(-1, cells.gain.size)
    return _pair_corr(f)


def sleep_decoding(cells, geometry: str, wake, sleeps, dt: float, window: int = 5,
                   rolls: int = 99, min_shift: float = 10.0, seed: int = 0) -> SleepDecoding:
    """Decode sleep recordings with the wake fit's cells and run the sleep tests.

    Parameters
    ----------
    cells : RingCells or TorusCells
        The wake fit's cells.
    geometry : {'ring', 'torus'}
        The manifold.
    wake : ndarray, shape (T, cells)
        The wake counts the cells were fitted to.
    sleeps : list of ndarray, shape (T_s, cells)
        From :func:`check_sleep`.
    dt : float
        Bin width (s).
    window : int
        Bins per decoding window (non-overlapping).
    rolls : int
        Rolled controls of the co-firing and manifold tests.
    min_shift : float
        Least lag (s) of a roll.
    seed : int
        Seeds the rolls.

    Returns
    -------
    SleepDecoding
    """
    log_q, log_qbar, grid = _log_shares(cells, geometry)
    wins = [_windows(s, window) for s in sleeps]
    shift = max(1, int(round(min_shift / (window * dt))))
    decoded, steps = zip(*[_decoded(w, log_q, log_qbar, grid, geometry) for w in wins],
                         strict=True)
    control = _windows(rolled(sleeps[0], seed + 1, int(round(min_shift / dt))), window)
    rolled_decoded, rolled_steps = _decoded(control, log_q, log_qbar, grid, geometry)
    all_steps = np.concatenate(steps)
    evidence = [cofiring(wake, sleeps, dt, _tuning_similarity(cells, geometry),
                         rolls=2 * rolls + 1, min_shift=min_shift, seed=seed),
                manifold_test(wins, log_q, log_qbar, rolls=rolls, shift=shift, seed=seed),
                _continuity(all_steps, rolled_steps)]
    return SleepDecoding(window * dt, float(np.median(all_steps)),
                         float(np.median(rolled_steps)), float(sum(s.shape[0] for s in sleeps)
                                                               * dt),
                         evidence, list(decoded), rolled_decoded)
