"""The field, energy and Hessian-vector product of a fitted SEAL torus, one FFT pair each.

:class:`SheetField` reduces a fitted network (SEAL energy in the Fourier amplitude, with its
pointwise and phase-locking parts, a logistic or tanh rate function, a uniform bias) to per-mode
tables in one dtype. One evaluation of the field is one ``rfft2`` of the rates, a per-mode
filter (the anchored slope ``c_1 / (2 a_k)`` on every mode, the learned curvature on the few
modes of the curvature band, the locking gradient on its three modes) and one ``irfft2``, plus
the pointwise term; nothing of size ``N x N``, and no autograd.

Why every mode and not a separable block of a few: the anchor imposes the fixed-point slope on
every mode, and the fitted pointwise polynomial (small, ~1e-5) makes the remainder ``t`` of
the fixed-point condition, hence the slopes, nonzero on all of them; an ``rfft2`` is
``O(N log N)`` where a per-axis DFT of ``K1 x K2`` modes is ``O(N (K1 + K2))``, the cheaper
one only for a band-limited energy.

float32: the state, the tables and the FFTs run in the field's dtype; the energy's sums are
accumulated in float64. The difference from float64 is measured in
``tests/neurodyn/test_sheet.py`` (64 x 64) and reported by ``bench/bench_sheet.py``.
"""

from __future__ import annotations

import torch

from _runkit import BadInput

from ..activation import Logistic, Tanh
from ..energies.pointwise import rate_range
from ..fitting.streamed import ModeLock, check_streamable

__all__ = ["SheetField"]


