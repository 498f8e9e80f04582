"""Simulating networks: batched, fixed-step (compiled or torchdiffeq), adaptive, or with noise.

.. math:: \\tau\\, du = (-u - \\nabla F(r) + b + \\textstyle\\sum_a v_a(t) T_a(r))\\, dt
          + \\tau\\, \\sigma\\, dW

Fixed-step runs (``euler``, ``midpoint``, ``rk4``; Euler-Maruyama with noise ``sigma > 0``) of
the learned Fourier energy, SEAL's energy and the quadratic families run compiled, the whole
loop in one call (:mod:`neurodyn.dynamics.fastpath`, needs numba); other energies, ``dopri5``
(adaptive) and non-CPU devices integrate with ``torchdiffeq.odeint``. Both paths use the same
stage formulas and agree to round-off. Every ``check_every`` steps the state is checked: a
state that is not finite or has left the range ``|u| <= state_limit`` stops the run with
:class:`NonFiniteStateError` naming the time, the step and what to change.
"""

from __future__ import annotations

import math
import warnings

import torch

from _runkit import BadInput, BadType, Diverged
from _runkit import progress as progress_bar
from _runkit.runtime import with_threads
from _runkit.seeds import check_seed

from ..geometry.populations import wrap_angle
from ..network import HopfieldNetwork
from . import fastpath
from .device import check_device, on_device
from .inputs import OrnsteinUhlenbeck, Velocity, reference_phase

__all__ = ["SimulationResult", "simulate", "NonFiniteStateError", "METHODS", "STATE_LIMIT"]

FIXED_METHODS = ("euler", "midpoint", "rk4")
ADAPTIVE_METHODS = ("dopri5",)
METHODS = FIXED_METHODS + ADAPTIVE_METHODS


#: the default sane range ``|u| <= STATE_LIMIT`` of a simulation's potentials
STATE_LIMIT = 1e6


class NonFiniteStateError(Diverged):
    """A simulation state left the sane range (not finite, or ``|u| > state_limit``): exit 1.

    Attributes
    ----------
    time : the simulation time of the check that found it.
    step : the step of that check.
    value : the largest ``|u|`` then (``inf`` or ``nan`` for a non-finite state).
    """

    def __init__(self, time: float, step: int, value: float = float("nan"),
                 limit: float = float("inf"), dt: float | None = None,
                 method: str | None = None):
        self.time, self.step, self.value = time, step, value
        what = ("became non-finite" if not math.isfinite(value)
                else f"left the sane range |u| <= {limit:g} (max |u| = {value:.3g})")
        change = f"reduce dt (now {dt:g})" if dt is not None else "reduce dt"
        if method in (None, "euler", "midpoint"):
            change += " or use a more stable method (method='rk4' or 'dopri5')"
        super().__init__(
            f"simulation diverged: the state {what} at t={time:.6g} (step {step}); "
            f"{change}, or check the network's parameters", step=step, parameter="dt")


