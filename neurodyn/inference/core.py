r"""SEAL from recorded activity: place the cells, decode the bump, measure its dynamics, judge.

:func:`fit_activity` takes spike counts ``(T, cells)`` in bins of ``dt`` seconds and, when there
is one, the covariate (heading for a ring, position for a torus):

1. the coordinate: the covariate (torus: the lattice phases of the position, see
   :mod:`.torus`), or without it the ring coordinate of the activity itself
   (:func:`~.coordinate.ring_coordinate`), refined by placing the cells on it and decoding
   again, ``rounds`` times;
2. the cells: preferred angle or phase, gain, baseline, the shared bump profile and each
   cell's own curve (:mod:`.cells`, :mod:`.torus`); cells with no spike are left out
   (``used``);
3. decoding by maximum likelihood (:mod:`.decode`), cross-validated over ``folds`` contiguous
   blocks (cells fitted without the block, the block decoded), against the covariate or, without
   it, against the coordinate of the whole fit; with ``hold_out`` the last fraction of the
   recording is kept out of everything and decoded at the end;
4. the normal relaxation rates per mode (:mod:`.relaxation`), whose geometric mean times
   ``tau`` is the learned energy's ``kappa``;
5. the verdict (:mod:`.verdict`), two answers:

   - **tuned** (the gate: held-out decoding below a third of chance -- 30 degrees on a ring, a
     third of the mean chance phase distance on a torus): whether the fitted model (cells,
     profile, decoder, energy) is worth writing;
   - **attractor** (``True``, ``False`` or ``"inconclusive"``) from ``topology``
     (:mod:`.verdict.topology`), ``drift`` (the bump's diffusion about the covariate:
     :func:`drift_evidence`), ``fluctuations`` (:mod:`.verdict.fluctuations`) and, with sleep
     recordings, the sleep tests (:mod:`.verdict.sleep`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d, uniform_filter1d

from _runkit import BadInput
from _runkit.results import Result, artifact

from ..analysis.drift import DiffusionEstimate, diffusion_estimate
from .cells import place_ring_cells
from .coordinate import ring_coordinate
from .decode import _debiased, bump_frame, decode_ml, wrapped
from .relaxation import ModeRates, mode_amplitudes, relaxation_rates
from .torus import NoLattice
from .verdict.fluctuations import bump_frame_fluctuations, judged, lag1_parts
from .verdict.rule import Evidence, Verdict, combine
from .verdict.topology import EXPECTED_BETTI, SMOOTH, activity_topology, coverage_gap

__all__ = ["ActivityFit", "fit_activity", "GEOMETRIES", "EXPECTED_BETTI", "drift_evidence",
           "D_SMALLEST"]

GEOMETRIES = ("ring", "torus")
#: grid of decoded angles per axis
GRID = {"ring": 360, "torus": 64}
#: lags (s) of the diffusion fit
D_LAGS = (0.5, 1.0, 1.5, 2.0)
#: the smallest diffusion (rad^2/s per axis) the drift test decides about: a ``pass`` shows a
#: drift at least this large, a ``fail`` rules it out (a bump wandering about 28 degrees a
#: minute without landmarks); a population that follows its input can still show a small
#: positive D from its decoding noise
D_SMALLEST = 0.002
#: a cell with a tuning curve's mean vector length below this is not counted as tuned
TUNED_LENGTH = 0.2


@dataclass(frozen=True)
class Parts:
    """What the ring's or torus's fit gives the verdict."""

    cells: object
    decoded: np.ndarray
    errors: np.ndarray
    chance: float
    psi: np.ndarray
    reference: np.ndarray
    lattice: dict


@dataclass(frozen=True)
class ActivityFit(Result):
    """What :func:`fit_activity` found.

    Attributes
    ----------
    geometry : str
        ``"ring"`` or ``"torus"``.
    dt : float
        Bin width (s).
    covariate : bool
        Whether a covariate placed the cells.
    cv_error : float
        Median cross-validated decoding error (ring: rad; torus: m).
    chance : float
        The median error of a decoder that guesses, in the same unit.
    verdict : Verdict
        ``tuned``, ``attractor`` and every test (:mod:`.verdict`).
    rates : ModeRates
        Normal relaxation rates per mode.
    diffusion : DiffusionEstimate or None
        ``D`` about the covariate (None without one).
    tau : float
        The time constant (s) the rates are expressed in for kappa.
    lattice : dict
        Torus: ``spacing`` (m) and ``orientation`` (rad); empty for a ring.
    held_out : dict
        With ``hold_out``: the decoding of the held-out end (``median_error``, ``bins``,
        ``window``), else empty.
    sleep : object
        :class:`~.verdict.sleep.SleepDecoding` of the sleep recordings, or None.
    cells, used, coordinate, errors : (not in ``to_dict``)
        The placed cells (only those used), which input cells were used, the decoded bump
        (rad) and the cross-validated errors per bin.
    held_out_decoded, held_out_reference : ndarray (not in ``to_dict``)
        The held-out end's decoding and its covariate's angle or phases (None without).
    reference : ndarray (not in ``to_dict``)
        The coordinate the cells were placed on: the covariate's angle or phases, or the
        activity's own decoded ring coordinate.
    """

    geometry: str
    dt: float
    covariate: bool
    cv_error: float
    chance: float
    verdict: Verdict
    rates: ModeRates = artifact()
    diffusion: DiffusionEstimate | None = None
    tau: float = 0.1
    lattice: dict = artifact(default_factory=dict)
    held_out: dict = artifact(default_factory=dict)
    sleep: object = artifact(default=None)
    cells: object = artifact(default=None)
    used: np.ndarray = artifact(default=None)
    coordinate: np.ndarray = artifact(default=None)
    errors: np.ndarray = artifact(default=None)
    held_out_decoded: np.ndarray = artifact(default=None)
    held_out_reference: np.ndarray = artifact(default=None)
    reference: np.ndarray = artifact(default=None)

    @property
    def attractor(self):
        """``True``, ``False`` or ``"inconclusive"``."""
        return self.verdict.attractor

    @property
    def tuned(self) -> bool:
        """The cells are tuned: a model is worth writing."""
        return self.verdict.tuned

    @property
    def tests(self) -> dict:
        """``name -> Evidence``."""
        return self.verdict.tests

    @property
    def failed(self) -> list:
        """Names of the tests that failed."""
        return self.verdict.named("fail")

    @property
    def betti(self) -> tuple:
        """Betti numbers of the activity (empty when not measured)."""
        t = self.tests.get("topology")
        return tuple(t.statistic) if t is not None else ()

    @property
    def kappa(self) -> float:
        """Geometric mean of the rates of the modes that fluctuate measurably, times ``tau``
        (NaN when none does)."""
        r = self.rates.rate[np.isfinite(self.rates.rate) & (self.rates.rate > 0)
                            & self.rates.significant]
        return float(np.exp(np.mean(np.log(r))) * self.tau) if r.size else float("nan")

    def _errors(self) -> dict:
        if self.geometry == "torus":
            return {"cv_decoding_error_m": self.cv_error, "chance_error_m": self.chance}
        return {"cv_decoding_error_deg": math.degrees(self.cv_error),
                "chance_error_deg": math.degrees(self.chance)}

    def metrics(self) -> dict:
        """JSON-ready numbers of the fit."""
        v = self.verdict.to_dict()
        out = {"geometry": self.geometry, "tuned": self.tuned, "attractor": self.attractor,
               "reason": v["reason"], "failed": self.failed, "tests": v["tests"],
               "betti": list(self.betti), "expected_betti": list(EXPECTED_BETTI[self.geometry]),
               "covariate": self.covariate, "cells_used": int(self.used.sum()),
               "cells_missing": int((~self.used).sum()), **self._errors(),
               "relaxation": self.rates.to_dict(), "tau": self.tau, "kappa": self.kappa,
               "diffusion": None if self.diffusion is None else self.diffusion.to_dict()}
        if self.lattice:
            out["lattice"] = self.lattice
        if self.held_out:
            out["held_out"] = self.held_out
        if self.sleep is not None:
            out["sleep"] = self.sleep.summary()
        return out

    def __repr__(self) -> str:
        err = (f"{self.cv_error * 100:.1f} cm" if self.geometry == "torus"
               else f"{math.degrees(self.cv_error):.1f} deg")
        return (f"ActivityFit({self.geometry}, {int(self.used.sum())} cells, decoding {err}, "
                f"tuned={self.tuned}, attractor={self.attractor!r})")


def _check_inputs(counts, dt, geometry, covariate):
    x = np.asarray(counts, dtype=float)
    if x.ndim != 2 or x.shape[0] < 100 or x.shape[1] < 3:
        raise BadInput(f"counts: shape {x.shape}; expected (T >= 100, cells >= 3)")
    if np.isinf(x).any() or np.any(x[np.isfinite(x)] < 0):
        raise BadInput("counts: must be finite and >= 0 (NaN marks a cell not observed in a "
                       "bin)")
    if not (isinstance(dt, (int, float)) and math.isfinite(dt) and 0 < dt <= 1):
        raise BadInput(f"dt={dt!r}: must be a bin width in seconds, in (0, 1]")
    if geometry not in GEOMETRIES:
        raise BadInput(f"geometry={geometry!r}: choose one of {GEOMETRIES}")
    if covariate is not None:
        c = np.asarray(covariate, dtype=float)
        want = (x.shape[0],) if geometry == "ring" else (x.shape[0], 2)
        if c.shape != want or not np.all(np.isfinite(c)):
            what = "heading (rad)" if geometry == "ring" else "position (m)"
            raise BadInput(f"covariate: shape {c.shape}; a {geometry} takes a finite {what} "
                           f"of shape {want}")
        covariate = c
    used = np.nansum(x, axis=0) > 0
    if used.sum() < 3:
        raise BadInput(f"counts: {int(used.sum())} cells fired; at least 3 must")
    return x[:, used], used, covariate


def _ring_cells_and_coordinate(x, dt, covariate, bins, harmonics, window, smooth, rounds):
    grid = np.arange(GRID["ring"]) * 2 * np.pi / GRID["ring"]
    coord = covariate if covariate is not None else ring_coordinate(x, dt, smooth)
    for _ in range(1 if covariate is not None else rounds):
        cells = place_ring_cells(x, coord, dt, bins, harmonics)
        if covariate is None:
            coord = decode_ml(x, dt, cells.rates(grid), grid, window)
    cells = place_ring_cells(x, coord, dt, bins, harmonics)
    decoded = decode_ml(x, dt, cells.rates(grid), grid, window)
    return cells, coord if covariate is not None else decoded, decoded


def _cross_validated(x, dt, reference, folds, place, decode, distance):
    """Held-out decoding errors per bin: cells placed without each block, the block decoded."""
    T = x.shape[0]
    edges = np.linspace(0, T, folds + 1).astype(int)
    errors = np.full(T, np.nan)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        train = x.copy()
        train[lo:hi] = np.nan
        cells = place(train, reference)
        errors[lo:hi] = distance(decode(x[lo:hi], cells), reference[lo:hi])
    return errors


def _fit_ring_parts(x, dt, covariate, bins, harmonics, window, folds, smooth, rounds):
    """The ring's :class:`Parts`: ``psi`` the bump frame about the covariate, or each bin's
    own decoding without one."""
    grid = np.arange(GRID["ring"]) * 2 * np.pi / GRID["ring"]
    cells, reference, decoded = _ring_cells_and_coordinate(x, dt, covariate, bins, harmonics,
                                                           window, smooth, rounds)

    def place(train, ref):
        return place_ring_cells(train, ref, dt, bins, harmonics)

    def decode(xs, c):
        return decode_ml(xs, dt, c.rates(grid), grid, window)

    errors = _cross_validated(x, dt, reference, folds, place, decode,
                              lambda a, b: np.abs(wrapped(a - b)))
    if covariate is None:
        psi = decode_ml(x, dt, cells.rates(grid), grid, 1)
    else:
        psi = bump_frame(decoded, covariate, dt)
    return Parts(cells, decoded, errors, np.pi / 2, psi, reference, {})


def _angular_velocity(reference, dt, smooth: float = 0.1) -> np.ndarray:
    """The covariate's angular velocity (rad/s per axis), smoothed over ``smooth`` s."""
    ang = np.unwrap(np.asarray(reference, dtype=float), axis=0)
    w = np.gradient(ang, dt, axis=0)
    return gaussian_filter1d(w, max(smooth / dt, 1e-9), axis=0, mode="nearest")


