"""Rate functions ``r = phi(u)`` and their Hopfield integrals ``G(r) = int_0^r phi^{-1}(s) ds``.

Every activation is strictly increasing, so the Hopfield energy

.. math:: E(r) = F(r) - b \\cdot r + \\sum_i G(r_i)

has ``dE/dt <= 0`` along the dynamics ``tau du/dt = -u - grad F(r) + b``. ``G`` is evaluated
from the potential ``u`` (not from ``r``), which keeps it accurate where ``r`` saturates.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as tnf

from _runkit import BadInput, Registry

__all__ = ["Activation", "Logistic", "Tanh", "make_activation", "ACTIVATIONS"]


class Activation(ABC):
    """A strictly increasing rate function with a closed-form Hopfield integral."""

    name: str = ""

    @abstractmethod
    def __call__(self, u: torch.Tensor) -> torch.Tensor:
        """Rates ``phi(u)``, same shape as ``u``."""

    @abstractmethod
    def derivative(self, u: torch.Tensor) -> torch.Tensor:
        """``phi'(u)``, same shape as ``u`` (strictly positive)."""

    @abstractmethod
    def inverse(self, r: torch.Tensor) -> torch.Tensor:
        """``phi^{-1}(r)`` for ``r`` in the open range of ``phi``."""

    @abstractmethod
    def integral(self, u: torch.Tensor) -> torch.Tensor:
        """``G(phi(u)) = int_0^{phi(u)} phi^{-1}(s) ds``, evaluated from ``u``, same shape."""

    def config(self) -> dict:
        """JSON-serialisable parameters, rebuilt by :func:`make_activation`."""
        return {"name": self.name, **asdict(self)}


@dataclass(frozen=True)
class Logistic(Activation):
    """Logistic rates ``phi(u) = r_max / (1 + exp(-gain u))``.

    .. math:: G(r) = \\frac{1}{g}\\left[r \\log r + (r_{max}-r)\\log(r_{max}-r)
              - r_{max}\\log r_{max}\\right]

    Parameters
    ----------
    gain : float
        Slope parameter ``g > 0``.
    rmax : float
        Maximum rate ``> 0``.
    """

    gain: float = 1.0
    rmax: float = 1.0
    name = "logistic"

    def __post_init__(self):
        for key in ("gain", "rmax"):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and v > 0 and v == v and v != float("inf")):
                raise BadInput(f"{key}={v!r}: must be a finite number > 0", param=key)

    def __call__(self, u):
        return self.rmax * torch.sigmoid(self.gain * u)

    def derivative(self, u):
        s = torch.sigmoid(self.gain * u)
        return self.rmax * self.gain * s * (1 - s)

    def inverse(self, r):
        return torch.log(r / (self.rmax - r)) / self.gain

    def integral(self, u):
        x = self.gain * u
        s = torch.sigmoid(x)
        # s log s + (1-s) log(1-s) with log s = -softplus(-x), log(1-s) = -softplus(x)
        return -(self.rmax / self.gain) * (s * tnf.softplus(-x) + (1 - s) * tnf.softplus(x))


@dataclass(frozen=True)
class Tanh(Activation):
    """Signed rates ``phi(u) = tanh(gain u)``.

    .. math:: G(r) = \\frac{1}{g}\\left[r\\,\\mathrm{artanh}(r) + \\tfrac12\\log(1-r^2)\\right]
    """

    gain: float = 1.0
    name = "tanh"

    def __post_init__(self):
        v = self.gain
        if not (isinstance(v, (int, float)) and v > 0 and v != float("inf")):
            raise BadInput(f"gain={v!r}: must be a finite number > 0", param="gain")

    def __call__(self, u):
        return torch.tanh(self.gain * u)

    def derivative(self, u):
        return self.gain / torch.cosh(self.gain * u) ** 2

    def inverse(self, r):
        return torch.atanh(r) / self.gain

    def integral(self, u):
        x = self.gain * u
        # r artanh r + 0.5 log(1 - r^2) with r = tanh x: x tanh x - log cosh x
        logcosh = x.abs() + tnf.softplus(-2 * x.abs()) - torch.log(torch.tensor(2.0, dtype=x.dtype))
        return (x * torch.tanh(x) - logcosh) / self.gain


#: The activation families by name (a :class:`_runkit.Registry`: an unknown name lists the
#: valid ones); register a new :class:`Activation` dataclass with ``ACTIVATIONS.add(name, cls)``.
ACTIVATIONS = Registry("activation")
ACTIVATIONS.add("logistic", Logistic)
ACTIVATIONS.add("tanh", Tanh)


def make_activation(config: dict | None = None) -> Activation:
    """Build an activation from ``{"name": ..., **params}``; unknown names or keys raise.

    Parameters
    ----------
    config : dict or None
        ``{"name": "logistic" | "tanh", **parameters}`` (default: the logistic).

    Returns
    -------
    Activation

    Examples
    --------
    >>> make_activation({"name": "tanh", "gain": 2.0}).name
    'tanh'
    >>> make_activation({"name": "relu"})
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: activation='relu' is not allowed; choose one of logistic, tanh
    """
    config = dict(config or {"name": "logistic"})
    name = config.pop("name", "logistic")
    cls = ACTIVATIONS.get(name)
    allowed = set(cls.__dataclass_fields__)
    unknown = set(config) - allowed
    if unknown:
        raise BadInput(
            f"activation: unknown keys {sorted(unknown)} for {name!r}; allowed: {sorted(allowed)}"
        )
    return cls(**config)