class SheetField:
    """The dynamics of a fitted SEAL torus as spectral tables in ``dtype``.

    Parameters
    ----------
    net : HopfieldNetwork
        A fitted SEAL torus (amplitude variable, no neural term; a logistic or tanh rate).
    dtype : torch.dtype
        ``torch.float32`` or ``torch.float64``.

    Examples
    --------
    >>> import neurodyn as nd
    >>> net = nd.fit(nd.FitConfig(geometry="torus", n=(16, 16), steps=1, batch=1)).network
    >>> f = SheetField(net, torch.float64)
    >>> u = net.manifold.u0 + 0.1
    >>> bool(torch.allclose(f.field(u), net.field(u), atol=1e-12))
    True
    """

    def __init__(self, net, dtype: torch.dtype = torch.float32):
        check_streamable(net)
        if dtype not in (torch.float32, torch.float64):
            raise BadInput(f"dtype={dtype!r}: choose torch.float32 or torch.float64")
        if not isinstance(net.activation, (Logistic, Tanh)) or net.bias.dim() != 0:
            raise BadInput("SheetField: needs a logistic or tanh rate and a uniform bias")
        e, g = net.energy_fn, net.geometry
        e.refresh()
        sp = e.spectral
        self.geometry, self.activation, self.dtype = g, net.activation, dtype
        self.tau, self.bias = float(net.tau), float(net.bias)
        coef = sp.effective_coef().detach()
        self.c1 = coef[..., 0].to(dtype)
        self.scale = sp.scale.to(dtype)
        self.eps = float(sp.eps)
        self.astar = torch.sqrt(sp.anchor_x + sp.eps).to(dtype)
        self.mult = g.multiplicity().to(dtype)
        curved = (coef[..., 1:] != 0).any(-1).flatten().nonzero()[:, 0]
        self.band = curved  # flat modes with a learned curvature
        self.band_coef = coef.flatten(0, 1)[curved].to(torch.float64)  # (M, D)
        self.lock = ModeLock(e.phaselock) if e.phaselock is not None else None
        self.lock_part = e.phaselock  # the locking energy itself (the compiled path's tables)
        self._pointwise(e.pointwise)

    def _pointwise(self, part) -> None:
        """``h'(r) = c_0 phi^{-1}(r) + sum_j c_j x^j``: coefficients and the potentials at
        which the reference's clamp of the rate sets in (``phi^{-1}(phi(u)) = u`` inside)."""
        if part is None:
            self.pw = torch.zeros(1, dtype=torch.float64)
            self.lo, self.width, self.ulim = 0.0, 1.0, (-float("inf"), float("inf"))
            return
        self.pw = (part.coef * part.mask).detach().to(torch.float64)
        self.lo, hi = rate_range(self.activation)
        self.width = hi - self.lo
        tiny = torch.finfo(self.dtype).eps * self.width
        edge = torch.tensor([self.lo + tiny, self.lo + self.width - tiny], dtype=self.dtype)
        ulim = self.activation.inverse(edge)
        self.ulim = (float(ulim[0]), float(ulim[1]))

    # ------------------------------------------------------------------ pieces
    def spectrum(self, u: torch.Tensor):
        """``(r, z)``: the rates of potentials ``u`` and their coefficients."""
        r = self.activation(u)
        return r, self.geometry.dft(r)

    def _amplitude(self, z: torch.Tensor) -> torch.Tensor:
        return torch.sqrt((z.real**2 + z.imag**2).div_(self.scale).add_(self.eps))

    def _band_values(self, a: torch.Tensor, order: int) -> torch.Tensor:
        """On the curvature band: ``sum_{d>=2} c_d y^{d-1}`` (order 1), its derivative in
        ``a`` (order 2) or ``sum_{d>=2} c_d y^d / d`` (order 0), in float64."""
        ab = a.flatten()[self.band].to(torch.float64)
        y = ab - self.astar.flatten()[self.band].to(torch.float64)
        d = torch.arange(1, self.band_coef.shape[1] + 1, dtype=torch.float64)
        c = self.band_coef[:, 1:]
        if order == 0:
            return (c / d[1:] * y[:, None] ** d[1:]).sum(-1)
        if order == 1:
            return (c * y[:, None] ** (d[1:] - 1)).sum(-1)
        return (c * (d[1:] - 1) * y[:, None] ** (d[1:] - 2).clamp(min=0)).sum(-1)

    def _pointwise_slope(self, u: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        c = self.pw.tolist()
        x = (r - self.lo) / self.width
        acc = torch.full_like(r, c[-1])
        for cj in reversed(c[1:-1]):
            acc.mul_(x).add_(cj)
        out = acc.mul_(x) if len(c) > 1 else torch.zeros_like(r)
        return out.add_(u.clamp(*self.ulim), alpha=c[0])

    def grad(self, u: torch.Tensor) -> torch.Tensor:
        """``grad F(phi(u))``, same shape as ``u`` (one ``rfft2`` and one ``irfft2``)."""
        g = self.geometry
        r, z = self.spectrum(u)
        a = self._amplitude(z)
        f1 = self.c1 / (2 * a)
        flat = f1.view(-1)
        flat[self.band] += (self._band_values(a, 1) / (2 * a.flatten()[self.band])).to(
            self.dtype)
        zlock = z.view(-1)[self.lock.index].clone() if self.lock is not None else None
        gz = z.mul_(f1.mul_(-2))
        if self.lock is not None:
            gz.view(-1)[self.lock.index] += self.lock.grad(zlock.to(torch.complex128)).to(
                gz.dtype)
        return g.idft(gz).add_(self._pointwise_slope(u, r))

    def field(self, u: torch.Tensor) -> torch.Tensor:
        """``du/dt = (-u - grad F(phi(u)) + b) / tau``."""
        return self.grad(u).add_(u).sub_(self.bias).mul_(-1.0 / self.tau)

    def energy(self, u: torch.Tensor) -> float:
        """The Hopfield energy ``E = F(r) - b.r + sum_i G(r_i)`` of one state, summed in
        float64."""
        g, act = self.geometry, self.activation
        r, z = self.spectrum(u)
        a = self._amplitude(z)
        y = a - self.astar
        f0 = (self.c1 * y).to(torch.float64)
        f0.view(-1)[self.band] += self._band_values(a, 0)
        spectral = -g.size * float((self.mult * self.scale * f0).sum())
        lock = float(self.lock.value(z.view(-1)[self.lock.index].to(torch.complex128))) \
            if self.lock is not None else 0.0
        c = self.pw.tolist()
        x = (r - self.lo) / self.width
        poly = torch.zeros_like(r)
        for j in range(len(c) - 1, 0, -1):  # sum_j c_j x^(j+1) / (j+1), by Horner
            poly.add_(c[j] / (j + 1)).mul_(x)
        poly.mul_(x).mul_(self.width)
        uc = u.clamp(*self.ulim)
        pointwise = float(poly.sum(dtype=torch.float64)) + c[0] * float(
            act.integral(uc).sum(dtype=torch.float64))
        rest = float((act.integral(u) - self.bias * r).sum(dtype=torch.float64))
        return spectral + lock + pointwise + rest

    def hvp(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``H_F(phi(u)) v``: the interaction energy's Hessian at the rates of ``u`` along ``v``.

        Parameters
        ----------
        u, v : torch.Tensor, shape (n1, n2)
            Potentials and a direction in rate space.
        """
        g = self.geometry
        r, z = self.spectrum(u)
        zv = g.dft(v)
        a = self._amplitude(z)
        h1 = self.c1.clone()
        h1.view(-1)[self.band] += self._band_values(a, 1).to(self.dtype)
        h2 = torch.zeros_like(h1)
        h2.view(-1)[self.band] = self._band_values(a, 2).to(self.dtype)
        f2 = (a * h2 - h1) / (4 * self.scale * a**3)
        dp = 2 * (z.real * zv.real + z.imag * zv.imag)
        spec = f2 * dp * z + h1 / (2 * a) * zv
        spec.mul_(-2)
        if self.lock is not None:
            idx = self.lock.index
            spec.view(-1)[idx] += self.lock.hvp(z.view(-1)[idx].to(torch.complex128),
                                                zv.view(-1)[idx].to(torch.complex128)).to(
                spec.dtype)
        c = self.pw.tolist()
        x = (r - self.lo) / self.width
        acc = torch.zeros_like(r)
        for j in range(len(c) - 1, 0, -1):  # sum_j j c_j x^(j-1) / w
            acc.mul_(x).add_(j * c[j] / self.width)
        uc = u.clamp(*self.ulim)
        curv = acc.add_(c[0] / self.activation.derivative(uc))
        return g.idft(spec).add_(curv.mul_(v))
