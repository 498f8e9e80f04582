"""The fit's normal equations streamed state by state, in the spectral domain (large sheets).

:func:`neurodyn.fitting.core.fit` adds, per batch, the normal equations ``A^T A``, ``A^T y``,
``y^T y`` of its three residual terms. The dense way (:func:`~neurodyn.fitting.core._design`)
evaluates the residuals at ``theta = 0`` and at every unit vector ``e_j``: ``P + 1`` copies of
every state (``P`` about 50 on a hex torus), which on a 1,024 x 1,024 sheet is gigabytes per
batch. Here the columns of ``A`` come from the energy's own structure instead:

- the SEAL energy ``F = S + P + L`` is linear in its free entries; the pointwise and locking
  coefficients ("dense" columns: a handful of full vectors) also move the spectral anchor, whose
  slopes are linear in them (:meth:`~neurodyn.energies.seal.SealEnergy.refresh`), so each dense
  column is the part's own gradient (Hessian-vector product, value) with that coefficient set to
  one plus the spectral filter of its anchor slopes;
- every learned curvature coefficient ``c_{k,d}`` of the amplitude family acts on its one mode
  ``k``: its column is one Fourier coefficient (and its conjugate partner), so the inner products
  of those columns are taken in the spectral domain (Parseval, ``sum_i x_i y_i = N sum_k m_k
  Re(X_k conj Y_k)``), and the dense columns are transformed only at those few modes, by a
  per-axis DFT of the modes used (``O(N K)``, ``K`` the curvature band's columns).

One state costs a fixed number of FFTs (about ten per term), whatever ``P``; states are
processed one at a time, so the memory is a few vectors of the sheet. The batch is the fit's own
(:func:`stream_batch` draws exactly the states of :func:`~neurodyn.fitting.core._batch`, with
the nearest manifold point found by a coarse search plus a local refinement on the 4x grid
instead of a 4x-oversampled inverse FFT, which on a large sheet is 16 times its size). Both are
checked against the dense design to 1e-10 (tests/neurodyn/test_sheet.py).

Covered: the ``seal`` family with the amplitude variable on a torus (what a large sheet fits);
anything else raises :class:`_runkit.BadInput` naming what is not covered.
"""

from __future__ import annotations

import math

import torch

from _runkit import BadInput

from ..energies.amplitude import AmplitudeFourierEnergy
from ..energies.coupling import PhaseLockEnergy
from ..energies.pointwise import PointwiseEnergy
from ..energies.seal import SealEnergy
from ..geometry.populations import Torus
from ..manifold import PROBES, TargetManifold, bregman, oblique_projection, probe_directions

__all__ = ["normal_equations", "stream_batch", "StreamedBatch", "nearest_point_local",
           "check_streamable",
           "ModeLock", "DENSE_DESIGN_MAX_NEURONS"]

#: sheets larger than this are fitted with the streamed design by default (``design="auto"``)
DENSE_DESIGN_MAX_NEURONS = 64 * 64

TERMS = ("linear", "field", "energy")


def check_streamable(net) -> None:
    """Raise :class:`_runkit.BadInput` unless ``net`` is a SEAL torus the streamed design covers.

    Parameters
    ----------
    net : HopfieldNetwork
        The network being fitted.
    """
    e = net.energy_fn
    if not isinstance(net.geometry, Torus):
        raise BadInput("design='streamed': covers the torus only; a ring is small enough for "
                       "design='dense'")
    if not isinstance(e, SealEnergy) or not isinstance(e.spectral, AmplitudeFourierEnergy):
        raise BadInput("design='streamed': covers family='seal' with variable='amplitude' only")
    if e.neural is not None:
        raise BadInput("design='streamed': a neural term is not covered")