def _unwrapped_residual(decoded, covariate, dt, smooth: float = 2.0) -> np.ndarray:
    """``decoded - covariate`` about its circular moving average over ``smooth`` seconds,
    unwrapped, with the deviations from that average clipped to a quarter turn: consecutive
    values then differ by less than half a turn, so a badly decoded bin cannot add a turn to
    every later one (the clipped outliers are white and go to the fit's intercept)."""
    r = wrapped(decoded - covariate)
    size = max(1, int(round(smooth / dt)))
    z = uniform_filter1d(np.exp(1j * r).real, size, axis=0, mode="nearest") + 1j * \
        uniform_filter1d(np.exp(1j * r).imag, size, axis=0, mode="nearest")
    centre = np.unwrap(np.angle(z), axis=0)
    return centre + np.clip(wrapped(r - centre), -0.49 * np.pi, 0.49 * np.pi)


def _diffusion(decoded, covariate, dt, block, seed):
    """``D`` of the residual ``decoded - covariate`` (per axis), blocks as independent runs;
    the decoder's bias as a function of the covariate, and the part of the residual linear in
    the covariate's angular velocity (cells that anticipate or lag it), removed first."""
    res = _unwrapped_residual(_debiased(decoded, covariate), covariate, dt)
    omega = _angular_velocity(covariate, dt)
    r2, w2 = res.reshape(res.shape[0], -1), omega.reshape(omega.shape[0], -1)
    for a in range(r2.shape[1]):
        wc = w2[:, a] - w2[:, a].mean()
        r2[:, a] -= wc * (wc @ (r2[:, a] - r2[:, a].mean())) / max(wc @ wc, 1e-300)
    res = r2.reshape(res.shape)
    per = int(round(block / dt))
    runs = res.shape[0] // per
    if runs < 2 or per * dt <= 2 * max(D_LAGS):
        return None
    phases = res[: runs * per].reshape(runs, per, *res.shape[1:]).swapaxes(0, 1)
    return diffusion_estimate(phases, np.arange(per) * dt, lags=D_LAGS, seed=seed)


