r"""SEAL from recorded activity: place the cells, decode the bump, measure its dynamics, decide.

:func:`fit_activity` takes spike counts ``(T, cells)`` in bins of ``dt`` seconds and, when there
is one, the covariate (heading for a ring, position for a torus):

1. the manifold's topology: Betti numbers of the smoothed activity
   (:func:`~.coordinate.activity_betti`);
2. the coordinate: the covariate (torus: the lattice phases of the position, see
   :mod:`.torus`), or without it the ring coordinate of the activity itself
   (:func:`~.coordinate.ring_coordinate`), refined by placing the cells on it and decoding
   again, ``rounds`` times;
3. the cells: preferred angle or phase, gain, baseline and the shared bump profile
   (:mod:`.cells`, :mod:`.torus`); cells with no spike are left out (``used``);
4. decoding by maximum likelihood (:mod:`.decode`), cross-validated over ``folds`` contiguous
   blocks (cells fitted without the block, the block decoded), against the covariate or, without
   it, against the coordinate of the whole fit;
5. the normal relaxation rates per mode (:mod:`.relaxation`; the residual about the bump at
   :func:`~.decode.bump_frame` with a covariate, at each bin's decoding without) and the
   bump's diffusion about the
   covariate (:func:`neurodyn.analysis.drift.diffusion_estimate` on the residual
   ``psi_hat - covariate`` of the windowed decoding, less the decoder's bias as a function of
   the covariate, cut into blocks of ``block`` seconds, lags 0.5 .. 2 s: past the decoding
   error's own correlations; an anchoring pull of rate ``a`` lowers the slope by about
   ``a L / 2``);
6. the verdict: ``attractor`` is true when every test passes -- ``topology`` (the Betti numbers
   of the geometry), ``decoding`` (held-out median error below a third of chance: 30 degrees on
   a ring, a third of the mean chance phase distance on a torus) and ``fluctuations`` (at least
   half the lag-1 autocovariance of the residual in the few bump-frame modes: independent cells,
   as in feed-forward tuning, put ``modes / cells`` there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import uniform_filter1d

from ..analysis.drift import DiffusionEstimate, diffusion_estimate
from ..analysis.topology import ATTRACTOR_BETTI
from .cells import place_ring_cells, profile_values
from .coordinate import SMOOTH, activity_betti, ring_coordinate
from .decode import _debiased, bump_frame, decode_ml, wrapped
from .relaxation import ModeRates, mode_amplitudes, relaxation_rates

__all__ = ["ActivityFit", "fit_activity", "GEOMETRIES", "EXPECTED_BETTI", "FLUCTUATION_SHARE"]

GEOMETRIES = ("ring", "torus")
#: Betti numbers of the manifold of each geometry
#: the ring's topology is read to dimension 1, the torus's to dimension 2
EXPECTED_BETTI = {"ring": ATTRACTOR_BETTI[1][:2], "torus": ATTRACTOR_BETTI[2]}
#: least share of the lag-1 residual autocovariance the bump-frame modes must carry
FLUCTUATION_SHARE = 0.5
#: grid of decoded angles per axis
GRID = {"ring": 360, "torus": 64}
#: lags (s) of the diffusion fit
D_LAGS = (0.5, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class ActivityFit:
    """What :func:`fit_activity` found.

    Attributes
    ----------
    geometry : str
        ``"ring"`` or ``"torus"``.
    dt : float
        Bin width (s).
    cells : RingCells or TorusCells
        The placed cells (only those used).
    used : ndarray, shape (cells,)
        Which input cells were used (False: no spike).
    coordinate : ndarray, shape (T,) or (T, 2)
        The bump's decoded position (windowed maximum likelihood), radians.
    covariate : bool
        Whether a covariate placed the cells.
    errors : ndarray, shape (T,)
        Held-out decoding error per bin (ring: rad; torus: the position error of the phase
        error, m).
    cv_error : float
        Median of ``errors``.
    chance : float
        The median error of a decoder that guesses, in the same unit.
    betti : tuple of int
        Betti numbers of the activity (empty when not measured).
    rates : ModeRates
        Normal relaxation rates per mode.
    diffusion : DiffusionEstimate or None
        ``D`` about the covariate (None without one).
    tests : dict
        ``name -> {"passed", "value", "threshold"}``.
    tau : float
        The time constant (s) the rates are expressed in for kappa.
    lattice : dict
        Torus: ``spacing`` (m) and ``orientation`` (rad) of the module; empty for a ring.
    """

    geometry: str
    dt: float
    cells: object
    used: np.ndarray
    coordinate: np.ndarray
    covariate: bool
    errors: np.ndarray
    cv_error: float
    chance: float
    betti: tuple
    rates: ModeRates
    diffusion: DiffusionEstimate | None
    tests: dict
    tau: float
    lattice: dict

    @property
    def attractor(self) -> bool:
        """Every test passed."""
        return all(t["passed"] for t in self.tests.values())

    @property
    def failed(self) -> list:
        """Names of the failed tests."""
        return [k for k, t in self.tests.items() if not t["passed"]]

    @property
    def kappa(self) -> float:
        """Geometric mean of the rates of the modes that fluctuate measurably, times ``tau``
        (the fixed kappa of a fit)."""
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
        out = {"geometry": self.geometry, "attractor": self.attractor, "failed": self.failed,
               "tests": self.tests, "betti": list(self.betti),
               "expected_betti": list(EXPECTED_BETTI[self.geometry]),
               "covariate": self.covariate, "cells_used": int(self.used.sum()),
               "cells_missing": int((~self.used).sum()),
               **self._errors(),
               "relaxation": self.rates.to_dict(), "tau": self.tau, "kappa": self.kappa,
               "diffusion": None if self.diffusion is None else self.diffusion.to_dict()}
        if self.lattice:
            out["lattice"] = self.lattice
        return out


def _check_inputs(counts, dt, geometry, covariate):
    x = np.asarray(counts, dtype=float)
    if x.ndim != 2 or x.shape[0] < 100 or x.shape[1] < 3:
        raise ValueError(f"counts: shape {x.shape}; expected (T >= 100, cells >= 3)")
    if np.any(x[np.isfinite(x)] < 0):
        raise ValueError("counts: must be >= 0 (NaN marks a cell not observed in a bin)")
    if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt={dt!r}: must be a finite number > 0 (seconds)")
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry={geometry!r}: choose one of {GEOMETRIES}")
    if covariate is not None:
        c = np.asarray(covariate, dtype=float)
        want = (x.shape[0],) if geometry == "ring" else (x.shape[0], 2)
        if c.shape != want or not np.all(np.isfinite(c)):
            what = "heading (rad)" if geometry == "ring" else "position (m)"
            raise ValueError(f"covariate: shape {c.shape}; a {geometry} takes a finite {what} "
                             f"of shape {want}")
        covariate = c
    used = np.nansum(x, axis=0) > 0
    if used.sum() < 3:
        raise ValueError(f"counts: {int(used.sum())} cells fired; at least 3 must")
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


def _ring_residual(x, dt, cells, psi):
    phi = cells.preferred[None, :] - psi[:, None]
    residual = (x / dt - cells.baseline) / cells.gain - profile_values(cells.profile, -phi)
    return residual, phi


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
    the decoder's bias as a function of the covariate removed first."""
    if covariate is None:
        return None
    res = _unwrapped_residual(_debiased(decoded, covariate), covariate, dt)
    per = int(round(block / dt))
    runs = res.shape[0] // per
    if runs < 2 or per * dt <= 2 * max(D_LAGS):
        return None
    phases = res[: runs * per].reshape(runs, per, *res.shape[1:]).swapaxes(0, 1)
    return diffusion_estimate(phases, np.arange(per) * dt, lags=D_LAGS, seed=seed)


