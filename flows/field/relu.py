"""The two-layer ReLU velocity field of flow matching.

    v(x, t[, c]) = (1 / sqrt(m)) A^T relu(W z),   z = [x, t, phi(t), e_c, 1]  (optionally / ||z||)

with W in R^{m x p} (rows ~ N(0, I) at init), A in R^{m x d}, phi(t) optional Fourier features
[sin 2 pi k t, cos 2 pi k t]_{k=1..F} and, for a class-conditional field with K classes, e_c the
one-hot vector of the label c (all zeros for the null label c = K, the unconditional field of
classifier-free guidance). In the "theory" regime A has fixed entries +-1 and only W is
trained; in the "practice" regime both are (A ~ N(0, 1) at init).

The gradients of the squared loss are computed directly as matrix products
(:meth:`TwoLayerReLUField.loss_and_grads`), which avoids autograd bookkeeping in training.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
from torch import nn

from ..errors import FlowsError, as_generator, check_choice, check_positive_int

REGIMES = ("theory", "practice")

# Largest d * p for which loss_and_grads works from the activation pattern alone.
_PATTERN_MAX = 32


@dataclass(frozen=True)
class FieldSpec:
    """Shape and options of a :class:`TwoLayerReLUField` (stored with every checkpoint).

    Attributes
    ----------
    dim : int
        Data dimension d.
    width : int
        Hidden width m.
    regime : str
        "theory" (A fixed at +-1) or "practice" (A trained).
    normalize : bool
        Divide z by its Euclidean norm (the inputs of the kernel theory lie on the sphere).
    fourier : int
        Number F of Fourier frequencies of t appended to z (0: none).
    classes : int
        Number K of class labels (0: unconditional); z gets K one-hot columns.
    """

    dim: int
    width: int
    regime: str = "practice"
    normalize: bool = False
    fourier: int = 0
    classes: int = 0

    def __post_init__(self) -> None:
        check_positive_int("dim", self.dim)
        check_positive_int("width", self.width)
        check_choice("regime", self.regime, REGIMES)
        if isinstance(self.fourier, bool) or not isinstance(self.fourier, int) or self.fourier < 0:
            raise FlowsError(f"fourier={self.fourier!r} is not allowed; it must be an int >= 0")
        if isinstance(self.classes, bool) or not isinstance(self.classes, int) or self.classes < 0:
            raise FlowsError(f"classes={self.classes!r} is not allowed; it must be an int >= 0")

    @property
    def in_features(self) -> int:
        """p = d + 2 + 2F + K: the length of z."""
        return self.dim + 2 + 2 * self.fourier + self.classes

    def to_dict(self) -> dict:
        """Plain dict (JSON-serialisable)."""
        return asdict(self)


def features(x: torch.Tensor, t: torch.Tensor | float, fourier: int = 0,
             normalize: bool = False, c: torch.Tensor | None = None,
             classes: int = 0) -> torch.Tensor:
    """Input features z = [x, t, sin 2 pi k t, cos 2 pi k t (k = 1..F), e_c, 1], optionally / ||z||.

    Parameters
    ----------
    x : torch.Tensor, shape (B, d)
    t : float or torch.Tensor, shape (), (B,) or (B, 1)
    fourier : int
        Number F of Fourier frequencies.
    normalize : bool
        Return z / ||z||.
    c : torch.Tensor of int64, shape (B,), or None
        Labels in 0..K (K: the null label, a zero one-hot); required when ``classes`` > 0.
    classes : int
        Number K of classes (0: no label columns).

    Returns
    -------
    torch.Tensor, shape (B, d + 2 + 2F + K)
    """
    b = x.shape[0]
    t = torch.as_tensor(t, dtype=x.dtype, device=x.device)
    t = t.reshape(-1, 1).expand(b, 1) if t.numel() in (1, b) else t
    cols = [x, t]
    if fourier:
        k = torch.arange(1, fourier + 1, dtype=x.dtype, device=x.device) * (2 * math.pi)
        cols += [torch.sin(t * k), torch.cos(t * k)]
    if classes:
        if c is None:
            raise FlowsError(f"this field has classes={classes}; pass labels c of shape ({b},) "
                             f"with values in 0..{classes} ({classes}: no label)")
        onehot = torch.zeros(b, classes + 1, dtype=x.dtype, device=x.device)
        onehot.scatter_(1, c.reshape(-1, 1).to(x.device), 1.0)
        cols.append(onehot[:, :classes])
    cols.append(torch.ones(b, 1, dtype=x.dtype, device=x.device))
    z = torch.cat(cols, dim=1)
    return z / z.norm(dim=1, keepdim=True) if normalize else z


class TwoLayerReLUField(nn.Module):
    """Two-layer ReLU velocity field v(x, t) = m^{-1/2} A^T relu(W z(x, t)).

    Parameters
    ----------
    spec : FieldSpec
        Dimension, width, regime and input options.
    seed : int or torch.Generator
        Initialisation: rows of W ~ N(0, I_p); A = +-1 (theory) or N(0, 1) (practice).

    Attributes
    ----------
    W : torch.nn.Parameter, shape (m, p)
    A : torch.nn.Parameter, shape (m, d); ``requires_grad`` is False in the theory regime.

    Examples
    --------
    >>> f = TwoLayerReLUField(FieldSpec(dim=2, width=64), seed=0)
    >>> f(torch.zeros(5, 2), 0.5).shape
    torch.Size([5, 2])
    """

    def __init__(self, spec: FieldSpec, seed: int | torch.Generator) -> None:
        super().__init__()
        self.spec = spec
        g = as_generator(seed)
        m, p, d = spec.width, spec.in_features, spec.dim
        self.W = nn.Parameter(torch.randn(m, p, generator=g))
        if spec.regime == "theory":
            a = torch.randint(0, 2, (m, d), generator=g).float() * 2 - 1
            self.A = nn.Parameter(a, requires_grad=False)
        else:
            self.A = nn.Parameter(torch.randn(m, d, generator=g))
        self.scale = 1.0 / math.sqrt(m)

    def features(self, x: torch.Tensor, t: torch.Tensor | float,
                 c: torch.Tensor | None = None) -> torch.Tensor:
        """z(x, t[, c]), shape (B, p); see :func:`features`."""
        return features(x, t, self.spec.fourier, self.spec.normalize, c, self.spec.classes)

    def forward(self, x: torch.Tensor, t: torch.Tensor | float,
                c: torch.Tensor | None = None) -> torch.Tensor:
        """v(x, t[, c]) = m^{-1/2} A^T relu(W z), x of shape (B, d), returns (B, d)."""
        return torch.relu(self.features(x, t, c) @ self.W.T) @ self.A * self.scale

    def divergence(self, x: torch.Tensor, t: torch.Tensor | float,
                   c: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor] | None:
        """v and its exact divergence in closed form, or None when z is normalised.

        div v = m^{-1/2} sum_j 1[w_j . z > 0] sum_k A_jk W_jk (k over the d coordinates of x),
        one product instead of d autograd passes. Returns (v (B, d), div (B,)).
        """
        if self.spec.normalize:
            return None
        d = self.spec.dim
        h = self.features(x, t, c) @ self.W.T
        gain = (self.A * self.W[:, :d]).sum(1) * self.scale  # (m,)
        v = torch.relu(h) @ self.A * self.scale
        return v, (h > 0).to(x.dtype) @ gain

    def forward_z(self, z: torch.Tensor) -> torch.Tensor:
        """v from precomputed features z, shape (B, p) -> (B, d)."""
        return torch.relu(z @ self.W.T) @ self.A * self.scale

    @torch.no_grad()
    def loss_and_grads(self, z: torch.Tensor, target: torch.Tensor, grad_a: bool = True
                       ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Squared loss and its exact gradients, computed as matrix products.

        L = (1/B) sum_i ||v(z_i) - u_i||^2. Everything follows from the activation pattern
        M = 1[Z W^T > 0] (B x m), because relu(h) = M * h:

        - v_il = m^{-1/2} sum_k z_ik P_i(k,l) with P = M G, G_j(k,l) = W_jk A_jl;
        - with R = 2 (V - U) / B and Q = M^T [R_1 * Z, ..., R_d * Z] (m x d p):
          dL/dW_jk = m^{-1/2} sum_l A_jl Q_j(l,k),  dL/dA_jl = m^{-1/2} sum_k W_jk Q_j(l,k).

        For small d p this takes two (B x m)-by-(m x d p) products and one elementwise pass over
        the B x m activations. Otherwise (high-dimensional data) the usual chain rule is
        cheaper: with H = Z W^T, S = relu(H),
        dL/dA = m^{-1/2} S^T R,   dL/dW = m^{-1/2} ((R A^T) * M)^T Z.

        Parameters
        ----------
        z : torch.Tensor, shape (B, p)
            Features (see :meth:`features`).
        target : torch.Tensor, shape (B, d)
            Regression target u.
        grad_a : bool
            Also return dL/dA (skipped in the theory regime).

        Returns
        -------
        loss : torch.Tensor, shape ()
        grad_w : torch.Tensor, shape (m, p)
        grad_a : torch.Tensor, shape (m, d), or None
        """
        w, a = self.W, self.A
        (b, p), (m, d) = z.shape, a.shape
        if p * d > _PATTERN_MAX:
            return self._chain_rule(z, target, grad_a)
        mask = (z @ w.T).gt_(0)  # M (B x m) as 0/1 floats, in place of the pre-activations
        # outputs and gradients are formed transposed, (d p) x B and (d p) x m: products with a
        # short left factor and a contiguous M are the fast ones on CPU
        g_t = (w.T.unsqueeze(1) * a.T.unsqueeze(0)).view(p * d, m)
        z_t = z.T.contiguous()
        v_t = ((g_t @ mask.T).view(p, d, b) * z_t.unsqueeze(1)).sum(0)
        resid = v_t.mul_(self.scale).sub_(target.T)  # (d, B)
        flat = resid.view(-1)
        loss = torch.dot(flat, flat) / b
        zr_t = (resid.mul_(2.0 * self.scale / b).unsqueeze(1) * z_t.unsqueeze(0)).view(d * p, b)
        q_t = (zr_t @ mask).view(d, p, m)
        gw = (q_t * a.T.unsqueeze(1)).sum(0).T
        ga = (q_t * w.T.unsqueeze(0)).sum(1).T if grad_a else None
        return loss, gw, ga

    def _chain_rule(self, z: torch.Tensor, target: torch.Tensor, grad_a: bool
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """:meth:`loss_and_grads` by the chain rule (used when d p is large)."""
        b = z.shape[0]
        h = z @ self.W.T
        s = torch.relu(h)
        resid = (s @ self.A).mul_(self.scale).sub_(target)
        flat = resid.view(-1)
        loss = torch.dot(flat, flat) / b
        resid.mul_(2.0 * self.scale / b)
        ds = torch.ops.aten.threshold_backward(resid @ self.A.T, h, 0.0)
        gw = ds.T @ z
        ga = s.T @ resid if grad_a else None
        return loss, gw, ga