class SimulationResult:
    """Saved states of a simulation.

    Attributes
    ----------
    t : ``(T,)`` times.
    u, r : ``(T, B, *shape)`` potentials and rates.
    energy : ``(T, B)`` Hopfield energy (the input term excluded).
    decoded : ``(T, B, dim)`` population-vector phase in ``[0, 2 pi)``.
    distance : ``(T, B)`` relative distance to the manifold (NaN without a manifold).
    reference : ``(T, B, dim)`` integrated input velocity from the decoded start (unwrapped), or
        ``None`` without velocity input.
    nfe : number of field evaluations.
    method, dt : the integration method and step.
    backend : ``"compiled"`` or ``"torch"``, the path that integrated the run.
    velocity, current : the run's inputs (the prepared :class:`~neurodyn.dynamics.inputs.Velocity`
        and the current ``I(t)``), ``None`` when absent; the energy audit reads them.

    ``r``, ``energy``, ``decoded`` and ``distance`` may be given as functions of no argument:
    they are then computed on first access (a run without diagnostics pays for none of them
    unless it reads them).
    """

    _LAZY = ("r", "energy", "decoded", "distance")
    velocity = None
    current = None

    def __init__(self, t: torch.Tensor, u: torch.Tensor, r, energy, decoded, distance,
                 reference: torch.Tensor | None, nfe: int, method: str, dt: float,
                 backend: str = "torch"):
        self.t, self.u, self.reference = t, u, reference
        self.nfe, self.method, self.dt, self.backend = nfe, method, dt, backend
        self._values = {"r": r, "energy": energy, "decoded": decoded, "distance": distance}

    def _value(self, name: str) -> torch.Tensor:
        v = self._values[name]
        if not isinstance(v, torch.Tensor):
            with torch.no_grad():
                v = v()
            self._values[name] = v
        return v

    r = property(lambda self: self._value("r"), doc="``(T, B, *shape)`` rates.")
    energy = property(lambda self: self._value("energy"), doc="``(T, B)`` Hopfield energy.")
    decoded = property(lambda self: self._value("decoded"), doc="``(T, B, dim)`` phases.")
    distance = property(lambda self: self._value("distance"),
                        doc="``(T, B)`` relative distance to the manifold.")

    def cpu(self) -> SimulationResult:
        """The same result with every tensor on the CPU (itself when it is there already)."""
        if self.u.device.type == "cpu":
            return self

        def move(x):
            return None if x is None else x.cpu()

        out = SimulationResult(move(self.t), move(self.u), move(self.r), move(self.energy),
                               move(self.decoded), move(self.distance), move(self.reference),
                               self.nfe, self.method, self.dt, self.backend)
        out.velocity, out.current = self.velocity, self.current
        return out

    def __repr__(self) -> str:
        return (f"SimulationResult(u={tuple(self.u.shape)}, method={self.method!r}, "
                f"dt={self.dt}, backend={self.backend!r}, nfe={self.nfe})")

    def to_pandas(self):
        """One row per saved time and run: ``t``, ``run``, ``energy``, ``distance`` and the
        decoded phase (``decoded``; a torus: ``decoded_1``, ``decoded_2``); needs pandas.

        Returns
        -------
        pandas.DataFrame
            ``T * B`` rows, time-major (the states themselves stay in ``u`` and ``r``).
        """
        from _runkit.results import require_pandas

        pd = require_pandas("SimulationResult.to_pandas()")
        run = self.cpu()
        steps, batch = run.u.shape[:2]
        cols = {"t": run.t.repeat_interleave(batch), "run": torch.arange(batch).repeat(steps),
                "energy": run.energy.reshape(-1), "distance": run.distance.reshape(-1)}
        decoded = run.decoded.reshape(steps * batch, -1)
        names = ["decoded"] if decoded.shape[1] == 1 else [
            f"decoded_{i + 1}" for i in range(decoded.shape[1])]
        cols.update({name: decoded[:, i] for i, name in enumerate(names)})
        return pd.DataFrame({k: v.detach().numpy() for k, v in cols.items()})

    def to_xarray(self):
        """The saved states as an ``xarray.Dataset`` with dimensions ``time``, ``run`` and
        ``neuron`` (a torus sheet flattened row by row) and ``axis`` (the decoded phase's
        coordinates); needs xarray (extra ``xarray``).

        Returns
        -------
        xarray.Dataset
            ``u`` and ``r`` (time, run, neuron); ``energy`` and ``distance`` (time, run);
            ``decoded`` and, with velocity input, ``reference`` (time, run, axis); coordinate
            ``time`` (the saved times ``t``); attributes ``method``, ``dt``, ``backend``,
            ``nfe`` and ``shape`` (the population's shape).
        """
        from _runkit.results import require_xarray

        xr = require_xarray("SimulationResult.to_xarray()")
        run = self.cpu()
        steps, batch = run.u.shape[:2]

        def arr(x, *tail):
            return x.detach().reshape(steps, batch, *tail).numpy()

        data = {"u": (("time", "run", "neuron"), arr(run.u, -1)),
                "r": (("time", "run", "neuron"), arr(run.r, -1)),
                "energy": (("time", "run"), arr(run.energy)),
                "distance": (("time", "run"), arr(run.distance)),
                "decoded": (("time", "run", "axis"), arr(run.decoded, -1))}
        if run.reference is not None:
            data["reference"] = (("time", "run", "axis"), arr(run.reference, -1))
        attrs = {"method": self.method, "dt": float(self.dt), "backend": self.backend,
                 "nfe": int(self.nfe), "shape": list(self.u.shape[2:])}
        return xr.Dataset(data, coords={"time": run.t.detach().numpy(),
                                        "run": range(batch)}, attrs=attrs)

    def path_error(self) -> torch.Tensor:
        """Wrapped error ``decoded - reference`` per axis, ``(T, B, dim)`` (needs velocity)."""
        if self.reference is None:
            raise BadInput("path_error: the run had no velocity input", param="path_error")
        return wrap_angle(self.decoded - self.reference)

    def arrays(self, squeeze_ring: bool = True) -> dict:
        """NumPy arrays for ``trajectory.npz``; ring phases are squeezed to ``(T, B)``."""
        out = {"t": self.t, "u": self.u, "r": self.r, "energy": self.energy,
               "decoded": self.decoded, "distance": self.distance}
        if self.reference is not None:
            out["reference"] = self.reference
        if squeeze_ring and self.decoded.shape[-1] == 1:
            out["decoded"] = self.decoded[..., 0]
            if self.reference is not None:
                out["reference"] = self.reference[..., 0]
        return {k: v.detach().cpu().numpy() for k, v in out.items()}