def drift_evidence(estimate: DiffusionEstimate | None,
                   smallest: float = D_SMALLEST) -> Evidence:
    """The ``drift`` test: the bump diffuses about the covariate, at least at ``smallest``.

    ``pass`` when the 95% interval's lower end is above ``smallest``; ``fail`` when its upper
    end is below it (a drift of that size would have shown); ``inconclusive`` otherwise or
    without an estimate (a recording shorter than two blocks). Both decisions are about the
    same effect size: a decoded bump that follows its input shows a small positive D from
    decoding noise (0.0003-0.0008 rad^2/s on the independent feed-forward generators), which
    is not an attractor's drift.

    Parameters
    ----------
    estimate : DiffusionEstimate or None
        From the fit.
    smallest : float
        The smallest diffusion (rad^2/s) a ``fail`` rules out.

    Returns
    -------
    Evidence

    Examples
    --------
    >>> from neurodyn.analysis.drift import DiffusionEstimate
    >>> e = DiffusionEstimate(0.01, 0.008, 0.015, 0.95, ((0.01,),), (0.5,), (0.1,), 0.0, 50, 1000)
    >>> drift_evidence(e).status
    'pass'
    >>> small = DiffusionEstimate(0.0008, 0.0005, 0.0011, 0.95, ((0.0008,),), (0.5,), (0.1,),
    ...                           0.0, 50, 1000)
    >>> drift_evidence(small).status  # above 0, below the smallest drift decided about
    'fail'
    """
    if estimate is None:
        return Evidence("drift", "specific", "inconclusive", float("nan"), 0.0, power=False,
                        reason="the recording is too short for the diffusion's blocks")
    lo, hi = estimate.low, estimate.high
    if lo > smallest:
        status, why = "pass", f"D = {estimate.D:.3g} rad^2/s, interval [{lo:.3g}, {hi:.3g}] " \
            f"above {smallest:g}: the bump drifts about the covariate"
    elif hi < smallest:
        status, why = "fail", f"D interval [{lo:.3g}, {hi:.3g}] below {smallest:g} rad^2/s: " \
            "the bump follows the covariate"
    else:
        status, why = "inconclusive", f"D interval [{lo:.3g}, {hi:.3g}] holds {smallest:g}"
    return Evidence("drift", "specific", status, estimate.D, smallest, interval=[lo, hi],
                    power=status != "inconclusive", reason=why,
                    details={"smallest": smallest, "lags_s": list(estimate.lags)})


