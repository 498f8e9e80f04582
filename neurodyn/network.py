"""The Hopfield-compatible network and its velocity-driven tangent transport.

.. math::

    \\tau \\dot u = -u - \\nabla F(r) + b + I(t), \\qquad r = \\phi(u),

    E(r) = F(r) - b \\cdot r + \\sum_i G(r_i), \\qquad
    \\frac{dE}{dt}\\Big|_{I=0} = -\\tau \\sum_i \\phi'(u_i)\\, \\dot u_i^2 \\le 0 .

Velocity input is ``I = sum_a v_a T_a(r)`` with antisymmetric circulant operators ``T_a`` (per-mode
gains ``i g_{a,k}``), the effect of asymmetric rotation-cell connectivity. Two couplings are built
here (:func:`velocity_coupling`): ``exact`` (:meth:`Transport.fit`, gains fitted mode by mode so
that the resting bump is carried rigidly at any speed) and ``asymmetric``
(:meth:`Transport.asymmetric`, one smooth odd kernel whose single gain is calibrated at small
speed, so that a fast bump lags and deforms).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from _runkit import BadInput

from .activation import Activation
from .energies import InteractionEnergy
from .geometry.populations import Geometry
from .manifold import TargetManifold

__all__ = ["Transport", "HopfieldNetwork", "velocity_coupling", "VELOCITY_COUPLINGS"]

#: The velocity couplings of :func:`velocity_coupling`; the first is the default.
VELOCITY_COUPLINGS = ("exact", "asymmetric")


class Transport(nn.Module):
    """Velocity-driven tangent transport ``I = sum_a v_a T_a(r)``.

    .. math:: T_a(r) = \\mathrm{idft}(i\\, g_{a,k}\\, z_k(r)), \\qquad g_{a,k} = k_a h_k

    with ``h_k`` even in ``k``, so each ``T_a`` is a real antisymmetric circulant operator.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    gains : torch.Tensor, shape (*spectral_shape)
        ``h_k``, real tensor of shape ``spectral_shape``.
    """

    def __init__(self, geometry: Geometry, gains: torch.Tensor):
        super().__init__()
        h = torch.as_tensor(gains, dtype=torch.float64)
        if tuple(h.shape) != geometry.spectral_shape:
            raise BadInput(f"gains: shape {tuple(h.shape)}, expected {geometry.spectral_shape}",
                           param="gains")
        self.geometry = geometry
        self.register_buffer("gains", h.clone())

    @classmethod
    def fit(cls, geometry: Geometry, bump: torch.Tensor, tau: float, activation: Activation,
            reg: float = 1e-8) -> Transport:
        """Least-squares gains making ``T_a(r_b) = tau d u_b / d psi_a`` for a bump ``u_b``.

        Mode-wise, ``i k_a h_k z_k = -i tau k_a u_k`` gives
        ``h_k = -tau Re(u_k conj z_k) / (|z_k|^2 + eps)``; by translation equivariance the same
        gains move every shifted bump at exactly the input velocity.

        Parameters
        ----------
        bump : torch.Tensor, shape (*geometry.shape)
            Potentials of a stationary bump, shape ``geometry.shape``.
        """
        uh = geometry.dft(bump.to(torch.float64))
        zh = geometry.dft(activation(bump.to(torch.float64)))
        den = zh.real**2 + zh.imag**2
        h = -tau * (uh * torch.conj(zh)).real / (den + reg * den.max())
        return cls(geometry, h)

    @classmethod
    def asymmetric(cls, network: HopfieldNetwork, width: float = 0.3) -> Transport:
        """Velocity-modulated asymmetric coupling: one smooth odd kernel, calibrated at small ``v``.

        .. math::

            T_a(r) = \\gamma\\, \\partial_{\\psi_a} (G_w * r), \\qquad
            h_k = -\\gamma\\, e^{-w^2 |k|^2 / 2} \\;(h_0 = 0 \\text{ and Nyquist modes } 0),

        the classic offset connectivity ``W(x + d) - W(x - d)`` of rotation cells, with a Gaussian
        ``G_w`` of width ``w`` (rad), scaled by the velocity. Unlike :meth:`fit` it does not
        reproduce ``tau du*/dpsi`` mode by mode: only its projection on the neutral direction
        is matched. By linear response, a small input ``I`` moves the bump at
        ``psi_dot = (L^T T)^{-1} L^T I / tau`` (``L``: left null vectors of the Jacobian at the
        bump, ``T``: its tangents); ``gamma`` makes the mean diagonal of that response to
        ``v_a T_a(r*)`` equal to 1, so the speed gain tends to 1 as ``v -> 0``. At larger ``v``
        the part of the drive off the tangent deforms the bump (relaxed at rate ``kappa``), and
        the bump lags the command.

        Parameters
        ----------
        network : HopfieldNetwork
            A network with a target manifold (its bump at ``psi = 0`` calibrates ``gamma``).
        width : float
            Kernel width ``w`` in radians, in ``[0, 2 pi]`` (0 is the derivative of the rates
            itself).

        Returns
        -------
        Transport

        Examples
        --------
        >>> from neurodyn.fitting.core import FitConfig, fit
        >>> net = fit(FitConfig(n=32, steps=5)).network
        >>> h = Transport.asymmetric(net).gains
        >>> bool((h[1:-1] < 0).all()), float(h[0]) == float(h[-1]) == 0  # mode 0, Nyquist
        (True, True)
        """
        if isinstance(width, bool) or not (isinstance(width, (int, float))
                                           and 0 <= width <= 2 * math.pi):
            raise BadInput(f"width={width!r}: must be a number in [0, 2 pi] (radians; a "
                           "kernel wider than a turn has no modes left)", param="width")
        if network.manifold is None:
            raise BadInput("network: needs a target manifold to calibrate the coupling",
                           param="network")
        g = network.geometry
        k, _, nyq, _ = g._tables(torch.float64, "cpu")
        k2 = (k**2).sum(0)
        kernel = torch.exp(-0.5 * width**2 * k2) * (~nyq) * (k2 > 0)
        unit = cls(g, -kernel)
        with torch.no_grad():
            u0 = network.manifold.u0.detach().to("cpu", torch.float64)
            jac = network.jacobian(u0.to(network.bias.device)).detach().cpu()
            left = torch.linalg.svd(jac).U[:, -g.dim:]  # (N, dim): null space of J^T
            r0 = network.activation(u0)
            eye = torch.eye(g.dim, dtype=torch.float64)
            drive = torch.stack([unit(r0, eye[a]).reshape(-1) for a in range(g.dim)], -1)
            tangents = network.manifold.tangents(torch.zeros(g.dim, dtype=torch.float64))
            response = torch.linalg.solve(left.T @ tangents.reshape(-1, g.dim),
                                          left.T @ drive) / network.tau
        trace = float(response.diagonal().sum())
        if not (math.isfinite(trace) and trace > 0):
            raise BadInput(f"width={width!r}: the kernel does not move the bump forward "
                           f"(response trace {trace:.3g}); choose a smaller width", param="width")
        return cls(g, -kernel * (g.dim / trace))

    def forward(self, r: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Input current for rates ``r`` ``(..., *shape)`` and velocity ``v`` ``(..., dim)``."""
        g = self.geometry
        k = g.wavevectors(r.dtype, r.device)  # (dim, *spec)
        kv = torch.einsum("a...,ba->b...", k, v.reshape(-1, g.dim).to(r.dtype))
        kv = kv.reshape(v.shape[:-1] + g.spectral_shape)
        return g.idft(1j * kv * self.gains.to(r.dtype) * g.dft(r))


