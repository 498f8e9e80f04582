"""What a fit builds from its config before its first step, each built once: the geometry,
the target manifold (checked fittable), the untrained network, the template's harmonics and
the resolved config; :func:`prepare` checks and builds them before a run writes anything, and
:func:`neurodyn.fitting.core.fit_prepared` fits what it built."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from _runkit import BadInput, check_memory

from ..activation import Logistic
from ..dynamics.device import check_device
from ..energies import SealEnergy
from ..energies.template import TemplateEnergy
from ..geometry.populations import Geometry, Ring, Torus
from ..manifold import TargetManifold
from ..network import HopfieldNetwork
from .config import FitConfig
from .profiles import check_fittable, profile_label, profile_potentials
from .streamed import DENSE_DESIGN_MAX_NEURONS
from .template import template_harmonics

__all__ = ["FitPlan", "prepare", "build_geometry", "build_manifold", "fittable_manifold",
           "build_network", "fit_bytes", "resolved_config"]


def build_geometry(config: FitConfig) -> Geometry:
    """The geometry a config asks for."""
    if config.geometry == "ring":
        n = 128 if config.n is None else config.n
        if not isinstance(n, int):
            raise BadInput(f"n={n!r}: a ring needs one integer", param="n")
        return Ring(n)
    n = (32, 32) if config.n is None else config.n
    if isinstance(n, int):
        n = (n, n)
    if len(n) != 2:
        raise BadInput(f"n={n!r}: a torus needs two sizes (n1, n2)", param="n")
    return Torus(int(n[0]), int(n[1]), config.lattice)


def fit_bytes(config: FitConfig, geometry: Geometry | None = None) -> float:
    """Bytes a fit of ``config`` (on ``geometry``, None: built from it) allocates, about: its
    batched design, 48 float64 values per neuron and probed state (``4 batch + 4`` states a
    step). :func:`prepare` checks it against the memory limits (:func:`_runkit.check_memory`)
    before the target is built.

    >>> fit_bytes(FitConfig(n=128, batch=8)) / 2**20
    1.6875
    """
    size = (geometry or build_geometry(config)).size  # the geometry holds sizes only until used
    return float(size) * (4 * config.batch + 4) * 8 * 48


@dataclass(frozen=True)
class FitPlan:
    """What a fit builds from its config before its first step, each built once by
    :func:`prepare`: the geometry, the target manifold (checked fittable, on the CPU), for
    the ``template`` family the template's harmonics (else None), whether the normal
    equations are streamed (:mod:`neurodyn.fitting.streamed`) and the device of the fit.
    :func:`fit` takes it in place of the config (:func:`fit_prepared`)."""

    config: FitConfig
    geometry: Geometry
    manifold: TargetManifold
    harmonics: int | None = None
    streamed: bool = False
    device: torch.device = torch.device("cpu")

    def resolved(self) -> dict:
        """:func:`resolved_config` of the plan's config, from what the plan holds."""
        return _resolved(self.config, self.geometry, self.harmonics)


def prepare(config: FitConfig, design: str = "auto") -> FitPlan:
    """Check everything a fit of ``config`` needs and build it once, before anything is written.

    The population size and, for the batched design, the fit's memory estimate
    (:func:`fit_bytes`) are checked against the memory limits (:func:`_runkit.check_memory`,
    naming ``n``, or ``batch``, or both where both differ from their defaults) before the
    target bump is allocated; then the target manifold is built and checked
    (:func:`fittable_manifold`) and, family ``template``, the template's harmonics
    (:func:`~neurodyn.fitting.template.template_harmonics`).

    Parameters
    ----------
    config : FitConfig
        The fit's config.
    design : str
        How the normal equations are built, as in :func:`fit`; the plan records whether
        they are streamed.

    Returns
    -------
    FitPlan
        What :func:`fit` runs on.

    Examples
    --------
    >>> plan = prepare(FitConfig(n=64))
    >>> plan.geometry.shape, plan.manifold.u0.shape, plan.harmonics
    ((64,), torch.Size([64]), None)
    """
    geometry = build_geometry(config)
    check_memory("n", 64.0 * geometry.size)  # before the target bump is allocated
    device = check_device(config.device)
    streamed = _streamed(design, config, geometry, device)
    if not streamed:  # the batched design; a streamed one holds a few sheets
        raised = (("n", config.n is not None), ("batch", config.batch != FitConfig.batch))
        check_memory("/".join(name for name, given in raised if given) or "n",
                     fit_bytes(config, geometry))
    manifold = fittable_manifold(config, geometry)  # a profile file is read and checked here
    harmonics = template_harmonics(config, geometry) if config.family == "template" else None
    return FitPlan(config, geometry, manifold, harmonics, streamed, device)


def build_manifold(config: FitConfig, geometry: Geometry | None = None) -> TargetManifold:
    """The target manifold of a config (its ``profile``: :mod:`neurodyn.fitting.profiles`)."""
    geometry = geometry or build_geometry(config)
    act = Logistic(config.gain, config.rmax)
    if config.profile == "cosine":
        manifold = TargetManifold.bump(geometry, act, config.a, config.c)
    else:
        manifold = TargetManifold(geometry, act, profile_potentials(geometry, act, config.a,
                                                                    config.c, config.profile))
    _check_rate_slopes(manifold, config)
    return manifold