def _check_args(network, u0, duration, dt, method, noise, save_every):
    g = network.geometry
    if isinstance(u0, torch.Tensor) and u0.is_complex():  # a cast would drop the imaginary part
        raise BadType(f"u0: complex dtype {u0.dtype}; states are real", param="u0")
    g.check_state(u0, "u0")
    if u0.dim() != g.dim + 1:
        dims = ", ".join(map(str, g.shape))
        raise BadInput(f"u0: shape {tuple(u0.shape)}; expected (B, {dims})", param="u0")
    for key, v in (("duration", duration), ("dt", dt)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise BadInput(f"{key}={v!r}: must be a finite number > 0", param=key)
    if dt > duration:
        raise BadInput(f"dt={dt}: larger than duration={duration}", param="dt")
    if method not in METHODS:
        raise BadInput(f"method={method!r}: unknown; choose one of {METHODS}", param="method")
    if not (math.isfinite(noise) and noise >= 0):
        raise BadInput(f"noise={noise!r}: must be finite and >= 0", param="noise")
    if noise > 0 and method != "euler":
        raise BadInput(f"method={method!r}: noise > 0 needs method='euler' (Euler-Maruyama)",
                       param="method")
    if not (isinstance(save_every, int) and save_every >= 1):
        raise BadInput(f"save_every={save_every!r}: must be an integer >= 1", param="save_every")


BACKENDS = ("auto", "compiled", "torch")


def _check_run(check_every, state_limit, backend):
    if isinstance(check_every, bool) or not (isinstance(check_every, int) and check_every >= 1):
        raise BadInput(f"check_every={check_every!r}: must be an integer >= 1", param="check_every")
    if not (isinstance(state_limit, (int, float)) and state_limit > 0):
        raise BadInput(f"state_limit={state_limit!r}: must be a number > 0", param="state_limit")
    if backend not in BACKENDS:
        raise BadInput(f"backend={backend!r}: unknown; choose one of {BACKENDS}", param="backend")


def _choose_backend(network, method, backend, device, current):
    """``(plan or None, name)``: the compiled plan when the run can and may use it."""
    if backend == "torch":
        return None, "torch"
    reason = ""
    if current is not None:
        reason = "an external input current is not compiled"
    elif not fastpath.AVAILABLE:
        reason = "numba is not installed (a dependency of the package: pip install numba)"
        if backend == "auto":
            warnings.warn(f"simulate runs on the slower torch path: {reason}", stacklevel=4)
    elif method not in FIXED_METHODS:
        reason = f"method={method!r} is adaptive"
    elif torch.device(device).type != "cpu":
        reason = f"device={device!r} is not the CPU"
    else:
        plan, reason = fastpath.plan_for(network)
        if plan is not None:
            return plan, "compiled"
    if backend == "compiled":
        raise BadInput(f"backend='compiled': not available for this run: {reason}; "
                       "use backend='auto' or 'torch'", param="backend")
    return None, "torch"


@with_threads
def simulate(network: HopfieldNetwork, u0: torch.Tensor, duration: float, dt: float = 0.1,
             method: str | None = None, velocity: Velocity | None = None, noise: float = 0.0,
             save_every: int = 10, seed: int | None = None, rtol: float = 1e-7,
             atol: float = 1e-9, progress: bool | None = None,
             diagnostics: bool = True, dtype: torch.dtype = torch.float64,
             check_every: int = 50, state_limit: float = STATE_LIMIT, backend: str = "auto",
             device: str | torch.device = "cpu", current=None,
             reference: bool = True) -> SimulationResult:
    """Simulate a batch of states.

    Parameters
    ----------
    network : HopfieldNetwork
        The network.
    u0 : torch.Tensor, shape (B, *shape)
        Initial potentials.
    duration : float
        Total time (units of ``network.tau``'s unit).
    dt : float
        Integration step (the output step of ``dopri5``, which adapts its own).
    method : str or None
        ``euler``, ``midpoint``, ``rk4`` (default without noise) or ``dopri5``; noise needs
        ``euler`` (Euler-Maruyama, the default with noise).
    velocity : Velocity or None
        Optional velocity input (prepared here for the batch).
    noise : float
        ``sigma``, additive Gaussian noise on ``u`` per square root of time.
    save_every : int
        Steps between saved states (only those are kept).
    seed : int or None
        Seeds the noise and random velocities (required when either is used).
    rtol, atol : float
        Tolerances of ``dopri5``.
    progress : bool or None
        Show a progress bar (default: only on a terminal).
    diagnostics : bool
        Compute energy, decoded phase and distance for the saved states (without: the distance is
        NaN, and rates, energy and phases are computed when first read).
    dtype : torch.dtype
        Floating type of the integration (``torch.float32`` roughly halves the cost; the energy
        audit then needs a float32 tolerance).
    check_every : int
        Steps between checks of the state (also checked at every saved step).
    state_limit : float
        The sane range ``|u| <= state_limit``; a state beyond it (or not finite) stops the run with
        :class:`NonFiniteStateError`.
    backend : str
        ``auto`` (compiled when the run allows it), ``compiled`` (required) or ``torch``.
    device : str or torch.device
        ``cpu`` or ``cuda``; the network is copied there if it lives elsewhere, and the trajectory
        is returned on that device.

    current : callable or None
        External input ``I(t)``: a callable of the time returning a tensor broadcastable to
        ``(B, *shape)`` (e.g. a sensory cue, :mod:`neurodyn.spatial.cues`); such a run takes the
        torch path.
    reference : bool
        With a velocity, integrate it into ``result.reference`` (a loop over the steps); False
        leaves it None (a caller that decodes the states itself needs none).
    threads : int or None
        torch CPU threads during the call (None: 1, as the command line's ``--threads``,
        or the enclosing call's choice); the caller's count is restored afterwards.

    Returns
    -------
    SimulationResult
    """
    method = method or ("euler" if noise > 0 else "rk4")
    network, u0, device = _checked_start(network, u0, duration, dt, method, noise, save_every,
                                         dtype, check_every, state_limit, backend, device)
    g = network.geometry
    steps = int(round(duration / dt))
    if abs(steps * dt - duration) > 1e-9 * max(1.0, duration):
        raise BadInput(f"duration={duration}: must be a whole number of steps dt={dt}",
                       param="duration")
    needs_seed = noise > 0 or isinstance(velocity, OrnsteinUhlenbeck)
    if needs_seed and seed is None:
        raise BadInput("seed: required for noisy runs and random velocities", param="seed")
    gen = torch.Generator().manual_seed(check_seed("seed", seed)) if seed is not None else None
    if velocity is not None:
        velocity.prepare(duration, dt, u0.shape[0], g.dim, gen)
    if velocity is not None and network.transport is None:
        raise BadInput("velocity: this network has no transport; fit one first", param="velocity")
    plan, used = _choose_backend(network, method, backend, device, current)
    save_steps = list(range(0, steps + 1, save_every))
    if save_steps[-1] != steps:
        save_steps.append(steps)

    def diverged(step, u):
        big = float(u.abs().max()) if torch.isfinite(u).all() else float("nan")
        return NonFiniteStateError(step * dt, step, big, state_limit, dt, method)

    us, nfe = _integrate(network, plan, u0, steps, dt, method, velocity, current, noise, gen,
                         save_steps, save_every, check_every, state_limit, rtol, atol,
                         progress, diverged)
    times = torch.tensor(save_steps, dtype=torch.float64) * dt
    result = SimulationResult(
        times.to(device), us, lambda: network.rates(us), lambda: network.energy(us),
        lambda: g.decode(result.r), lambda: _distance(network, us, diagnostics), None, nfe,
        method, dt, used)
    result.velocity, result.current = velocity, current
    if diagnostics:
        for name in SimulationResult._LAZY:
            getattr(result, name)
    if velocity is not None and reference:
        # unwrap the start so that reference and decoded differ only by the error
        result.reference = reference_phase(velocity, times, dt,
                                           result.decoded[0].to(torch.float64).cpu()).to(device)
    return result


def _checked_start(network, u0, duration, dt, method, noise, save_every, dtype, check_every,
                   state_limit, backend, device):
    """Check :func:`simulate`'s arguments (``BadInput`` naming the first bad one); return the
    network and the start states (in ``dtype`` when floating) on the checked device, and it."""
    if dtype not in (torch.float32, torch.float64):
        raise BadInput(f"dtype={dtype}: choose torch.float32 or torch.float64", param="dtype")
    _check_run(check_every, state_limit, backend)
    device = check_device(device)
    u0 = torch.as_tensor(u0)
    if u0.is_floating_point():
        u0 = u0.to(dtype)
    _check_args(network, u0, duration, dt, method, noise, save_every)
    return on_device(network, device), u0.to(device), device


def _integrate(network, plan, u0, steps, dt, method, velocity, current, noise, gen, save_steps,
               save_every, check_every, state_limit, rtol, atol, progress, diverged):
    """Run ``steps`` steps on the compiled ``plan`` (None: the torch path) under a progress bar;
    return the saved states ``(T, B, *shape)`` and the number of field evaluations. A state
    leaving ``|u| <= state_limit`` raises ``diverged(step, state)``."""
    bar = progress_bar(total=steps, desc="simulate", enabled=progress)
    try:
        if plan is not None:
            us, fail, bad = fastpath.run_plan(plan, u0, steps, dt, method, save_every,
                                              check_every, state_limit, velocity, noise, gen,
                                              bar.update)
            if fail is not None:
                raise diverged(fail, bad)
            return us, steps * len(fastpath.STAGES[method])
        return _torch_run(network, u0, steps, dt, method, velocity, current, noise, gen,
                          save_steps, check_every, state_limit, rtol, atol, bar, diverged)
    finally:
        bar.close()


def _distance(network, us, diagnostics):
    if network.manifold is not None and diagnostics:
        return network.manifold.distance(us).distance
    return torch.full(us.shape[:2], float("nan"), dtype=us.dtype, device=us.device)


def _torch_run(network, u0, steps, dt, method, velocity, current, noise, gen, save_steps,
               check_every, limit, rtol, atol, bar, diverged):
    """The torchdiffeq / torch Euler-Maruyama path: saved states ``(T, B, *shape)`` and nfe."""
    from torchdiffeq import odeint  # 1.5 s of imports (scipy.integrate), only on this path

    g = network.geometry
    batch = u0.shape[0]
    nfe = 0

    def func(t, u):
        nonlocal nfe
        nfe += 1
        v = velocity(float(t)) if velocity is not None else None
        if v is not None:
            v = v.to(u.dtype).to(u.device).expand(batch, g.dim)
        c = current(float(t)) if current is not None else None
        du = network.field(u, v, current=None if c is None else c.to(u.dtype).to(u.device))
        if method in ADAPTIVE_METHODS and not torch.isfinite(du.sum()):
            # an adaptive step size would shrink without end on a non-finite field
            tt = float(t)
            raise diverged(int(math.floor(tt / dt + 1e-9)), u)
        return du

    def check(step, u):
        if not bool((u.abs() <= limit).all()):
            raise diverged(step, u)

    # integrate between consecutive stops: saved steps and every check_every-th step
    stops = sorted(set(save_steps) | set(range(0, steps + 1, check_every)))
    wanted = set(save_steps)
    states = [u0.detach().clone()]
    u = u0.detach().clone()
    with torch.no_grad():
        for a, b in zip(stops[:-1], stops[1:], strict=True):
            if noise > 0:
                for i in range(a, b):
                    du = func(torch.tensor(i * dt), u)
                    xi = torch.randn(u.shape, generator=gen, dtype=u.dtype).to(u.device)
                    u = u + dt * du + noise * math.sqrt(dt) * xi
            else:
                grid = torch.arange(a, b + 1, dtype=u.dtype, device=u.device) * dt
                if method in FIXED_METHODS:
                    out = odeint(func, u, grid[[0, -1]], method=method,
                                 options={"grid_constructor": lambda f, y0, t, grid=grid: grid})
                else:
                    out = odeint(func, u, grid[[0, -1]], method=method, rtol=rtol, atol=atol)
                u = out[-1]
            check(b, u)
            if b in wanted:
                states.append(u.clone())
            bar.update(b - a)
    return torch.stack(states), nfe