def _tuning_evidence(cv, chance, covariate: bool, unit: str) -> Evidence:
    scale = (lambda v: math.degrees(v)) if unit == "deg" else (lambda v: v)
    against = "the covariate" if covariate else "the activity's own coordinate"
    ok = bool(cv < chance / 3)
    why = (f"held-out decoding {scale(cv):.3g} {unit} against {against}, "
           f"{'below' if ok else 'not below'} a third of chance ({scale(chance / 3):.3g} "
           f"{unit})")
    return Evidence("tuning", "gate", "pass" if ok else "fail", float(cv), float(chance / 3),
                    reason=why, details={"chance": float(chance), "unit": unit})


def _own_on_grid(cells, geometry):
    """Each cell's own tuning, slope and (ring) curvature on the decoding grid:
    ``(grid..., cells)``, ``(grid..., cells, axes)`` and ``(grid..., cells)`` (torus: None)."""
    g = np.arange(GRID[geometry]) * 2 * np.pi / GRID[geometry]
    if geometry == "ring":
        return (cells.own_rates(g), cells.own_rates(g, derivative=1)[..., None],
                cells.own_rates(g, derivative=2))
    mesh = np.stack(np.meshgrid(g, g, indexing="ij"), -1)
    return cells.own_rates(mesh), cells.own_rates(mesh, derivative=True), None