def fit_activity(counts, dt: float, geometry: str = "ring", covariate=None, *, bins: int = 60,
                 harmonics: int = 12, window: int = 5, folds: int = 5,
                 smooth: float | None = None,
                 modes: int = 3, rounds: int = 3, tau: float = 0.1, block: float = 30.0,
                 spacing: float | None = None, orientation: float | None = None,
                 topology: bool = True, seed: int = 0) -> ActivityFit:
    """Fit a ring or torus attractor's cells, dynamics and verdict to spike counts.

    Parameters
    ----------
    counts : array_like, shape (T, cells)
        Spike counts (or rates x dt) per bin; NaN where a cell was not observed.
    dt : float
        Bin width (s).
    geometry : {'ring', 'torus'}
        The manifold looked for.
    covariate : array_like or None, shape (T,) or (T, 2)
        Heading (rad, ring) or position (m, torus); None: from the activity alone (ring only).
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
        geometry's (:data:`~.coordinate.SMOOTH`: 0.1 s ring, 0.2 s torus).
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
        Measure the Betti numbers (needs ripser); False skips the test.
    seed : int
        Seeds the landmarks and the bootstraps.

    Returns
    -------
    ActivityFit

    Examples
    --------
    >>> from neurodyn.datasets import ring_activity, rat_trajectory
    >>> tr = rat_trajectory(dt=0.02, duration=120.0, synthetic=True)
    >>> d = ring_activity(cells=40, recorded=30, trajectory=tr, seed=0)
    >>> fit = fit_activity(d.counts, d.dt, "ring", d.heading, topology=False)
    >>> fit.attractor, fit.cv_error < 0.3
    (True, True)
    """
    x, used, covariate = _check_inputs(counts, dt, geometry, covariate)
    if geometry == "torus":
        from .torus import fit_torus_parts

        parts = fit_torus_parts(x, dt, covariate, bins=bins, harmonics=harmonics, window=window,
                                folds=folds, spacing=spacing, orientation=orientation)
    else:
        parts = _fit_ring_parts(x, dt, covariate, bins, harmonics, window, folds,
                                SMOOTH["ring"] if smooth is None else smooth,
                                rounds, modes)
    cells, coord, errors, chance, residual, phi, psi, lattice, reference = parts
    weights = cells.gain**2 / np.maximum(np.mean(cells.rates(psi[:: max(1, len(psi) // 5000)]),
                                                 0), 1e-9)
    amps, proj, names, reported = mode_amplitudes(residual, phi, weights, modes)
    rates = relaxation_rates(amps, proj, residual, weights, dt, names, reported, seed=seed)
    betti = activity_betti(x, dt, geometry, smooth, seed=seed) if topology else ()
    cv = float(np.nanmedian(errors))
    tests = _tests(betti if topology else None, geometry, cv, chance, rates,
                   covariate is not None)
    D = _diffusion(coord, reference, dt, block, seed)
    return ActivityFit(geometry, float(dt), cells, used, coord, covariate is not None, errors,
                       cv, chance, tuple(betti), rates, D, tests, float(tau), lattice)


def _tests(betti, geometry, cv, chance, rates, covariate: bool) -> dict:
    """The verdict's tests (module docstring); without a covariate the held-out decoding is
    compared with the fit's own coordinate, a self-consistency check that is not a test."""
    tests = {}
    if betti is not None:
        tests["topology"] = {"passed": tuple(betti) == EXPECTED_BETTI[geometry],
                             "value": list(betti), "threshold": list(EXPECTED_BETTI[geometry])}
    if covariate:
        tests["decoding"] = {"passed": bool(cv < chance / 3), "value": cv,
                             "threshold": chance / 3}
    significant = rates.lag1_total > 3 * rates.lag1_se
    tests["fluctuations"] = {
        "passed": bool(significant and rates.fraction >= FLUCTUATION_SHARE),
        "value": float(rates.fraction) if significant else 0.0,
        "threshold": FLUCTUATION_SHARE,
        "lag1_autocovariance": [float(rates.lag1_total), float(rates.lag1_se)]}
    return tests


def _fit_ring_parts(x, dt, covariate, bins, harmonics, window, folds, smooth, rounds, modes):
    """Cells, decoded coordinate, held-out errors, chance, residual, bump-frame angles, the
    per-bin decode, the lattice (none) and the covariate the diffusion is measured about."""
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
    residual, phi = _ring_residual(x, dt, cells, psi)
    return cells, decoded, errors, np.pi / 2, residual, phi, psi, {}, covariate
