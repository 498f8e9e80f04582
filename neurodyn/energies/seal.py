"""SEAL's full energy family and the derivation of what it must supply.

``F = S + P + L``: a spectral energy ``S`` (per-mode functions of ``|z_k|^2``,
:class:`~neurodyn.energies.spectral.LearnedFourierEnergy`), a pointwise energy
``P = sum_i h(r_i)`` (:class:`~neurodyn.energies.pointwise.PointwiseEnergy`) and phase-locking
terms ``L`` (:class:`~neurodyn.energies.coupling.PhaseLockEnergy`). All three are invariant under
the manifold's translations, so every translate of a fixed point is a fixed point.

Derivation (dynamics ``tau du/dt = -u - grad F(r) + b``, ``r = phi(u)``; manifold ``u*(psi)``,
``r* = phi(u*)``, tangent ``e = du*/dpsi``, ``D = diag(phi'(u*))`` so that ``De = dr*/dpsi``):

1. *Fixed points.* ``grad F(r*) = b - u*``. ``S``'s gradient is the spectral filter
   ``-2 idft(f'_k z_k)``, so with ``t = b - u* - grad P(r*) - grad L(r*)`` the condition holds
   mode by mode when ``f'_k(p*_k) = -Re(t_k conj z*_k) / (2 |z*_k|^2)`` (``t`` and the bump are
   even about its centre, so the ratio is real). This slope is imposed exactly on every mode
   (:meth:`SealEnergy.refresh`); it is linear in the parameters of ``P`` and ``L``, and holds
   for every ``psi`` by invariance.
2. *The tangent stays neutral exactly.* Differentiating ``grad F(r*(psi)) = b - u*(psi)`` in
   ``psi`` gives ``H De = -e`` (``H`` the Hessian of ``F`` at ``r*``), hence
   ``J e = -(e + H D e)/tau = 0`` and ``J^T (De) = 0``: the right null vector is the tangent,
   the left one ``De``. No parameter can move this eigenvalue from 0.
3. *Normal spectrum.* ``J = -(I + H D)/tau`` is similar to the symmetric
   ``-(I + D^{1/2} H D^{1/2})/tau``. All normal eigenvalues equal ``-kappa/tau`` iff
   ``I + D^{1/2} H D^{1/2} = kappa (I - q q^T)``, ``q = D^{1/2} e / |D^{1/2} e|``, i.e.

   .. math:: H = (\\kappa - 1) D^{-1} - \\kappa\\, e e^T / (e^T D e)

   (torus: ``E (E^T D E)^{-1} E^T`` with the two tangents ``E``).
4. *Who supplies what.* ``P`` has the diagonal Hessian ``h''(r*_i)``; with
   ``h' = (kappa - 1) phi^{-1}`` it is exactly ``(kappa - 1) D^{-1}`` and its gradient
   ``(kappa - 1) u*`` is band-limited, so ``S`` keeps slopes only on the bump's modes. ``S`` is
   block diagonal in the modes: on mode ``k`` the phase directions feel ``-2 N m_k f'_k`` (fixed
   by step 1), the radial direction adds ``-4 N m_k f''_k p*_k`` (free). Ring with
   ``u* = a + c cos``: ``t`` has modes 0 and 1 only, so ``f'_k = 0`` for ``k >= 2`` and the
   remaining rank-one term ``-kappa e e^T/(e^T D e)`` lives on mode 1's phase (its size is the
   one step 2 forces); the target asks ``f''_k`` to cancel the radial stiffness of modes 0, 1 and
   vanish elsewhere. Hex torus: the three fundamental modes share one slope, so ``S`` stiffens
   all three phase directions alike, but only the two tangent combinations should be; the third,
   ``arg z_(1,0) - arg z_(0,1) - arg z_(1,-1)``, is released by the triad term of ``L``, whose
   Hessian on the manifold is rank one along exactly that combination (its gradient and radial
   Hessian vanish there). Closed form of the solution: ``F = (kappa - 1) sum_i G(r_i) +
   kappa F_1`` with ``F_1`` the ``kappa = 1`` solution, i.e. the ``kappa = 1`` network run
   ``kappa`` times faster; the fit is checked against it, it is not built in. Beyond the
   linearisation, ``F_1 = -max_psi <r, u*(psi)> + b sum_i r_i`` has the gradient
   ``-u*(psi_hat) + b`` (envelope theorem, ``psi_hat`` of step 5), so the field is
   ``-kappa (u - u*(psi_hat))`` at every state; on the ring, and on the torus with its triad
   phase locked, the maximum is linear in the amplitudes ``|z_k|`` of the bump's modes. That is
   why ``S``'s polynomials are in ``|z_k|``
   (:class:`~neurodyn.energies.amplitude.AmplitudeFourierEnergy`): the anchored first term is
   already exact, far from ``M`` too (a shrunken bump), where polynomials in ``|z_k|^2`` miss.
5. *Energy and metric.* ``grad_u E = D (u + grad F - b) = -tau D du/dt``: the dynamics is the
   gradient flow of ``E`` in the metric ``D``, and on ``M``
   ``grad_u^2 E = D (I + H D) = kappa (D - De (De)^T / (e^T D e))``. So
   ``E - E(M) = kappa/2 ||delta||_D^2 + O(delta^3)`` with ``||delta||_D^2 = delta^T D delta``
   and ``delta`` ``D``-orthogonal to the tangent. The nearest point in this metric is the
   minimiser of the leak's Bregman divergence
   ``B(u, psi) = sum_i G(r_i) - G(r*_i) - u*_i (r_i - r*_i)`` (its ``psi``-derivative is
   ``-(De).delta``), which maximises the overlap ``<r, u*(psi)>``; the target energy is
   ``E* = kappa B`` (``= kappa/2 ||delta||_D^2`` to second order) and the target field
   ``-kappa (u - u*(psi_hat)) / tau``.
"""