def _interpolated(table, psi, size):
    """``table`` ``(size[, size], ...)`` linearly interpolated at angles ``psi`` (T[, 2])."""
    step = 2 * np.pi / size
    pos = np.mod(psi, 2 * np.pi) / step
    i0 = np.floor(pos).astype(int) % size
    f = pos - np.floor(pos)
    if psi.ndim == 1:
        w = f.reshape(-1, *([1] * (table.ndim - 1)))
        return (1 - w) * table[i0] + w * table[(i0 + 1) % size]
    out = 0.0
    for di in (0, 1):
        for dj in (0, 1):
            wi = f[:, 0] if di else 1 - f[:, 0]
            wj = f[:, 1] if dj else 1 - f[:, 1]
            w = (wi * wj).reshape(-1, *([1] * (table.ndim - 2)))
            out = out + w * table[(i0[:, 0] + di) % size, (i0[:, 1] + dj) % size]
    return out


def _own_about(cells, x, psi, dt, geometry):
    """The cells with each one's own curve estimated against ``psi`` itself, so that the
    residual about it has no mean at any ``psi`` (a curve estimated against another
    coordinate -- the covariate the bump drifts about, a smoother decoding -- differs from the
    rate at ``psi`` by a blur that follows the bump and would count as a fluctuation)."""
    from dataclasses import replace

    if geometry == "ring":
        from .cells import _coefficients, binned_curves

        K = cells.own.shape[1] - 1 if cells.own is not None else 12
        centres, curves = binned_curves(x, psi, dt, max(60, 4 * K + 4))
        return replace(cells, own=_coefficients(curves, centres, K))
    from .torus import _coefs, _curves

    H = cells.own.shape[1] // 2 if cells.own is not None else 8
    bins = 4 * H
    return replace(cells, own=_coefs(_curves(x, psi, dt, bins), bins, H))


