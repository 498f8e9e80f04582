"""The configuration of a SEAL fit (:func:`neurodyn.fit.fit`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from _runkit import BadInput
from _runkit.seeds import check_seed

__all__ = ["FitConfig", "FAMILIES"]

#: largest normal attraction rate a fit accepts (1/tau)
MAX_KAPPA = 1e6

FAMILIES = ("seal", "spectral", "mlp", "template")


@dataclass(frozen=True)
class FitConfig:
    """Everything that defines a fit; unknown keys raise :class:`_runkit.BadInput` in
    :meth:`from_dict`.

    Attributes
    ----------
    geometry : ``"ring"`` or ``"torus"``; n : ring size or ``(n1, n2)`` (None: 128 / (32, 32));
        lattice : ``"hex"`` or ``"square"``.
    gain, rmax : logistic rate function; a, c : target bump ``u* = a + c p``; tau : time unit.
    kappa : prescribed normal attraction rate, in ``1/tau``, at most :data:`MAX_KAPPA`.
    profile : the target bump (:mod:`neurodyn.fitting.profiles`): ``"cosine"`` (today's bump),
        ``"von-mises:K"``, ``"flat-top:W"``, ``"asymmetric:S"``, a ``.npy`` file of rates, or an
        array / tensor of rates (kept as nested tuples).
    family : ``"seal"`` (spectral + pointwise [+ phase locking]), ``"spectral"`` (the power
        spectrum alone, the control that cannot reach phase directions), ``"mlp"`` (a neural
        energy of width ``hidden`` trained by Adam, ``steps`` steps at learning rate ``lr``;
        see :mod:`neurodyn.fitting.neural`) or ``"template"`` (a learned template,
        :mod:`neurodyn.energies.template`); None: ``seal`` for the cosine profile,
        ``template`` for any other.
    bandwidth : modes with ``max |k_a| <= bandwidth`` have learned curvature (None: 4 for the
        ring, 2 for the torus); family template: the template's harmonics per axis (None: all
        but the Nyquist mode); degree : terms per mode (None: 5 ring, 4 torus).
        pointwise_degree, pointwise_inverse : the pointwise basis.
        phaselock : include phase-locking terms (None: for the torus only).
        variable : the spectral polynomials' variable, ``"amplitude"`` ``|z_k|`` or
        ``"power"`` ``|z_k|^2`` (see :class:`~neurodyn.energies.seal.SealEnergy`).
    steps : sampled batches; batch : manifold points per batch (each gives one probe of every
        kind and one finite perturbation of every kind).
    weight_linear, weight_field, weight_energy : weights of the residuals.
    strength : largest relative size of the finite perturbations (drawn from a tenth of it).
    ridge : ridge regularisation, relative to the mean diagonal of the normal equations.
    bias : uniform input ``b`` (redundant with the mode-0 energy, so set, not learned).
    kappa_tol : relative tolerance of every normal eigenvalue (None: 0.05 ring, 0.10 torus);
        check_kappa : raise :class:`FitFailed` when it is missed.
    seed, checkpoint_every : seeds the batches (an integer in ``[0, 2**63)``); steps between
        checkpoints.
    device : ``"cpu"`` or ``"cuda"`` (``"cuda:I"``): where the network, the targets and the
        batched design run. Batches are drawn on the CPU and checkpoints hold CPU tensors, so
        a fit resumed on another device continues the same one (the key is not checked on
        resume).
    """

    geometry: str = "ring"
    n: int | tuple[int, int] | None = None
    lattice: str = "hex"
    gain: float = 1.0
    rmax: float = 1.0
    a: float = -2.0
    c: float = 4.0
    tau: float = 1.0
    kappa: float = 1.0
    family: str | None = None
    profile: str | tuple = "cosine"
    bandwidth: int | None = None
    degree: int | None = None
    pointwise_degree: int = 3
    pointwise_inverse: bool = True
    phaselock: bool | None = None
    variable: str = "amplitude"
    steps: int = 4
    batch: int = 8
    hidden: int = 32
    lr: float = 3e-3
    weight_linear: float = 1.0
    weight_field: float = 0.1
    weight_energy: float = 0.01
    strength: float = 0.3
    ridge: float = 1e-10
    bias: float = 0.0
    kappa_tol: float | None = None
    check_kappa: bool = True
    seed: int = 0
    checkpoint_every: int = 1
    device: str = "cpu"

    def __post_init__(self):
        if self.geometry not in ("ring", "torus"):
            raise BadInput(f"geometry={self.geometry!r}: choose one of ('ring', 'torus')",
                           param="geometry")
        if self.variable not in ("amplitude", "power"):
            raise BadInput(f"variable={self.variable!r}: choose one of ('amplitude', 'power')",
                           param="variable")
        from .profiles import check_profile_spec

        object.__setattr__(self, "profile", check_profile_spec(self.profile))
        if self.family is None:
            object.__setattr__(self, "family",
                               "seal" if self.profile == "cosine" else "template")
        if self.family not in FAMILIES:
            raise BadInput(f"family={self.family!r}: choose one of {FAMILIES}", param="family")
        for key in ("gain", "rmax", "c", "tau", "kappa", "strength", "lr"):
            v = getattr(self, key)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v)
                                           and v > 0):
                raise BadInput(f"{key}={v!r}: must be a finite number > 0", param=key)
        if isinstance(self.a, bool) or not (isinstance(self.a, (int, float))
                                            and math.isfinite(self.a)):
            raise BadInput(f"a={self.a!r}: must be a finite number", param="a")
        for key in ("weight_linear", "weight_field", "weight_energy", "ridge"):
            v = getattr(self, key)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v)
                                           and v >= 0):
                raise BadInput(f"{key}={v!r}: must be a finite number >= 0", param=key)
        if self.weight_linear + self.weight_field + self.weight_energy <= 0:
            raise BadInput("weight_linear, weight_field, weight_energy: one must be > 0")
        for key, lo in (("steps", 0), ("batch", 1), ("checkpoint_every", 1), ("hidden", 1),
                        ("pointwise_degree", 0)):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise BadInput(f"{key}={v!r}: must be an integer >= {lo}", param=key)
        if self.degree is not None and (isinstance(self.degree, bool) or not isinstance(
                self.degree, int) or not 2 <= self.degree <= 8):
            raise BadInput(f"degree={self.degree!r}: must be None or an integer in [2, 8]",
                           param="degree")
        if self.bandwidth is not None and (isinstance(self.bandwidth, bool) or not isinstance(
                self.bandwidth, int) or self.bandwidth < 0):
            raise BadInput(f"bandwidth={self.bandwidth!r}: must be None or an integer >= 0",
                           param="bandwidth")
        if self.kappa > MAX_KAPPA:
            raise BadInput(f"kappa={self.kappa!r}: must be <= {MAX_KAPPA:g} (in 1/tau; beyond it "
                           "the tangent's zero eigenvalue is lost in the normal ones' rounding)",
                           param="kappa")
        if self.kappa_tol is not None and not (0 < self.kappa_tol < 1):
            raise BadInput(f"kappa_tol={self.kappa_tol!r}: must be in (0, 1)", param="kappa_tol")
        check_seed("seed", self.seed)
        from ..dynamics.device import check_device

        object.__setattr__(self, "device", str(check_device(self.device)))

    @classmethod
    def from_dict(cls, d: dict) -> FitConfig:
        """Build from a dict; unknown keys raise :class:`_runkit.BadInput` (a ``ValueError``)
        listing the allowed ones.

        Examples
        --------
        >>> FitConfig.from_dict({"n": 64, "sped": 3})
        Traceback (most recent call last):
        ...
        _runkit.errors.BadInput: fit config: unknown keys ['sped']; allowed: [...]
        """
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise BadInput(
                f"fit config: unknown keys {sorted(unknown)}; allowed: {sorted(names)}")
        d = dict(d)
        if isinstance(d.get("n"), list):
            d["n"] = tuple(d["n"])
        return cls(**d)

    def to_dict(self) -> dict:
        """Plain dict (JSON-serialisable)."""
        return dataclasses.asdict(self)

    @property
    def tolerance(self) -> float:
        """The relative tolerance of the normal spectrum."""
        if self.kappa_tol is not None:
            return self.kappa_tol
        return 0.05 if self.geometry == "ring" else 0.10