from __future__ import annotations

import torch

from _runkit import BadInput, check_int

from ..activation import Activation, make_activation
from ..geometry.populations import Geometry
from .amplitude import AmplitudeFourierEnergy
from .base import InteractionEnergy
from .coupling import PhaseLockEnergy
from .neural import MLPEnergy
from .pointwise import PointwiseEnergy
from .spectral import LearnedFourierEnergy

VARIABLES = ("amplitude", "power")

__all__ = ["SealEnergy"]


class SealEnergy(InteractionEnergy):
    """``F = S + P + L`` with the fixed points of a target bump imposed exactly.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    activation : Activation
        The network's rate function.
    u0 : torch.Tensor or None, shape (*geometry.shape)
        Target bump at ``psi = 0``, shape ``geometry.shape`` (``None``: to be loaded from a state
        dict).
    bias : float
        The network's uniform input ``b``.
    degree : int
        Polynomial terms per mode of ``S``.
    curvature_bandwidth : int
        Modes with ``max_a |k_a| <= curvature_bandwidth`` have learnable curvature; every mode has
        its slope fixed by the fixed-point condition.
    pointwise : bool
        Include ``P``; ``pointwise_degree``, ``pointwise_inverse`` configure it.
    phaselock : bool
        Include ``L`` with its default terms.
    mlp_hidden : int
        Width of a general neural term ``M`` (0: none), an MLP of the rates averaged over neuron
        translations (:class:`~neurodyn.energies.neural.MLPEnergy`); its gradient enters the
        fixed-point slopes, differentiably, so it can be trained by gradient descent.
    seed : int
        Initialises ``M``.
    variable : str
        The variable of ``S``'s per-mode polynomials: ``"amplitude"`` ``|z_k|``
        (:class:`~neurodyn.energies.amplitude.AmplitudeFourierEnergy`, in which the exact solution
        of step 4 is linear; what :func:`neurodyn.fitting.core.fit` uses by default) or ``"power"``
        ``|z_k|^2`` through a saturating map
        (:class:`~neurodyn.energies.spectral.LearnedFourierEnergy`, the earlier family: the one
        saved models without this key hold, and the control); the compiled path
        :mod:`neurodyn.dynamics.fastpath` runs both.

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> from neurodyn.activation import Logistic
    >>> g, act = Ring(32), Logistic()
    >>> u0 = -2 + 4 * torch.cos(g.coords()[0])
    >>> e = SealEnergy(g, act, u0)
    >>> res = -u0 - e.grad(act(u0))            # the fixed-point residual (b = 0)
    >>> float(res.detach().abs().max()) < 1e-9
    True
    """

    family = "seal"

    def __init__(self, geometry: Geometry, activation: Activation, u0: torch.Tensor | None = None,
                 bias: float = 0.0, degree: int = 3, curvature_bandwidth: int = 4,
                 pointwise: bool = True, pointwise_degree: int = 3, pointwise_inverse: bool = True,
                 phaselock: bool = False, mlp_hidden: int = 0, seed: int = 0,
                 variable: str = "power"):
        super().__init__(geometry)
        seed = check_int("seed", seed)  # 1.5 or "0" is refused, not rounded
        if variable not in VARIABLES:
            raise BadInput(f"variable={variable!r}: choose one of {VARIABLES}", param="variable")
        top = max(geometry.shape) // 2
        if isinstance(curvature_bandwidth, bool) or not isinstance(curvature_bandwidth, int) \
                or not 0 <= curvature_bandwidth <= top:
            raise BadInput(f"curvature_bandwidth={curvature_bandwidth!r}: must be an integer "
                           f"in [0, {top}]", param="curvature_bandwidth")
        self.activation = activation
        self.options = {"degree": int(degree), "curvature_bandwidth": curvature_bandwidth,
                        "pointwise": bool(pointwise), "pointwise_degree": int(pointwise_degree),
                        "pointwise_inverse": bool(pointwise_inverse),
                        "phaselock": bool(phaselock), "mlp_hidden": int(mlp_hidden),
                        "seed": int(seed), "variable": variable}
        u = torch.zeros(geometry.shape, dtype=torch.float64) if u0 is None else \
            torch.as_tensor(u0, dtype=torch.float64).clone()
        if tuple(u.shape) != geometry.shape or not torch.isfinite(u).all():
            raise BadInput(f"u0: must be finite with shape {geometry.shape}", param="u0")
        self.register_buffer("u0", u)
        self.register_buffer("bias", torch.as_tensor(float(bias), dtype=torch.float64))
        p_star = geometry.power(activation(u))
        nonzero = geometry.wavevectors().abs().sum(0) > 0
        scale = p_star.clamp(min=max(1e-2 * float(p_star[nonzero].max()), 1e-300))
        if variable == "amplitude":
            self.spectral = AmplitudeFourierEnergy(geometry, top, degree, scale)
        else:
            self.spectral = LearnedFourierEnergy(geometry, top, degree, scale)
        self.pointwise = (PointwiseEnergy(geometry, activation, pointwise_degree,
                                          pointwise_inverse) if pointwise else None)
        self.phaselock = PhaseLockEnergy(geometry) if phaselock else None
        self.neural = (MLPEnergy(geometry, (int(mlp_hidden),), scale=0.1, seed=seed,
                                 symmetric=True) if mlp_hidden else None)
        k = geometry.wavevectors().abs().amax(0)
        self.register_buffer("curvature_mask", (k <= curvature_bandwidth), persistent=False)
        self._key = None

    # ------------------------------------------------------------------ parts and anchor
    def others(self) -> list[InteractionEnergy]:
        """The parts other than the spectral energy."""
        return [p for p in (self.pointwise, self.phaselock, self.neural) if p is not None]

    def _version_key(self):
        tensors = [self.u0, self.bias] + [q for p in self.others() for q in p.parameters()]
        return (torch.is_grad_enabled(),) + tuple((id(t), t._version) for t in tensors)

    def refresh(self, force: bool = False) -> None:
        """Recompute the spectral slopes that make every ``u*(psi)`` a fixed point.

        With gradients enabled and a neural term present, the slopes stay attached to the
        graph of its parameters (so gradient descent sees the fixed-point condition).
        """
        key = self._version_key()
        if key == self._key and not force:
            return
        g = self.geometry
        track = torch.is_grad_enabled() and self.neural is not None
        if self.spectral.anchor_slope.requires_grad:  # drop the graph of an earlier refresh
            self.spectral.anchor_slope = self.spectral.anchor_slope.detach().clone()
        with torch.set_grad_enabled(track):
            rs = self.activation(self.u0)
            t = self.bias - self.u0
            for part in self.others():
                t = t - part.grad(rs)
            z, tz = g.dft(rs), g.dft(t)
            den = z.real**2 + z.imag**2
            slope = -(tz * torch.conj(z)).real / (2 * (den + 1e-18 * den.max()))
            if track:
                with torch.no_grad():
                    self.spectral.anchor(den, slope.detach())
                self.spectral.anchor_slope = slope * self.spectral.mask
            else:
                self.spectral.anchor(den, slope)
        self.spectral._coef_cache = None  # the anchor changed
        self._key = self._version_key()

    # ------------------------------------------------------------------ free parameters
    def free_parameters(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """``(tensor, boolean mask)`` pairs of the learnable entries, in a fixed order."""
        out = []
        if self.pointwise is not None:
            out.append((self.pointwise.coef, self.pointwise.mask.bool()))
        if self.phaselock is not None:
            out.append((self.phaselock.coef, torch.ones_like(self.phaselock.coef, dtype=bool)))
        mask = self.curvature_mask.unsqueeze(-1).expand(self.spectral.coef.shape).clone()
        mask[..., 0] = False  # the slope is the anchor's
        out.append((self.spectral.coef, mask))
        return out

    def theta(self) -> torch.Tensor:
        """The learnable entries as one flat vector."""
        return torch.cat([t.detach()[m] for t, m in self.free_parameters()])

    def set_theta(self, theta: torch.Tensor) -> None:
        """Write a flat vector (from :meth:`theta`'s layout) into the learnable entries."""
        theta = torch.as_tensor(theta, dtype=torch.float64).to(self.u0.device)
        i = 0
        with torch.no_grad():
            for t, m in self.free_parameters():
                n = int(m.sum())
                new = t.detach().clone()
                new[m] = theta[i:i + n]
                t.copy_(new)
                i += n
        if i != theta.numel():
            raise BadInput(f"theta: {theta.numel()} values for {i} free parameters", param="theta")

    # ------------------------------------------------------------------ interface
    def forward(self, r):
        self.refresh()
        return self.spectral(r) + sum(p(r) for p in self.others())

    def grad(self, r):
        self.refresh()
        out = self.spectral.grad(r)
        for p in self.others():
            out = out + p.grad(r)
        return out

    def hvp(self, r, v):
        self.refresh()
        out = self.spectral.hvp(r, v)
        for p in self.others():
            out = out + p.hvp(r, v)
        return out

    def config(self):
        return {"family": self.family, "activation": self.activation.config(),
                "bias": float(self.bias), **self.options}

    @classmethod
    def from_config(cls, config: dict, geometry: Geometry) -> SealEnergy:
        """Rebuild from :meth:`config` (without ``family``); load the state dict afterwards."""
        config = dict(config)
        act = make_activation(config.pop("activation", None))
        allowed = {"bias", "degree", "curvature_bandwidth", "pointwise", "pointwise_degree",
                   "pointwise_inverse", "phaselock", "mlp_hidden", "seed", "variable"}
        config.setdefault("variable", "power")  # models saved before the amplitude family
        if set(config) - allowed:
            raise BadInput(f"seal energy: unknown keys {sorted(set(config) - allowed)}; "
                             f"allowed: {sorted(allowed)}")
        return cls(geometry, act, None, **config)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        out = super().load_state_dict(state_dict, strict, assign)
        self._key = None
        self.refresh()
        return out