class HopfieldNetwork(nn.Module):
    """A Hopfield-compatible rate network on a ring or torus.

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    activation : Activation
        The rate function ``phi``.
    energy : InteractionEnergy
        The interaction energy ``F``.
    bias : float or torch.Tensor, shape (*geometry.shape)
        ``b``, a scalar (rotation invariant) or a tensor of shape ``geometry.shape``.
    tau : float
        Membrane time constant (> 0); time is measured in the same unit.
    transport : Transport or None
        Optional :class:`Transport` for velocity input.
    manifold : TargetManifold or None
        Optional :class:`TargetManifold` the network was built for (for diagnostics).
    """

    def __init__(self, geometry: Geometry, activation: Activation, energy: InteractionEnergy,
                 bias: float | torch.Tensor = 0.0, tau: float = 1.0,
                 transport: Transport | None = None, manifold: TargetManifold | None = None):
        super().__init__()
        if not (isinstance(tau, (int, float)) and tau > 0):
            raise BadInput(f"tau={tau!r}: must be a number > 0", param="tau")
        if energy.geometry is not geometry and energy.geometry.config() != geometry.config():
            raise BadInput("energy: built for a different geometry than the network",
                           param="energy")
        b = torch.as_tensor(bias, dtype=torch.float64)
        if b.dim() != 0 and tuple(b.shape) != geometry.shape:
            raise BadInput(f"bias: shape {tuple(b.shape)}, expected () or {geometry.shape}",
                           param="bias")
        self.geometry = geometry
        self.activation = activation
        self.energy_fn = energy
        self.bias = nn.Parameter(b.clone(), requires_grad=False)
        self.tau = float(tau)
        self.transport = transport
        self.manifold = manifold

    # ------------------------------------------------------------------ dynamics
    def rates(self, u: torch.Tensor) -> torch.Tensor:
        """``r = phi(u)``."""
        return self.activation(u)

    def field(self, u: torch.Tensor, velocity: torch.Tensor | None = None,
              current: torch.Tensor | None = None) -> torch.Tensor:
        """Time derivative ``du/dt = (-u - grad F(phi(u)) + b + I) / tau``.

        Parameters
        ----------
        u : torch.Tensor, shape (..., *shape)
            Potentials.
        velocity : torch.Tensor or None, shape (..., dim)
            Optional velocity driving the transport input.
        current : torch.Tensor or None, shape (..., *shape)
            Extra input current, broadcastable to ``u``.
        """
        r = self.activation(u)
        du = -u - self.energy_fn.grad(r) + self.bias.to(u.dtype)
        if velocity is not None:
            if self.transport is None:
                raise BadInput("velocity: this network has no transport; fit one first",
                               param="velocity")
            du = du + self.transport(r, velocity)
        if current is not None:
            du = du + current
        return du / self.tau

    def energy(self, u: torch.Tensor) -> torch.Tensor:
        """Hopfield energy ``E = F(r) - b.r + sum_i G(r_i)`` of potentials ``u``: ``(...)``."""
        g = self.geometry
        r = self.activation(u)
        lin = (self.bias.to(u.dtype) * r).flatten(-g.dim).sum(-1)
        leak = self.activation.integral(u).flatten(-g.dim).sum(-1)
        return self.energy_fn(r) - lin + leak

    def jacobian(self, u: torch.Tensor) -> torch.Tensor:
        """Jacobian of the autonomous field at one state ``u`` (``shape``): ``(N, N)``.

        .. math:: J = -(I + H_F D) / \\tau, \\qquad D = \\mathrm{diag}\\,\\phi'(u)
        """
        g = self.geometry
        u = g.check_state(u, "u")
        if u.dim() != g.dim:
            raise BadInput(f"u: one state of shape {g.shape} expected, got {tuple(u.shape)}",
                           param="u")
        d = self.activation.derivative(u).reshape(-1)
        eye = torch.eye(g.size, dtype=u.dtype, device=u.device).reshape((g.size,) + g.shape)
        r = self.activation(u).expand((g.size,) + g.shape)
        h = self.energy_fn.hvp(r, eye).reshape(g.size, g.size)  # row j: H e_j (H symmetric)
        return -(torch.eye(g.size, dtype=u.dtype, device=u.device) + h.T * d) / self.tau

    def interaction_hessian(self, u: torch.Tensor) -> torch.Tensor:
        """Hessian of ``F`` at ``r = phi(u)`` for one state ``u``: ``(N, N)``."""
        g = self.geometry
        eye = torch.eye(g.size, dtype=u.dtype, device=u.device).reshape((g.size,) + g.shape)
        r = self.activation(u).expand((g.size,) + g.shape)
        h = self.energy_fn.hvp(r, eye).reshape(g.size, g.size)
        return 0.5 * (h + h.T)