# ---------------------------------------------------------------------------- the batch
def nearest_point_local(manifold: TargetManifold, u: torch.Tensor, refine: int = 4,
                        factor: int = 4) -> torch.Tensor:
    """:func:`~neurodyn.manifold.nearest_point` without the oversampled grid.

    The overlap ``<phi(u), u*(psi)>`` is maximised on the sheet's own grid (one inverse FFT),
    then on the ``factor``-times finer grid within one cell of that maximum (a separable sum
    over the modes), then refined by the same Newton steps as
    :meth:`~neurodyn.manifold.TargetManifold.distance`: the same point whenever the overlap has
    a single maximum per cell, at a memory of one sheet instead of ``factor**2`` sheets.

    Parameters
    ----------
    manifold : TargetManifold
        A torus manifold.
    u : torch.Tensor, shape (*shape)
        One state's potentials.
    refine, factor : int
        Newton steps; oversampling of the local grid.

    Returns
    -------
    torch.Tensor, shape (2,)
        ``psi_hat`` in ``[0, 2 pi)``.
    """
    g = manifold.geometry
    q = g.dft(manifold.activation(u.to(torch.float64))) * torch.conj(g.dft(manifold.u0))
    corr = g.idft(q)
    idx = int(corr.flatten().argmax())
    n1, n2 = g.shape
    k = g.wavevectors()
    m = g.multiplicity()
    qm = q * m
    fine = [(factor * (idx // n2) + torch.arange(-factor, factor + 1)) % (factor * n1),
            (factor * (idx % n2) + torch.arange(-factor, factor + 1)) % (factor * n2)]
    p1 = 2 * math.pi * fine[0].to(torch.float64) / (factor * n1)
    p2 = 2 * math.pi * fine[1].to(torch.float64) / (factor * n2)
    e1 = torch.exp(1j * p1[:, None] * k[0][:, 0][None, :])  # (F, n1)
    e2 = torch.exp(1j * p2[:, None] * k[1][0][None, :])  # (F, n2h)
    local = (e1 @ qm @ e2.T).real  # (F, F)
    best = int(local.flatten().argmax())
    f = local.shape[1]
    psi = torch.stack([p1[best // f], p2[best % f]])
    kf, qf = k.flatten(1), qm.flatten()
    cell = 2 * math.pi / (factor * max(g.shape))
    for _ in range(refine):  # as TargetManifold.distance
        t = qf * torch.exp(1j * (psi @ kf))
        grad = g.size * -(t.imag @ kf.T)
        hess = -g.size * torch.einsum("k,ak,bk->ab", t.real, kf, kf)
        step = torch.linalg.solve(hess - 1e-12 * torch.eye(2, dtype=hess.dtype),
                                  grad.unsqueeze(-1)).squeeze(-1)
        psi = psi - torch.clamp(step, -cell, cell)
    return torch.remainder(psi, 2 * math.pi)


class StreamedBatch:
    """The states of :func:`neurodyn.fitting.core._batch` for one step, drawn the same way but
    held as the generator's states: a kind's probes or perturbed states are drawn again when
    they are used (:meth:`dirs`, :meth:`u`), so the batch costs no sheet while it waits.

    The nearest points and Bregman divergences are computed once, one state at a time, by
    :func:`nearest_point_local`.

    Parameters
    ----------
    manifold : TargetManifold
        The target manifold (CPU).
    config : FitConfig
        The fit's config (``seed``, ``batch``, ``strength``).
    step : int
        The step whose batch to draw.
    """

    def __init__(self, manifold: TargetManifold, config, step: int):
        g = manifold.geometry
        self.manifold = manifold
        gen = torch.Generator().manual_seed((config.seed * 1_000_003 + step) % 2**64)
        self.psi = g.random_phase(config.batch * len(PROBES), gen)
        self.parts = self.psi.split(config.batch)
        self._dirs, self._fdirs = [], []
        for kind, p in zip(PROBES, self.parts, strict=True):
            self._dirs.append(gen.get_state())
            probe_directions(manifold, p, kind, gen)  # advances the generator as _batch does
        low = 0.1 * config.strength
        s = low + (config.strength - low) * torch.rand(len(self.psi), generator=gen,
                                                       dtype=self.psi.dtype)
        self.s = s.split(config.batch)
        for kind, p in zip(PROBES, self.parts, strict=True):
            self._fdirs.append(gen.get_state())
            probe_directions(manifold, p, kind, gen)
        near, breg = [], []
        for i in range(len(PROBES)):
            for x in self.u(i):
                near.append(nearest_point_local(manifold, x))
                breg.append(bregman(manifold, x, near[-1]))
        self.near, self.bregman = torch.stack(near), torch.stack(breg)

    def _draw(self, state: torch.Tensor, i: int) -> torch.Tensor:
        gen = torch.Generator()
        gen.set_state(state)
        return probe_directions(self.manifold, self.parts[i], PROBES[i], gen)

    def dirs(self, i: int) -> torch.Tensor:
        """The probe directions of kind ``PROBES[i]``: ``(batch, *shape)``."""
        return self._draw(self._dirs[i], i)

    def u(self, i: int) -> torch.Tensor:
        """The perturbed states of kind ``PROBES[i]``: ``(batch, *shape)``."""
        u = self._draw(self._fdirs[i], i)
        for j, (p, s) in enumerate(zip(self.parts[i], self.s[i], strict=True)):
            u[j] = self.manifold.u_star(p) + float(s * self.manifold.norm) * u[j]
        return u

    def materialize(self) -> dict:
        """Every state at once, as :func:`neurodyn.fitting.core._batch` returns them (without
        ``us_near``)."""
        kinds = range(len(PROBES))
        return {"psi": self.psi, "dirs": torch.cat([self.dirs(i) for i in kinds]),
                "u": torch.cat([self.u(i) for i in kinds]), "near": self.near,
                "bregman": self.bregman}


def stream_batch(manifold: TargetManifold, config, step: int) -> StreamedBatch:
    """The batch of ``step`` (:class:`StreamedBatch`), for :func:`normal_equations`."""
    return StreamedBatch(manifold, config, step)


def _kinds(batch):
    """``(psi, dirs, u, near, bregman)`` per kind of a :class:`StreamedBatch` or of the dict
    of :func:`neurodyn.fitting.core._batch`, drawn as they are used."""
    if isinstance(batch, StreamedBatch):
        size = len(batch.parts[0])
        for i in range(len(PROBES)):
            sl = slice(i * size, (i + 1) * size)
            yield (batch.parts[i], lambda i=i: batch.dirs(i), lambda i=i: batch.u(i),
                   batch.near[sl], batch.bregman[sl])
        return
    size = batch["psi"].shape[0] // len(PROBES)
    for i in range(len(PROBES)):
        sl = slice(i * size, (i + 1) * size)
        yield (batch["psi"][sl], lambda sl=sl: batch["dirs"][sl], lambda sl=sl: batch["u"][sl],
               batch["near"][sl], batch["bregman"][sl])


# ---------------------------------------------------------------------------- the columns
class _Basis:
    """What the columns share: the anchor's slopes as affine functions of the dense
    coefficients, the curvature slots ``(mode, power)`` and the per-axis DFT of their modes."""

    def __init__(self, net, manifold: TargetManifold):
        check_streamable(net)
        e, g = net.energy_fn, net.geometry
        e.refresh()
        sp = e.spectral
        self.net, self.g, self.manifold, self.act = net, g, manifold, net.activation
        self.scale, self.eps = sp.scale, sp.eps
        self.astar = torch.sqrt(sp.anchor_x + sp.eps)
        self.mult = g.multiplicity()
        self.dense = [(part, i) for part in e.others()
                      for i in (part.mask.bool() if part is e.pointwise
                                else torch.ones_like(part.coef, dtype=bool)).nonzero()[:, 0]]
        rs = self.act(e.u0)
        z = g.dft(rs)
        den = z.real**2 + z.imag**2

        def c1(t):  # the anchor's first coefficient for the remainder t (SealEnergy.refresh)
            slope = -(g.dft(t) * torch.conj(z)).real / (2 * (den + 1e-18 * den.max()))
            return 2 * self.astar * (slope * sp.mask)

        self.c1_zero = c1(e.bias - e.u0)
        self.c1 = []
        for part, i in self.dense:
            with _unit(part, i):
                self.c1.append(c1(-part.grad(rs)))
        mask = e.curvature_mask.unsqueeze(-1).expand(sp.coef.shape).clone()
        mask[..., 0] = False
        slots = mask.flatten().nonzero()[:, 0]
        self.bins, self.power = slots // sp.degree, slots % sp.degree
        self._axis_tables()

    def _axis_tables(self) -> None:
        """Rows and columns of the curvature modes, their DFT tables and Parseval weights."""
        g = self.g
        n1, n2 = g.shape
        h = g.spectral_shape[1]
        rows, cols = torch.unique(self.bins // h), torch.unique(self.bins % h)
        rows = torch.unique(torch.cat([rows, (-rows) % n1]))  # conjugate partners included
        self.rows, self.cols = rows, cols
        k1 = torch.fft.fftfreq(n1, 1.0 / n1, dtype=torch.float64)[rows]
        self.e1 = torch.exp(-2j * math.pi * k1[:, None] * torch.arange(n1) / n1) / n1
        self.e2 = torch.exp(-2j * math.pi * cols.to(torch.float64)[None, :]
                            * torch.arange(n2)[:, None] / n2) / n2
        self.weight = g.size * self.mult[rows][:, cols].flatten()
        where = {(int(r), int(c)): i * len(cols) + j for i, r in enumerate(rows)
                 for j, c in enumerate(cols)}
        edge = (cols == 0) | ((n2 % 2 == 0) & (cols == n2 // 2))
        self.slot_at, self.partner = [], []
        for b in self.bins.tolist():
            r, c = divmod(b, h)
            self.slot_at.append(where[(r, c)])
            partner = where.get(((-r) % n1, c)) if bool(edge[cols == c]) else None
            self.partner.append(partner)

    # ------------------------------------------------------------------ spectral pieces
    def amplitude(self, z: torch.Tensor):
        """``a = sqrt(p / s + eps)`` and ``y = a - a*`` of a spectrum."""
        a = torch.sqrt((z.real**2 + z.imag**2) / self.scale + self.eps)
        return a, a - self.astar

    def sparse_spectra(self, values: torch.Tensor) -> torch.Tensor:
        """The DFT, on the curvature modes, of ``idft`` of one value at each slot's mode.

        ``irfft`` keeps the Hermitian part of a mode on the self-conjugate columns, so a value
        there splits into halves on the mode and its partner (a self-conjugate mode keeps its
        real part). Returns ``(slots, rows * cols)``, complex.
        """
        out = torch.zeros(len(values), len(self.rows) * len(self.cols), dtype=torch.complex128)
        for i, (v, at, partner) in enumerate(zip(values, self.slot_at, self.partner,
                                                 strict=True)):
            if partner is None:
                out[i, at] = v
            elif partner == at:
                out[i, at] = v.real
            else:
                out[i, at] += v / 2
                out[i, partner] += torch.conj(v) / 2
        return out

    def on_modes(self, x: torch.Tensor) -> torch.Tensor:
        """DFT of real sheets ``x (C, n1, n2)`` on the curvature modes only: ``(C, R * K)``."""
        x = x.to(torch.float64)
        cols = torch.complex(x @ self.e2.real, x @ self.e2.imag)  # (C, n1, K): no complex sheet
        return (self.e1 @ cols).flatten(1)


class _unit:
    """Context: a part's coefficients set to the unit vector ``e_i``, restored afterwards."""

    def __init__(self, part, i):
        self.part, self.i = part, int(i)

    def __enter__(self):
        self.saved = self.part.coef.detach().clone()
        with torch.no_grad():
            self.part.coef.zero_()
            self.part.coef[self.i] = 1.0
        return self.part

    def __exit__(self, *exc):
        with torch.no_grad():
            self.part.coef.copy_(self.saved)


def _gram(basis: _Basis, x: torch.Tensor, sparse: torch.Tensor) -> tuple:
    """``(A^T A, A^T y, y^T y)`` of one state whose columns are the sheets ``x[:-1]`` (in
    theta's order, first) and one-mode columns of values ``sparse`` (the curvature slots,
    last), with ``y = x[-1]``."""
    pd = x.shape[0] - 1
    x = x.flatten(1)
    near = x @ x.T  # neuron space: exact
    xs = basis.sparse_spectra(sparse)  # (Ps, M)
    xm = basis.on_modes(x.reshape((-1,) + basis.g.shape))  # (Pd + 1, M)
    w = basis.weight
    cross = ((xm * w) @ torch.conj(xs).T).real  # (Pd + 1, Ps)
    ss = ((xs * w) @ torch.conj(xs).T).real
    ata = torch.cat([torch.cat([near[:pd, :pd], cross[:pd]], 1),
                     torch.cat([cross[:pd].T, ss], 1)], 0)
    aty = torch.cat([near[:pd, pd], cross[pd]])
    return ata, aty, near[pd, pd]


class ModeLock:
    """A phase-locking energy evaluated on its own few modes of a large sheet.

    The locking energy, its gradient's spectrum and their derivatives are functions of the
    coefficients of the terms' modes alone, the same on every sheet that holds those modes (the
    sheet size cancels between ``N`` in ``F`` and ``1/N`` in ``z``). They are evaluated on an
    8 x 8 (or just large enough) copy; the large sheet only supplies and receives the values at
    ``index`` (flat indices into its half spectrum). Derivatives are taken in reverse mode (the
    first use of torch's forward mode costs 80 MB of resident memory).

    Parameters
    ----------
    part : PhaseLockEnergy
        The locking energy of the large sheet (its coefficients are copied).

    Examples
    --------
    >>> lock = PhaseLockEnergy(Torus(32, 32))
    >>> _ = lock.coef.data.fill_(2.0)
    >>> r = 0.5 + 0.2 * torch.rand(32, 32, dtype=torch.float64,
    ...                            generator=torch.Generator().manual_seed(0))
    >>> small = ModeLock(lock)
    >>> zf = lock.geometry.dft(r).flatten()
    >>> gz = torch.zeros_like(zf).index_copy(0, small.index, small.grad(zf[small.index]))
    >>> bool(torch.allclose(lock.geometry.idft(gz.reshape(32, 17)), lock.grad(r)))
    True
    """

    def __init__(self, part: PhaseLockEnergy):
        g = part.geometry
        top = max(abs(int(x)) for k, fs in part.terms for w in [k] + [kb for kb, _ in fs]
                  for x in w)
        side = max(8, 2 * top + 2)
        self.small = Torus(side, side, g.lattice)
        self.lock = PhaseLockEnergy(self.small, part.terms)
        with torch.no_grad():
            self.lock.coef.copy_(part.coef)
        self.size = g.size
        self.index = torch.tensor(sorted({i for a, fs in part._index
                                          for i, _ in [a] + [b for b, _ in fs]}))
        k = g.wavevectors().flatten(1)[:, self.index].long()  # stored modes: k2 >= 0
        h = self.small.spectral_shape[1]
        self.mine = torch.tensor([(k1 % side) * h + k2 for k1, k2 in k.T.tolist()])

    def _on_small(self, zb: torch.Tensor) -> torch.Tensor:
        full = torch.zeros(math.prod(self.small.spectral_shape), dtype=zb.dtype)
        return full.index_copy(0, self.mine, zb)

    def grad(self, zb: torch.Tensor) -> torch.Tensor:
        """The gradient's spectrum on ``index`` from the rates' coefficients ``zb`` there."""
        with torch.no_grad():
            return self.lock.grad_spectrum(self._on_small(zb)).flatten()[self.mine]

    def value(self, zb: torch.Tensor) -> torch.Tensor:
        """The energy ``N sum_t gamma_t (|w_t| - Re w_t)`` of the large sheet."""
        with torch.no_grad():
            val = sum(c * (w.abs() - w.real) for c, (*_, w) in
                      zip(self.lock.coef.to(zb.real.dtype),
                          self.lock._monomials(self._on_small(zb)), strict=True))
        return self.size * val

    def hvp(self, zb: torch.Tensor, zt: torch.Tensor) -> torch.Tensor:
        """The derivative of :meth:`grad` along the coefficients ``zt`` of the direction."""
        with torch.enable_grad():  # J t as the derivative of J^T w in w
            x = torch.stack([zb.real, zb.imag]).detach().requires_grad_(True)
            out = self.lock.grad_spectrum(self._on_small(torch.complex(x[0], x[1])))
            out = out.flatten()[self.mine]
            out = torch.stack([out.real, out.imag])
            w = torch.zeros_like(out, requires_grad=True)
            (jw,) = torch.autograd.grad(out, x, w, create_graph=True)
            (jt,) = torch.autograd.grad(jw, w, torch.stack([zt.real, zt.imag]))
        return torch.complex(jt[0], jt[1])


def _part_hvp(part, r, v, z, zv) -> torch.Tensor:
    """``part.hvp(r, v)``; phase locking through :class:`ModeLock` (a few modes)."""
    if not isinstance(part, PhaseLockEnergy):
        return part.hvp(r, v)
    g, lock = part.geometry, ModeLock(part)
    dz = lock.hvp(z.flatten()[lock.index], zv.flatten()[lock.index])
    out = torch.zeros(math.prod(g.spectral_shape), dtype=dz.dtype).index_copy(0, lock.index, dz)
    return g.idft(out.reshape(g.spectral_shape))


def _columns(basis: _Basis, shape) -> torch.Tensor:
    """An empty ``(dense columns + 1, *shape)`` float64 buffer for one state's sheets."""
    return torch.empty((len(basis.dense) + 1,) + tuple(shape), dtype=torch.float64)


def _probe_state(basis: _Basis, config, psi: torch.Tensor, d: torch.Tensor, scale: float):
    """Columns of the linear term at one probe: ``tau J d = -kappa P d`` (see ``_residuals``).

    The spectral part of every column is ``-2 idft(c1 q)`` with one spectrum ``q`` per state;
    sheets are released (or overwritten) as soon as they are used.
    """
    g, act, m = basis.g, basis.act, basis.manifold
    x = _columns(basis, d.shape)
    us = m.u_star(psi)
    dr = act.derivative(us)
    tang = m.tangents(psi).flatten(0, -2)
    x[-1] = oblique_projection(d.flatten()[None], tang[None],
                               (dr.flatten()[:, None] * tang)[None]).reshape(d.shape)
    del tang
    rs = act(us)
    del us
    v = dr.mul_(d)
    z, zv = g.dft(rs), g.dft(v)
    for col, (part, i) in enumerate(basis.dense):
        with _unit(part, i):
            x[col] = _part_hvp(part, rs, v, z, zv)
    del rs, v
    a, yy = basis.amplitude(z)
    dp = 2 * (z.real * zv.real + z.imag * zv.imag)
    b, j, s = basis.bins, basis.power.to(torch.float64), basis.scale
    ab, yb, sb = a.flatten()[b], yy.flatten()[b], s.flatten()[b]
    f1 = yb**j / (2 * ab)
    f2 = (ab * j * yb ** (j - 1).clamp(min=0) - yb**j) / (4 * sb * ab**3)
    sparse = 2 * (f2 * dp.flatten()[b] * z.flatten()[b] + f1 * zv.flatten()[b]) * scale
    del yy
    q = zv.div_(2 * a)  # the anchor term's Hessian-vector product is -2 idft(c1 q)
    q.sub_(z.mul_(dp.div_(4 * s * a**3)))
    del z, dp, a
    x[-1].mul_(-config.kappa).add_(d).add_(g.idft(basis.c1_zero * q).mul_(-2)).mul_(scale)
    for col, c1 in enumerate(basis.c1):
        x[col].add_(g.idft(c1 * q).mul_(-2)).mul_(-scale)
    return _gram(basis, x, sparse)


def _field_state(basis: _Basis, config, u: torch.Tensor, near: torch.Tensor, scale: float):
    """Columns of the field term at one perturbed state: ``tau f(u) = -kappa (u - u*)``."""
    g, act, net = basis.g, basis.act, basis.net
    x = _columns(basis, u.shape)
    x[-1] = u - basis.manifold.u_star(near)
    scale = scale / (config.kappa * float(x[-1].norm()))
    r = act(u)
    z = g.dft(r)
    for col, (part, i) in enumerate(basis.dense):
        with _unit(part, i):
            x[col] = part.grad(r)
    del r
    a, yy = basis.amplitude(z)
    b, j = basis.bins, basis.power.to(torch.float64)
    sparse = 2 * (yy.flatten()[b] ** j / (2 * a.flatten()[b])) * z.flatten()[b] * scale
    del yy
    q = z.div_(2 * a)  # the anchor term's gradient is -2 idft(c1 q)
    del a
    x[-1].mul_(-config.kappa).add_(u).add_(g.idft(basis.c1_zero * q).mul_(-2))
    x[-1].sub_(net.energy_fn.bias).mul_(scale)
    for col, c1 in enumerate(basis.c1):
        x[col].add_(g.idft(c1 * q).mul_(-2)).mul_(-scale)
    return _gram(basis, x, sparse)


#: rows of the sheet per chunk of the energy term's sums over neurons
_ROWS = 64


def _pointwise_value(part: PointwiseEnergy, i: int, r: torch.Tensor) -> torch.Tensor:
    """``sum h(r)`` of basis function ``i`` of a pointwise energy (its ``forward`` with the
    unit coefficient ``e_i``), on any block of neurons."""
    if i == 0:
        return part.activation.integral(part._potential(r)).sum()
    return part.width * (((r - part.lo) / part.width) ** (i + 1)).sum() / (i + 1)


def _energy_state(basis: _Basis, u: torch.Tensor, target: float, scale: float):
    """The energy term's row at one perturbed state: ``E(u) - E(M) = kappa B``; the sums over
    neurons are taken in blocks of :data:`_ROWS` rows."""
    g, act, net = basis.g, basis.act, basis.net
    u0 = basis.manifold.u0
    z, z0 = g.dft(act(u)), g.dft(act(u0))
    b, j = basis.bins, basis.power.to(torch.float64)
    yy, yy0 = basis.amplitude(z)[1], basis.amplitude(z0)[1]
    f0 = (yy.flatten()[b] ** (j + 1) - yy0.flatten()[b] ** (j + 1)) / (j + 1)
    dy = yy.sub_(yy0).mul_(basis.mult * basis.scale)
    del yy0

    def spec(c1):  # -N sum_k m_k f_k, f_k = s c1 y, at u minus at u0
        return -g.size * (dy * c1).sum()

    bias = float(net.bias)
    rest = torch.zeros((), dtype=torch.float64)
    row = torch.zeros(len(basis.dense), dtype=torch.float64)
    for lo in range(0, g.shape[0], _ROWS):
        uc, u0c = u[lo:lo + _ROWS], u0[lo:lo + _ROWS]
        rc, r0c = act(uc), act(u0c)
        rest += (act.integral(uc) - act.integral(u0c) - bias * (rc - r0c)).sum()
        for col, (part, i) in enumerate(basis.dense):
            if isinstance(part, PointwiseEnergy):
                row[col] += _pointwise_value(part, i, rc) - _pointwise_value(part, i, r0c)
    for col, ((part, i), c1) in enumerate(zip(basis.dense, basis.c1, strict=True)):
        if isinstance(part, PhaseLockEnergy):
            with _unit(part, i):
                lock = ModeLock(part)
            idx = lock.index
            row[col] += lock.value(z.flatten()[idx]) - lock.value(z0.flatten()[idx])
        row[col] += spec(c1)
    rise = spec(basis.c1_zero) + rest
    row = torch.cat([row, -g.size * basis.mult.flatten()[b] * basis.scale.flatten()[b] * f0])
    row, y = row * scale / target, -(rise - target) * scale / target
    return torch.outer(row, row), row * y, y * y


def normal_equations(net, manifold: TargetManifold, config, batch: dict) -> dict:
    """The normal equations of one batch's three terms, streamed state by state.

    Equal (to rounding) to ``A^T A``, ``A^T y``, ``y^T y`` of the dense design
    :func:`neurodyn.fitting.core._design` on the same batch, at a memory of a few sheets and a
    fixed number of FFTs per state.

    Parameters
    ----------
    net : HopfieldNetwork
        The network being fitted (a SEAL torus, :func:`check_streamable`); its coefficients are
        left as they are (the design does not depend on them).
    manifold : TargetManifold
        The target manifold.
    config : FitConfig
        The fit's config (``kappa``).
    batch : StreamedBatch or dict
        :func:`stream_batch` (or the dict of ``core._batch``) of the step.

    Returns
    -------
    dict
        ``{term: {"ata": (P, P), "aty": (P,), "yty": ()}}`` for the terms ``linear``,
        ``field`` and ``energy``, float64 on the CPU.
    """
    with torch.no_grad():  # no graph of the coefficients (they require grad)
        basis = _Basis(net, manifold)
    count = len(batch.psi) if isinstance(batch, StreamedBatch) else batch["dirs"].shape[0]
    root = 1.0 / math.sqrt(count)
    sums = {term: None for term in TERMS}

    def add(term, parts):
        sums[term] = parts if sums[term] is None else tuple(
            s + x for s, x in zip(sums[term], parts, strict=True))

    with torch.no_grad():
        for psi, dirs, us, near, breg in _kinds(batch):
            for p, d in zip(psi, dirs(), strict=True):
                add("linear", _probe_state(basis, config, p, d, root / config.kappa))
            for u, q, t in zip(us(), near, breg, strict=True):
                add("field", _field_state(basis, config, u, q, root))
                add("energy", _energy_state(basis, u, float(config.kappa * t), root))
    return {term: dict(zip(("ata", "aty", "yty"), sums[term], strict=True)) for term in TERMS}