def fittable_manifold(config: FitConfig, geometry: Geometry | None = None) -> TargetManifold:
    """:func:`build_manifold`, with a user's or named profile refused (``ValueError`` naming
    ``profile=``) when it has more than one bump or too much band-edge content
    (:func:`~neurodyn.fitting.profiles.check_fittable`); what :func:`fit` and ``neurodyn fit``
    build, before anything is written."""
    manifold = build_manifold(config, geometry)
    if config.profile != "cosine":
        check_fittable(manifold.geometry, manifold.u0, manifold.r_star(
            torch.zeros(manifold.geometry.dim, dtype=torch.float64)), config.kappa,
            f"profile={profile_label(config.profile)!r}")
    return manifold


#: largest spread ``max phi'(u*) / min phi'(u*)`` over the target bump a fit accepts
MAX_SLOPE_SPREAD = 1e13


def _check_rate_slopes(manifold: TargetManifold, config: FitConfig) -> None:
    """Refuse a target whose rate function is flat at part of the bump: the normal curvature
    the fit must supply is ``(kappa - 1) / phi'(u*)`` neuron by neuron, so a spread of the
    slopes beyond :data:`MAX_SLOPE_SPREAD` leaves its linear algebra singular in float64."""
    d = manifold.activation.derivative(manifold.u0)
    spread = float(d.max() / d.min()) if float(d.min()) > 0 else math.inf
    if not spread <= MAX_SLOPE_SPREAD:
        raise BadInput(f"gain={config.gain!r}: the rate function is flat at part of the target "
                       f"bump (its slope spans a factor {spread:.3g} over the bump, more than "
                       f"{MAX_SLOPE_SPREAD:g}); lower the gain or narrow the bump's range a, c",
                       param="gain")


def _bandwidth(config: FitConfig) -> int:
    if config.bandwidth is not None:
        return config.bandwidth
    return 4 if config.geometry == "ring" else 2


def resolved_config(config: FitConfig) -> dict:
    """``config.to_dict()`` with every None default replaced by the value the fit uses
    (:meth:`FitPlan.resolved` without building anything again).

    ``n``, ``bandwidth`` (the template's harmonics for that family), ``degree``, ``phaselock``
    and ``kappa_tol``, as :func:`build_network` and the kappa check resolve them; what
    ``config.json`` and a model file record.

    Parameters
    ----------
    config : FitConfig
        The fit's config.

    Returns
    -------
    dict
        JSON-ready, no None left among those keys.

    Examples
    --------
    >>> d = resolved_config(FitConfig(geometry="torus"))
    >>> d["n"], d["bandwidth"], d["degree"], d["phaselock"], d["kappa_tol"]
    ([32, 32], 2, 4, True, 0.1)
    """
    geometry = build_geometry(config)
    harmonics = template_harmonics(config, geometry) if config.family == "template" else None
    return _resolved(config, geometry, harmonics)


def _resolved(config: FitConfig, geometry: Geometry, harmonics: int | None) -> dict:
    """:func:`resolved_config` of a config on ``geometry`` with the template's ``harmonics``."""
    out = config.to_dict()
    ring = config.geometry == "ring"
    out["n"] = geometry.shape[0] if ring else list(geometry.shape)
    out["bandwidth"] = harmonics if config.family == "template" else _bandwidth(config)
    out["degree"] = config.degree or (5 if ring else 4)
    out["phaselock"] = (not ring) if config.phaselock is None else config.phaselock
    out["kappa_tol"] = config.tolerance
    return out


def build_network(config: FitConfig, manifold: TargetManifold,
                  harmonics: int | None = None) -> HopfieldNetwork:
    """The untrained network of a config: every manifold point a fixed point, nothing learned
    (family ``template``: with ``harmonics``, None: :func:`~.template.template_harmonics`)."""
    g = manifold.geometry
    if config.family == "template":
        energy = TemplateEnergy(g, manifold.activation, None, 0.0, config.bias,
                                harmonics or template_harmonics(config, g))
        return HopfieldNetwork(g, manifold.activation, energy, bias=config.bias,
                               tau=config.tau, manifold=manifold)
    lock = config.geometry == "torus" if config.phaselock is None else config.phaselock
    seal, mlp = config.family == "seal", config.family == "mlp"
    degree = config.degree or (5 if config.geometry == "ring" else 4)
    # the mlp family carries the leak-integral term c0 sum_i G(r_i) alone (degree 0), learned
    # with the network: see neurodyn.fitting.neural for why an MLP of the rates cannot supply it
    energy = SealEnergy(g, manifold.activation, manifold.u0, config.bias, degree,
                        0 if mlp else min(_bandwidth(config), max(g.shape) // 2),
                        pointwise=seal or mlp,
                        pointwise_degree=0 if mlp else config.pointwise_degree,
                        pointwise_inverse=mlp or config.pointwise_inverse,
                        phaselock=seal and lock,
                        mlp_hidden=config.hidden if mlp else 0, seed=config.seed,
                        variable=config.variable)
    return HopfieldNetwork(g, manifold.activation, energy, bias=config.bias, tau=config.tau,
                           manifold=manifold)


def _streamed(design: str, config: FitConfig, geometry: Geometry, dev: torch.device) -> bool:
    """Whether a ``seal``/``spectral`` fit streams its normal equations (see :func:`fit`)."""
    if design not in ("auto", "dense", "streamed"):
        raise BadInput(f"design={design!r}: choose one of ('auto', 'dense', 'streamed')")
    if design == "auto":
        return (config.geometry == "torus" and config.family == "seal"
                and config.variable == "amplitude" and dev.type == "cpu"
                and geometry.size > DENSE_DESIGN_MAX_NEURONS)
    if design == "streamed" and dev.type != "cpu":
        raise BadInput(f"design='streamed': runs on the CPU; got device={str(dev)!r}")
    return design == "streamed"