def _residual(x, dt, parts, geometry):
    """The residual about each cell's own curve at ``psi``, the gain direction, the bump-frame
    angles, the weights, the slopes and the curvatures (:mod:`.verdict.fluctuations`)."""
    table, dtable, d2table = _own_on_grid(_own_about(parts.cells, x, parts.psi, dt, geometry),
                                          geometry)
    lo = table.reshape(-1, table.shape[-1]).min(0)
    gain = np.maximum(table.reshape(-1, table.shape[-1]).max(0) - lo, 1e-9)
    f = _interpolated(table, parts.psi, GRID[geometry])
    slope = _interpolated(dtable, parts.psi, GRID[geometry]) / gain[:, None]
    e = (x / dt - f) / gain
    u = (f - lo) / gain
    phi = (parts.cells.preferred[None] - parts.psi[:, None] if geometry == "ring"
           else parts.cells.preferred[None] - parts.psi[:, None, :])
    weights = gain**2 / np.maximum(f.mean(0), 1e-9)
    curv = None if d2table is None else _interpolated(d2table, parts.psi, GRID[geometry]) / gain
    return e, u, phi, weights, slope, curv


def _gain_path(x, dt, table, psi, geometry, smooth: float = 0.2):
    """Each bin's shared gain ``1 + gamma_t`` of the tuned part of the rates (weighted least
    squares over the cells), smoothed over ``smooth`` s."""
    f = _interpolated(table, psi, GRID[geometry])
    lo = table.reshape(-1, table.shape[-1]).min(0)
    tuned = f - lo
    w = 1.0 / np.maximum(f, 1e-9)
    ok = np.isfinite(x)
    num = np.sum(np.where(ok, (x / dt - lo) * tuned * w, 0.0), 1)
    den = np.maximum(np.sum(np.where(ok, tuned * tuned * w, 0.0), 1), 1e-300)
    g = uniform_filter1d(num / den, max(1, int(round(smooth / dt))), mode="nearest")
    return lo + np.maximum(g, 0.0)[:, None] * tuned


def _gain_null(x, dt, parts, geometry, modes, seed, surrogates: int = 3) -> list:
    """:func:`~.verdict.fluctuations.lag1_parts` of surrogates under a shared gain alone, where the
    bump is each bin's own decoding: each bin's spikes (their number kept) redrawn among the
    cells in proportion to their own curves at the decoded bump, the tuned part scaled by the
    bin's shared gain (smoothed over 0.2 s) and the baselines not; then decoded and split as
    the data were. The decoding's error, and its imprint on the modes, follows the spike
    count and the gain: the surrogates carry both, and no shape fluctuation."""
    rng = np.random.default_rng(seed + 9973)
    grid = np.arange(GRID[geometry]) * 2 * np.pi / GRID[geometry]
    own = _own_about(parts.cells, x, parts.psi, dt, geometry)
    rates = np.maximum(_gain_path(x, dt, _own_on_grid(own, geometry)[0], parts.psi, geometry),
                       1e-12)
    seen = np.isfinite(x)
    q = np.where(seen, rates, 0.0)
    q /= q.sum(1, keepdims=True)
    n = np.nansum(x, 1).astype(np.int64)
    null = []
    for _ in range(surrogates):
        y = rng.multinomial(n, q).astype(float)
        y[~seen] = np.nan
        psi = decode_ml(y, dt, parts.cells.rates(grid), grid, 1)
        sub = Parts(parts.cells, parts.decoded, parts.errors, parts.chance, psi,
                    parts.reference, parts.lattice)
        e, u, phi, weights, slope, curv = _residual(y, dt, sub, geometry)
        null.append(lag1_parts(e, u, phi, weights, slope=slope, curvature=curv, modes=modes))
    return null


def _fluctuations_and_rates(x, dt, parts, geometry, covariate, modes, seed):
    e, u, phi, weights, slope, curv = _residual(x, dt, parts, geometry)
    if covariate is None:
        evidence = judged(lag1_parts(e, u, phi, weights, slope=slope, curvature=curv,
                                     modes=modes),
                          null=_gain_null(x, dt, parts, geometry, modes, seed))
    else:
        evidence = bump_frame_fluctuations(e, u, phi, weights, slope=slope, modes=modes,
                                           omega=_angular_velocity(parts.reference, dt))
    amps, proj, names, reported = mode_amplitudes(e, phi, weights, modes)
    rates = relaxation_rates(amps, proj, e, weights, dt, names, reported, seed=seed)
    return evidence, rates