def velocity_coupling(network: HopfieldNetwork, coupling: str = "exact",
                      width: float = 0.3) -> HopfieldNetwork:
    """The network with its transport replaced by the named velocity coupling.

    - ``exact``: :meth:`Transport.fit` on the manifold's bump (what a fit makes): the resting
      bump moves rigidly at exactly the input velocity, at any speed.
    - ``asymmetric``: :meth:`Transport.asymmetric` with kernel width ``width`` (rad): speed
      gain 1 at small velocity, lag and deformation at large velocity.

    Parameters
    ----------
    network : HopfieldNetwork
        A network with a target manifold; it is not modified (the new one shares its parts).
    coupling : str
        One of :data:`VELOCITY_COUPLINGS`.
    width : float
        Kernel width of the ``asymmetric`` coupling (rad, >= 0; ignored for ``exact``).

    Returns
    -------
    HopfieldNetwork

    Examples
    --------
    >>> from neurodyn.fitting.core import FitConfig, fit
    >>> net = fit(FitConfig(n=32, steps=5)).network
    >>> velocity_coupling(net, "asymmetric").transport is net.transport
    False
    """
    if coupling not in VELOCITY_COUPLINGS:
        raise BadInput(f"coupling={coupling!r}: choose one of {VELOCITY_COUPLINGS}",
                       param="coupling")
    if network.manifold is None:
        raise BadInput("network: needs a target manifold to build a velocity coupling",
                       param="network")
    if coupling == "exact":
        with torch.no_grad():
            transport = Transport.fit(network.geometry, network.manifold.u0.detach().cpu(),
                                      network.tau, network.activation)
    else:
        transport = Transport.asymmetric(network, width)
    device = network.bias.device
    return HopfieldNetwork(network.geometry, network.activation, network.energy_fn,
                           network.bias.detach(), network.tau, transport.to(device),
                           network.manifold)
