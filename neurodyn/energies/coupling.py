"""Phase-locking energies between Fourier modes: rotation-invariant terms beyond the power
spectrum.

Each term ``t`` locks the phase of a mode ``z_A`` to a product of other modes with the same total
wave vector, ``k_A = sum_B n_B k_B``:

.. math:: w_t = z_A \\prod_B \\bar z_B^{\\,n_B}, \\qquad
          F(r) = N \\sum_t \\gamma_t \\big(|w_t| - \\mathrm{Re}\\, w_t\\big)
               = N \\sum_t \\gamma_t |w_t| \\big(1 - \\cos \\arg w_t\\big).

A translation by ``psi`` multiplies ``z_k`` by ``exp(-i k.psi)``, which leaves ``w_t`` unchanged:
every term is invariant. On an even bump ``w_t`` is real; where it is positive the term, its
gradient and its Hessian in all radial directions vanish (where it is negative the term sits at
its phase maximum and its radial gradient enters the fixed-point slopes); what remains is a
rank-one Hessian ``N gamma_t |w_t| a a^T`` along the phase combination
``a = d arg(w_t) / dr`` -- exactly what the power spectrum cannot reach (on a hex torus the
triad ``(1,0) = (0,1) + (1,-1)``, on a ring ``z_k`` against ``z_1^k``). The
gradient is a closed form on a handful of modes plus one inverse FFT.
"""

from __future__ import annotations

import torch
from torch import nn

from _runkit import BadInput, BadType

from ..geometry.populations import Geometry, Ring, Torus
from .base import InteractionEnergy

__all__ = ["PhaseLockEnergy", "default_terms"]


def default_terms(geometry: Geometry, order: int = 3) -> list:
    """Standard locking terms: ring ``z_k`` vs ``z_1^k`` (``k = 2..order``); torus triads.

    Returns
    -------
    list of ``(k_A, [(k_B, n_B), ...])`` with integer wave vectors as tuples.
    """
    if isinstance(geometry, Ring):
        return [((k,), [((1,), k)]) for k in range(2, order + 1)]
    if isinstance(geometry, Torus):
        if geometry.lattice == "hex":
            return [((1, 0), [((0, 1), 1), ((1, -1), 1)])]
        return [((1, 1), [((1, 0), 1), ((0, 1), 1)]), ((1, -1), [((1, 0), 1), ((0, -1), 1)])]
    raise BadType(f"geometry: no default locking terms for {type(geometry).__name__}")


def _stored(geometry: Geometry, k: tuple[int, ...]) -> tuple[int, bool]:
    """Flat index of wave vector ``k`` in the half spectrum and whether it is the conjugate."""
    k = tuple(int(x) for x in k)
    if len(k) != geometry.dim:
        raise BadInput(f"wave vector {k}: needs {geometry.dim} components")
    conj = k[-1] < 0  # the half spectrum keeps the last axis's non-negative wave numbers
    if conj:
        k = tuple(-x for x in k)
    idx = 0
    for a, (x, n) in enumerate(zip(k, geometry.spectral_shape, strict=True)):
        full = geometry.shape[a]
        if a == geometry.dim - 1:
            if not 0 <= x < n:
                raise BadInput(f"wave vector {k}: out of the spectrum of {geometry!r}")
            pos = x
        else:
            if abs(x) > full // 2:
                raise BadInput(f"wave vector {k}: out of the spectrum of {geometry!r}")
            pos = x % full
        idx = idx * n + pos
    return idx, conj