def _ring_gap(parts, geometry):
    if geometry != "ring":
        return None
    c = parts.cells
    z = np.nansum(np.where(np.isfinite(c.curves), c.curves, 0) * np.exp(1j * c.centres), 1)
    length = np.abs(z) / np.maximum(np.nansum(c.curves, 1), 1e-12)
    return coverage_gap(c.preferred, length >= TUNED_LENGTH)


def _held_out(cells, lattice, geometry, x, dt, covariate, window):
    """Decoding of the held-out end with the fitted cells: the decoded bump, the covariate's
    angle or phases there (None without one) and the median error against it (deg on a
    ring, m on a torus)."""
    from .files import decode_counts

    decoded = decode_counts(cells, geometry, x, dt, window)
    info = {"bins": int(x.shape[0]), "window": window}
    if covariate is None:
        return decoded, None, info
    if geometry == "ring":
        ref = np.mod(covariate, 2 * np.pi)
        err = math.degrees(float(np.median(np.abs(wrapped(decoded - ref)))))
        return decoded, ref, {"median_error_deg": err, **info}
    from ..spatial.phases import phase_to_position_delta, position_to_phase

    ref = np.mod(position_to_phase(covariate, lattice["spacing"], lattice["orientation"]),
                 2 * np.pi)
    d = phase_to_position_delta(wrapped(decoded - ref), lattice["spacing"],
                                lattice["orientation"])
    return decoded, ref, {"median_error_m": float(np.median(np.hypot(*d.T))), **info}


def _split_end(x, covariate, hold_out):
    if not (isinstance(hold_out, (int, float)) and 0 <= hold_out < 1):
        raise BadInput(f"hold_out={hold_out!r}: a fraction of the recording in [0, 1)")
    cut = x.shape[0] - int(round(hold_out * x.shape[0]))
    if hold_out and (cut < 100 or x.shape[0] - cut < 10):
        raise BadInput(f"hold_out={hold_out}: leaves {cut} bins to fit and "
                       f"{x.shape[0] - cut} to decode; need >= 100 and >= 10")
    cov_fit = None if covariate is None else covariate[:cut]
    cov_end = None if covariate is None else covariate[cut:]
    return x[:cut], cov_fit, x[cut:], cov_end


