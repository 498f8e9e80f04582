"""The configuration and the result of a training run (:func:`flows.training.loop.train`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING

from _runkit.results import Result

from ..errors import FlowsError, check_choice, check_positive, check_positive_int, check_seed

#: default step size of the built-in field in the practice regime (Adam on both layers, with a
#: warm-up of :data:`WARMUP` steps and a cosine decay); a user model's default is
#: :data:`MODULE_LR`, the theory regime's (gradient descent) :data:`THEORY_LR`.
#: With rows of W ~ N(0, I) and the output scaled by 1/sqrt(m), an Adam step of a given size
#: moves the field about four times less than it moves a network with PyTorch's default
#: initialisation (weights ~ 1/sqrt(fan-in), no output scale): at 0.03 the built-in field
#: trailed such a network trained by TorchCFM at equal steps (bench/bench_equal_steps.py).
PRACTICE_LR = 0.1
MODULE_LR = 0.03
THEORY_LR = 2.0
#: learning-rate warm-up of the built-in field in the practice regime, in steps (at most a
#: tenth of the run): Adam's first updates, normalised by second moments estimated from a few
#: gradients, are full-size steps in noisy directions. Neutral at 0.1 on 8 Gaussians -> spirals
#: (bench/flows_levers.py); on class-conditional digits (1,500 steps, seed 0) at 0.1 it took the
#: final loss from 36.6 to 34.9 and the mean per-class sliced W over its floor from 1.16 to 1.12
WARMUP = 200

if TYPE_CHECKING:
    import torch
    from torch import nn

#: the largest float32: an lr beyond it overflows the first update
_FLOAT32_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (written to ``config.json``).

    Attributes
    ----------
    data : str
        Target dataset name or .npy/.csv file.
    source : str or None
        Source dataset (None: N(0, I)); must have the data's dimension.
    regime : str
        "practice" or "theory".
    width : int
        Hidden width m.
    coupling : str
        "independent", "ot" or "sinkhorn" (practice only).
    path : str
        "linear", "vp", "target" or "affine:ALPHA,SIGMA" (schedules of
        :data:`flows.path.SCHEDULES`).
    sigma_min : float
        Smoothing of the linear / target path.
    steps : int
        Optimisation steps.
    batch : int
        Minibatch size (practice).
    lr : float or None
        Step size; None means :data:`PRACTICE_LR` (0.1: the built-in field in the practice
        regime, Adam with warm-up and cosine decay), :data:`MODULE_LR` (0.03: a user model)
        or :data:`THEORY_LR` (2.0: theory, gradient descent).
    n_train : int or None
        Training points; None means 20,000 (practice; all rows of a finite dataset up to that)
        or 256 (theory).
    k_draws : int
        Fixed (t, x0) draws per data point (theory).
    n_eval : int
        Held-out points for evaluation (and the size of the floor sample).
    normalize : bool or None
        Normalise z to the unit sphere; None means True for theory, False for practice.
    fourier : int or None
        Fourier frequencies of t in z; None means 1 (practice) or 0 (theory).
    sinkhorn_reg : float
        Relative entropic regularisation of the "sinkhorn" coupling.
    seed : int
        Seed of everything random in the run, in ``[0, 2**63)``.
    checkpoint_every : int
        Steps between checkpoints (when an output directory is given).
    model : str or None
        A user velocity model by import path, ``"package.module:Class"`` (practice regime);
        None: the built-in two-layer ReLU field (``width``, ``normalize``, ``fourier`` apply).
    model_args : dict or None
        Keyword arguments of the model class (JSON-serialisable); only with ``model``.
    labels : str or None
        Class labels: ``"data"`` (the data set's own, e.g. digits) or a .npy/.csv file with one
        integer per data row; None: unconditional.
    label_dropout : float
        Probability that a training label is replaced by the null label (classifier-free
        guidance), in [0, 1).
    ot_solver : str
        Exact assignment solver of the "ot" coupling ("auto", "auction", "emd", "lsa"); the
        resolved config records the one "auto" chose.
    ema : float
        Decay of an exponential moving average of the weights (practice regime), e.g. 0.999;
        the average (:mod:`flows.training.ema`) is what the run returns, saves as the model
        and samples from. 0 (the default) trains without one and leaves it out of
        :meth:`to_dict`.
    ema_warmup : bool
        With ``ema``: the decay of update n is min(ema, n / (n + 9)), a window that grows with
        the run (:mod:`flows.training.ema`); False (the default, left out of :meth:`to_dict`):
        the constant decay.
    time_sampling : str
        Distribution of the training times (practice regime, :mod:`flows.training.times`):
        "uniform" (the default, left out of :meth:`to_dict`), "logit-normal" or
        "logit-normal:MEAN,STD".
    clip_grad : float or None
        Clip the global norm of the gradient of all weights to this value before each update
        (practice regime); None (the default, left out of :meth:`to_dict`): no clipping.
    warmup : int or None
        Steps of linear learning-rate warm-up (practice regime): step s trains at
        lr * min(1, (s + 1) / warmup) times the cosine decay. None means min(:data:`WARMUP`,
        steps // 10) for the built-in field and 0 for a user model (as before); 0: none. The
        theory regime has none (its gradient descent runs at a constant step).
    """

    data: str = "moons"
    source: str | None = None
    regime: str = "practice"
    width: int = 256
    coupling: str = "independent"
    path: str = "linear"
    sigma_min: float = 0.0
    steps: int = 40_000
    batch: int = 512
    lr: float | None = None
    n_train: int | None = None
    k_draws: int = 4
    n_eval: int = 1000
    normalize: bool | None = None
    fourier: int | None = None
    sinkhorn_reg: float = 0.05
    seed: int = 0
    checkpoint_every: int = 1000
    model: str | None = None
    model_args: dict | None = None
    labels: str | None = None
    label_dropout: float = 0.1
    ot_solver: str = "auto"
    ema: float = 0.0
    ema_warmup: bool = False
    time_sampling: str = "uniform"
    clip_grad: float | None = None
    warmup: int | None = None

    def __post_init__(self) -> None:
        # the registries import torch: imported here, so that the command line can read the
        # defaults of this class without them
        from ..coupling import COUPLINGS, OT_SOLVERS
        from ..field import REGIMES
        from ..field.module import check_model_args, import_class
        from ..path import PATHS

        check_choice("regime", self.regime, REGIMES)
        COUPLINGS.get(self.coupling)  # unknown names are refused, listing the valid ones
        if not (isinstance(self.path, str) and self.path.startswith("affine:")):
            PATHS.get(self.path)
        OT_SOLVERS.get(self.ot_solver)
        for name in ("width", "steps", "batch", "k_draws", "n_eval", "checkpoint_every"):
            check_positive_int(name, getattr(self, name))
        if self.n_train is not None:
            check_positive_int("n_train", self.n_train)
        if self.lr is not None and check_positive("lr", self.lr) > _FLOAT32_MAX:
            raise FlowsError(f"lr={self.lr!r} is not allowed; it must be a finite number > 0 "
                             f"within float32's range (<= {_FLOAT32_MAX:.3g}), the precision "
                             "the fields are trained in")
        check_positive("sinkhorn_reg", self.sinkhorn_reg)
        check_seed("seed", self.seed)
        from .ema import check_decay

        if check_decay(self.ema) and self.regime == "theory":
            raise FlowsError(f"ema={self.ema!r} is not allowed in the theory regime; its "
                             "guarantees are about the last iterate")
        if not isinstance(self.ema_warmup, bool) or (self.ema_warmup and not self.ema):
            raise FlowsError(f"ema_warmup={self.ema_warmup!r} is not allowed; it is True or "
                             "False, and True needs an ema decay")
        self._check_training_options()
        if self.regime == "theory" and self.coupling != "independent":
            raise FlowsError(f"coupling={self.coupling!r} is not allowed in the theory regime; "
                             "its fixed objective uses 'independent'")
        if self.model is not None:
            import_class(self.model)  # fails early, naming the target
            if self.regime == "theory":
                raise FlowsError(f"model={self.model!r} is not allowed in the theory regime; "
                                 "it trains the built-in field")
        check_model_args(self.model_args)
        if self.model_args is not None and self.model is None:
            raise FlowsError(f"model_args={self.model_args!r} is not allowed without model; "
                             "they are the keyword arguments of model (--model-class)")
        if self.labels is not None and self.regime == "theory":
            raise FlowsError(f"labels={self.labels!r} are not allowed in the theory regime")
        if not (isinstance(self.label_dropout, (int, float)) and 0 <= self.label_dropout < 1):
            raise FlowsError(f"label_dropout={self.label_dropout!r} is not allowed; it must "
                             "lie in [0, 1)")
        if self.path == "target" and self.source not in (None, "normal"):
            raise FlowsError(f"path='target' needs a N(0, I) source, got source={self.source!r};"
                             " use path 'linear' or 'vp'")

    def _check_training_options(self) -> None:
        """Path, time sampling, gradient clipping and warm-up: well formed, and the last three
        off in the theory regime (its objective draws t ~ U(0, 1) and its guarantees are about
        plain gradient descent at a constant step)."""
        from ..path import get_path
        from .times import parse_time_sampling

        if isinstance(self.path, str) and self.path.startswith("affine:"):
            get_path(self.path, self.sigma_min)
        parse_time_sampling(self.time_sampling)
        if self.clip_grad is not None:
            check_positive("clip_grad", self.clip_grad)
        if self.warmup is not None and (isinstance(self.warmup, bool)
                                        or not isinstance(self.warmup, int) or self.warmup < 0):
            raise FlowsError(f"warmup={self.warmup!r} is not allowed; it must be an int >= 0 "
                             "(steps) or None (the default)")
        # the values each option may take in the theory regime (its default, or none)
        for name, allowed in (("time_sampling", ("uniform",)), ("clip_grad", (None,)),
                              ("warmup", (None, 0))):
            if getattr(self, name) not in allowed and self.regime == "theory":
                raise FlowsError(f"{name}={getattr(self, name)!r} is not allowed in the theory "
                                 "regime; its objective and guarantees are those of uniform "
                                 "times and plain gradient descent")

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        """Build from a dict; unknown keys raise :class:`FlowsError`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise FlowsError(f"config keys {unknown} are unknown; allowed are {sorted(known)}")
        return cls(**d)

    def resolved(self, module: bool | None = None) -> TrainConfig:
        """The config with every ``None`` default replaced by its regime's value.

        ``module``: whether a user model is trained (None: when ``model`` names one); the
        step size and the warm-up default differ for the built-in field (see ``lr``).
        """
        from ..coupling import resolve_ot_solver

        theory = self.regime == "theory"
        module = self.model is not None if module is None else module
        lr = THEORY_LR if theory else MODULE_LR if module else PRACTICE_LR
        warmup = 0 if theory or module else min(WARMUP, self.steps // 10)
        return replace(
            self,
            lr=self.lr if self.lr is not None else lr,
            warmup=self.warmup if self.warmup is not None else warmup,
            n_train=self.n_train if self.n_train is not None else (256 if theory else 20_000),
            normalize=self.normalize if self.normalize is not None else theory,
            fourier=self.fourier if self.fourier is not None else (0 if theory else 1),
            ot_solver=resolve_ot_solver(self.ot_solver),
        )

    def to_dict(self) -> dict:
        """Plain dict (JSON-serialisable); ``ema``, ``ema_warmup``, ``time_sampling`` and
        ``clip_grad`` only when they differ from their defaults, ``warmup`` only when given
        (and not 0 in the theory regime, which has none), so configs and checkpoints of runs
        without them read as before."""
        d = asdict(self)
        for name, off in (("ema", 0.0), ("ema_warmup", False), ("time_sampling", "uniform"),
                          ("clip_grad", None), ("warmup", None)):
            if d[name] == off:
                del d[name]
        if self.regime == "theory" and d.get("warmup") == 0:
            del d["warmup"]
        return d


@dataclass
class TrainResult(Result):
    """Outcome of :func:`train`.

    Attributes
    ----------
    field : TwoLayerReLUField or ModuleField
        The trained velocity field v(x, t[, c]) (a user module is wrapped in
        :class:`flows.field.module.ModuleField`; the module itself is ``field.module``).
    config : TrainConfig
        The resolved config.
    losses : torch.Tensor, shape (steps_done,)
        Training objective at every step (before the update).
    steps_done : int
    wall_time : float
        Seconds spent in training steps (summed over resumed runs).
    completed : bool
        False if stopped early by ``stop_after``.
    initial_W : torch.Tensor or None, shape (m, p)
        W of the built-in field at initialisation (for the weight drift); None for a module.
    test_loss : float or None
        Theory regime: the same objective on held-out points with fresh draws.
    classes : int
        Number of classes K (0: unconditional).
    last_iterate : torch.nn.Module or None
        With ``ema``: the field at the last step (``field`` is then the average), so that one
        run compares the two at equal steps; None otherwise.
    """

    field: nn.Module
    config: TrainConfig
    losses: torch.Tensor
    steps_done: int
    wall_time: float
    completed: bool
    initial_W: torch.Tensor | None
    test_loss: float | None = None
    classes: int = 0
    last_iterate: nn.Module | None = None

    def __repr__(self) -> str:
        c = self.config
        last = f"{float(self.losses[-1]):.4g}" if len(self.losses) else "none"
        return (f"TrainResult(data={c.data!r}, regime={c.regime!r}, field="
                f"{type(self.field).__name__}, steps={self.steps_done}/{c.steps}, "
                f"final loss={last}, wall_time={self.wall_time:.3g} s)")

    def to_pandas(self):
        """The training loss per step as a DataFrame (column ``loss``, index ``step``).

        Returns
        -------
        pandas.DataFrame
        """
        from _runkit.results import require_pandas

        pd = require_pandas("TrainResult.to_pandas()")
        return pd.DataFrame({"loss": self.losses.detach().cpu().numpy()}).rename_axis("step")

    def to_xarray(self):
        """The training loss per step as an ``xarray.Dataset`` (variable ``loss``, dimension
        ``step``); needs xarray (extra ``xarray``).

        Returns
        -------
        xarray.Dataset
        """
        from _runkit.results import require_xarray

        require_xarray("TrainResult.to_xarray()")
        return self.to_pandas().to_xarray()