class PhaseLockEnergy(InteractionEnergy):
    """Phase-locking terms ``N gamma_t (|w_t| - Re w_t)`` (see the module docstring).

    Parameters
    ----------
    geometry : Geometry
        The population geometry.
    terms : list of tuple or None
        ``[(k_A, [(k_B, n_B), ...]), ...]`` with ``k_A = sum_B n_B k_B`` and ``n_B >= 1`` (default
        :func:`default_terms`).

    Examples
    --------
    >>> from neurodyn.geometry.populations import Ring
    >>> e = PhaseLockEnergy(Ring(32))
    >>> with torch.no_grad():
    ...     _ = e.coef.fill_(0.7)
    >>> th = Ring(32).coords()[0]
    >>> bump = torch.exp(2 * torch.cos(th - 1.3))   # harmonics all in phase and > 0: F = 0
    >>> abs(float(e(bump).detach())) < 1e-12
    True
    """

    family = "phaselock"

    def __init__(self, geometry: Geometry, terms=None):
        super().__init__(geometry)
        terms = default_terms(geometry) if terms is None else terms
        self.terms = []
        for term in terms:
            k_a, factors = tuple(int(x) for x in term[0]), term[1]
            total = [0] * geometry.dim
            for k_b, n_b in factors:
                if isinstance(n_b, bool) or not isinstance(n_b, int) or n_b < 1:
                    raise BadInput(f"terms: power n_B={n_b!r} must be an integer >= 1",
                                   param="terms")
                total = [t + n_b * int(x) for t, x in zip(total, k_b, strict=True)]
            if tuple(total) != k_a:
                raise BadInput(f"terms: {k_a} != sum n_B k_B = {tuple(total)}; a term must "
                               "balance its wave vectors to be translation invariant",
                               param="terms")
            self.terms.append((k_a, [(tuple(int(x) for x in k), int(n)) for k, n in factors]))
        if not self.terms:
            raise BadInput("terms: at least one locking term is needed", param="terms")
        self._index = [(_stored(geometry, k_a), [(_stored(geometry, k), n) for k, n in fs])
                       for k_a, fs in self.terms]
        self.coef = nn.Parameter(torch.zeros(len(self.terms), dtype=torch.float64))

    @staticmethod
    def _pick(zf: torch.Tensor, where: tuple[int, bool]) -> torch.Tensor:
        idx, conj = where
        x = zf[..., idx]
        return torch.conj(x) if conj else x

    def _monomials(self, zf):
        out = []
        for a, factors in self._index:
            xa = self._pick(zf, a)
            xs = [(self._pick(zf, b), n) for b, n in factors]
            w = xa
            for x, n in xs:
                w = w * torch.conj(x) ** n
            out.append((a, xa, factors, xs, w))
        return out

    def forward(self, r):
        g = self.geometry
        zf = g.dft(r).flatten(-g.dim)
        val = torch.zeros(r.shape[: r.dim() - g.dim], dtype=r.dtype, device=r.device)
        for t, (_, _, _, _, w) in enumerate(self._monomials(zf)):
            val = val + self.coef[t].to(r.dtype) * (w.abs() - w.real)
        return g.size * val

    def grad(self, r):
        g = self.geometry
        return g.idft(self.grad_spectrum(g.dft(r).flatten(-g.dim)))

    def grad_spectrum(self, zf: torch.Tensor) -> torch.Tensor:
        """The spectrum of :meth:`grad` from the flattened spectrum ``zf`` of the rates.

        Nonzero on the terms' modes only; ``grad(r) = idft(grad_spectrum(dft(r).flatten()))``.

        Parameters
        ----------
        zf : torch.Tensor, shape (..., K)
            The rates' coefficients :meth:`Geometry.dft`, flattened over the ``K`` stored
            modes.

        Returns
        -------
        torch.Tensor, shape (..., *spectral_shape), complex
        """
        g = self.geometry
        where, adds = [], []  # every term's contributions, added into the spectrum at once
        for t, (a, xa, factors, xs, w) in enumerate(self._monomials(zf)):
            aw = w.abs()
            unit = torch.where(aw > 0, w / aw.clamp(min=torch.finfo(aw.dtype).tiny), 0)
            c = self.coef[t].to(zf.real.dtype)
            prod_all = torch.ones_like(xa)
            for x, n in xs:
                prod_all = prod_all * x**n
            # g_x = 2 dT / d conj(x) for each factor x; a stored conjugate gets conj(g)
            contrib = [(a, (unit - 1) * prod_all)]
            for j, ((b, n), (x, _)) in enumerate(zip(factors, xs, strict=True)):
                rest = xa * torch.conj(x) ** (n - 1)
                for i, (y, m) in enumerate(xs):
                    if i != j:
                        rest = rest * torch.conj(y) ** m
                contrib.append((b, (torch.conj(unit) - 1) * n * rest))
            for (idx, conj), gx in contrib:
                where.append(idx)
                adds.append(c * (torch.conj(gx) if conj else gx))
        # out of place (so it runs under torch.func.vmap over the coefficients); repeated
        # indices are summed in the order of the terms
        gz = torch.zeros_like(zf).index_add(-1, torch.tensor(where, device=zf.device),
                                            torch.stack(adds, -1))
        return gz.reshape(zf.shape[:-1] + g.spectral_shape) / g.multiplicity(zf.real.dtype,
                                                                               zf.device)

    def hvp(self, r, v):
        """Hessian-vector product: the forward-mode derivative of the closed-form :meth:`grad`
        along ``v`` (``r`` and ``v`` broadcast together). Unlike the double backward of the
        base class it runs inside ``torch.func`` transforms (the batched design of
        :func:`neurodyn.fitting.core.fit`)."""
        r, v = (x.contiguous() for x in torch.broadcast_tensors(r, v.to(r.dtype)))
        return torch.func.jvp(self.grad, (r,), (v,))[1]

    def config(self):
        return {"family": self.family,
                "terms": [[list(k), [[list(kb), n] for kb, n in fs]] for k, fs in self.terms]}

    @classmethod
    def from_config(cls, config: dict, geometry: Geometry) -> PhaseLockEnergy:
        """Rebuild from :meth:`config` (without the ``family`` key)."""
        config = dict(config)
        terms = config.pop("terms", None)
        if config:
            raise BadInput(f"phaselock energy: unknown keys {sorted(config)}; allowed: "
                             "['terms']")
        if terms is not None:
            terms = [(tuple(k), [(tuple(kb), int(n)) for kb, n in fs]) for k, fs in terms]
        return cls(geometry, terms)