def fit_activity(counts, dt: float, geometry: str = "ring", covariate=None, *, sleep=(),
                 hold_out: float = 0.0, bins: int = 60, harmonics: int = 12, window: int = 5,
                 folds: int = 5, smooth: float | None = None, modes: int = 3, rounds: int = 3,
                 tau: float = 0.1, block: float = 30.0, spacing: float | None = None,
                 orientation: float | None = None, topology: bool = True,
                 seed: int = 0) -> ActivityFit:
    """Fit a ring or torus population's cells, dynamics and attractor verdict to spike counts.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Spike counts (or rates x dt) per bin; NaN where a cell was not observed.
    dt : float
        Bin width (s), at most 1.
    geometry : {'ring', 'torus'}
        The manifold looked for.
    covariate : array_like or None, shape (T,) or (T, 2)
        Heading (rad, ring) or position (m, torus); None: from the activity alone (ring only).
    sleep : sequence of array_like, shape (T_s, cells)
        Recordings without the covariate (sleep), in bins of ``dt``: decoded with the fitted
        cells and judged by the sleep tests (:mod:`.verdict.sleep`).
    hold_out : float
        Fraction of the recording, at its end, kept out of the fit and decoded with it.
    bins : int
        Sectors of the ring's tuning curves (torus: per axis, see :mod:`.torus`).
    harmonics : int
        Fourier terms of the profile.
    window : int
        Odd number of bins pooled per decoded bin.
    folds : int
        Blocks of the cross-validated decoding.
    smooth : float or None
        Smoothing (s) of the activity for its topology and first coordinate; None: the
        geometry's (:data:`~.verdict.topology.SMOOTH`).
    modes : int
        Highest harmonic of the ring's bump-frame modes.
    rounds : int
        Place-and-decode rounds without a covariate.
    tau : float
        Time constant (s) by which rates become kappa.
    block : float
        Seconds per block of the diffusion's bootstrap.
    spacing, orientation : float or None
        Torus: the module's spacing (m) and orientation (rad); None: estimated (:mod:`.torus`).
    topology : bool
        Run the topology test (needs ripser).
    seed : int
        Seeds the landmarks, the nulls and the bootstraps.

    Returns
    -------
    ActivityFit

    Raises
    ------
    BadInput
        Counts, ``dt``, the covariate, the sleep recordings or ``hold_out`` out of range.

    Examples
    --------
    >>> from neurodyn.datasets import ring_activity, rat_trajectory
    >>> tr = rat_trajectory(dt=0.02, duration=120.0, synthetic=True)
    >>> d = ring_activity(cells=40, recorded=30, trajectory=tr, seed=0)
    >>> fit = fit_activity(d.counts, d.dt, "ring", d.heading, topology=False)
    >>> fit.tuned, fit.cv_error < 0.3
    (True, True)
    """
    from .verdict.sleep import check_sleep, sleep_decoding

    x, used, covariate = _check_inputs(counts, dt, geometry, covariate)
    sleeps = check_sleep(sleep, used, dt)
    x, covariate, x_end, cov_end = _split_end(x, covariate, hold_out)
    smooth = SMOOTH[geometry] if smooth is None else smooth
    try:
        parts = _parts(x, dt, geometry, covariate, bins, harmonics, window, folds, smooth,
                       rounds, spacing, orientation)
    except NoLattice as err:  # nothing hexagonal to place the cells on: not tuned to a torus
        return _untuned(geometry, dt, used, str(err), tau)
    cv = float(np.nanmedian(parts.errors))
    evidence = [_tuning_evidence(cv, parts.chance, covariate is not None,
                                 "m" if geometry == "torus" else "deg")]
    if topology:
        evidence.append(activity_topology(x, dt, geometry, gap=_ring_gap(parts, geometry),
                                          smooth=smooth, seed=seed))
    D = None if covariate is None else _diffusion(parts.decoded, parts.reference, dt, block,
                                                  seed)
    if covariate is not None:
        evidence.append(drift_evidence(D))
    fluct, rates = _fluctuations_and_rates(x, dt, parts, geometry, covariate, modes, seed)
    evidence.append(fluct)
    slept = None
    if sleeps:
        slept = sleep_decoding(parts.cells, geometry, x, sleeps, dt, window, seed=seed)
        evidence.extend(slept.evidence)
    end, ref_end, held = (None, None, {}) if x_end.shape[0] == 0 else _held_out(
        parts.cells, parts.lattice, geometry, x_end, dt, cov_end, window)
    return ActivityFit(geometry, float(dt), covariate is not None, cv, parts.chance,
                       combine(evidence), rates, D, float(tau), parts.lattice, held, slept,
                       parts.cells, used, parts.decoded, parts.errors, end, ref_end,
                       parts.reference)


def _untuned(geometry, dt, used, why, tau) -> ActivityFit:
    """The fit of cells that could not be placed at all: the gate failed, nothing else ran."""
    gate = Evidence("tuning", "gate", "fail", float("nan"), float("nan"), reason=why)
    empty = np.zeros(0)
    rates = ModeRates((), empty, empty, empty, empty, float("nan"), 0,
                      significant=np.zeros(0, dtype=bool))
    return ActivityFit(geometry, float(dt), True, float("nan"), float("nan"), combine([gate]),
                       rates, None, float(tau), {}, {}, None, None, used)


def _parts(x, dt, geometry, covariate, bins, harmonics, window, folds, smooth, rounds,
           spacing, orientation) -> Parts:
    if geometry == "torus":
        from .torus import fit_torus_parts

        return Parts(**fit_torus_parts(x, dt, covariate, bins=bins, harmonics=harmonics,
                                       window=window, folds=folds, spacing=spacing,
                                       orientation=orientation))
    return _fit_ring_parts(x, dt, covariate, bins, harmonics, window, folds, smooth, rounds)
