"""Training of the two-layer ReLU field by conditional flow matching.

Loss: L(theta) = E_{t, (x0, x1) ~ coupling} || v_theta(x_t, t) - dx_t ||^2, t ~ U(0, 1).

- "practice": both layers, Adam, minibatches of ``batch`` points drawn (with replacement) from a
  fixed pool of ``n_train`` training points; the learning rate follows a cosine decay to zero.
- "theory": A fixed at +-1, only W, full-batch gradient descent on the fixed empirical objective
  of n = ``n_train`` data points with k = ``k_draws`` fixed (t, x0) draws each (a fixed
  least-squares problem in the outputs); inputs normalised to the unit sphere.

All randomness comes from generators derived from ``seed``; each practice step draws from its own
seed (:func:`step_seed`), so a checkpoint needs only the weights, the optimizer state and the loss
history for a resumed run to end exactly where an uninterrupted one does. Ctrl-C finishes the
current step and writes a checkpoint before the KeyboardInterrupt propagates.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import torch

from .checkpoint import atomic_save, load
from .coupling import COUPLINGS, couple
from .data import Dataset, Splits, load_dataset, make_splits, source_for
from .errors import (
    FlowsError,
    as_generator,
    check_choice,
    check_positive,
    check_positive_int,
    derive_seed,
)
from .field import REGIMES, FieldSpec, TwoLayerReLUField, features
from .path import PATHS, get_path
from .progress import progress_bar

CHECKPOINT = "checkpoint.pt"
FORMAT = "flows-checkpoint-2"


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
        "linear", "vp" or "target".
    sigma_min : float
        Smoothing of the linear / target path.
    steps : int
        Optimisation steps.
    batch : int
        Minibatch size (practice).
    lr : float or None
        Step size; None means 0.03 (practice, Adam with cosine decay) or 2.0 (theory,
        gradient descent).
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
        Seed of everything random in the run.
    checkpoint_every : int
        Steps between checkpoints (when an output directory is given).
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

    def __post_init__(self) -> None:
        check_choice("regime", self.regime, REGIMES)
        check_choice("coupling", self.coupling, COUPLINGS)
        check_choice("path", self.path, PATHS)
        for name in ("width", "steps", "batch", "k_draws", "n_eval", "checkpoint_every"):
            check_positive_int(name, getattr(self, name))
        if self.n_train is not None:
            check_positive_int("n_train", self.n_train)
        if self.lr is not None:
            check_positive("lr", self.lr)
        check_positive("sinkhorn_reg", self.sinkhorn_reg)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise FlowsError(f"seed={self.seed!r} is not allowed; it must be an int")
        if self.regime == "theory" and self.coupling != "independent":
            raise FlowsError(f"coupling={self.coupling!r} is not allowed in the theory regime; "
                             "its fixed objective uses 'independent'")
        if self.path == "target" and self.source not in (None, "normal"):
            raise FlowsError(f"path='target' needs a N(0, I) source, got source={self.source!r};"
                             " use path 'linear' or 'vp'")

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        """Build from a dict; unknown keys raise :class:`FlowsError`."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise FlowsError(f"config keys {unknown} are unknown; allowed are {sorted(known)}")
        return cls(**d)

    def resolved(self) -> TrainConfig:
        """The config with every ``None`` default replaced by its regime's value."""
        theory = self.regime == "theory"
        return replace(
            self,
            lr=self.lr if self.lr is not None else (2.0 if theory else 0.03),
            n_train=self.n_train if self.n_train is not None else (256 if theory else 20_000),
            normalize=self.normalize if self.normalize is not None else theory,
            fourier=self.fourier if self.fourier is not None else (0 if theory else 1),
        )

    def to_dict(self) -> dict:
        """Plain dict (JSON-serialisable)."""
        return asdict(self)


@dataclass
class TrainResult:
    """Outcome of :func:`train`.

    Attributes
    ----------
    field : TwoLayerReLUField
    config : TrainConfig
        The resolved config.
    losses : torch.Tensor, shape (steps_done,)
        Training objective at every step (before the update).
    steps_done : int
    wall_time : float
        Seconds spent in training steps (summed over resumed runs).
    completed : bool
        False if stopped early by ``stop_after``.
    initial_W : torch.Tensor, shape (m, p)
        W at initialisation (for the weight drift).
    test_loss : float or None
        Theory regime: the same objective on held-out points with fresh draws.
    """

    field: TwoLayerReLUField
    config: TrainConfig
    losses: torch.Tensor
    steps_done: int
    wall_time: float
    completed: bool
    initial_W: torch.Tensor
    test_loss: float | None = None


def prepare_data(config: TrainConfig) -> tuple[Splits, Dataset]:
    """Train / held-out / floor splits of the data and the source distribution of a run."""
    cfg = config.resolved()
    ds = load_dataset(cfg.data, name="data")
    source = source_for(cfg.source, ds.dim)
    splits = make_splits(ds, cfg.n_train, cfg.n_eval, derive_seed(cfg.seed, "splits"))  # type: ignore[arg-type]
    return splits, source


def fixed_objective(x1: torch.Tensor, source: Dataset, k: int, path_name: str, sigma_min: float,
                    spec: FieldSpec, seed: int | torch.Generator
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """Features and targets of the empirical objective of the theory.

    Each of the n points x1_i gets k fixed draws (t_ij ~ U(0, 1), x0_ij ~ source), giving
    z_ij = z(x_t, t) and u_ij = dx_t. Returns z of shape (n k, p) and u of shape (n k, d).
    """
    g = as_generator(seed)
    x1k = x1.repeat_interleave(check_positive_int("k_draws", k), dim=0)
    x0 = source.sample(x1k.shape[0], g)
    t = torch.rand(x1k.shape[0], 1, generator=g)
    ps = get_path(path_name, sigma_min).sample(x0, x1k, t, g)
    return features(ps.x_t, t, spec.fourier, spec.normalize), ps.dx_t


class _FlatAdam:
    """Adam (Kingma and Ba, with bias correction) on parameters stored in one flat buffer.

    The parameters are rebound as views of a single tensor, so each step is a handful of
    elementwise operations however many parameter tensors there are.
    """

    def __init__(self, params: list[torch.Tensor], b1: float = 0.9, b2: float = 0.999,
                 eps: float = 1e-8) -> None:
        self.flat = torch.cat([p.detach().reshape(-1) for p in params])
        offset = 0
        for p in params:
            p.data = self.flat[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
        self.b1, self.b2, self.eps = b1, b2, eps
        self.m = torch.zeros_like(self.flat)
        self.v = torch.zeros_like(self.flat)
        self.t = 0

    def step(self, grads: list[torch.Tensor], lr: float) -> None:
        """One update with the gradients of the parameters, in their order."""
        g = torch.cat([x.reshape(-1) for x in grads])
        self.t += 1
        c1, c2 = 1 - self.b1**self.t, 1 - self.b2**self.t
        self.m.lerp_(g, 1 - self.b1)
        self.v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
        denom = self.v.sqrt().div_(math.sqrt(c2)).add_(self.eps)
        self.flat.addcdiv_(self.m, denom, value=-lr / c1)

    def state_dict(self) -> dict:
        """Moments and step count (for checkpoints)."""
        return {"m": self.m.clone(), "v": self.v.clone(), "t": self.t}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict` output."""
        self.m.copy_(state["m"])
        self.v.copy_(state["v"])
        self.t = int(state["t"])


_MASK64 = (1 << 64) - 1


def step_seed(base: int, step: int) -> int:
    """Seed of the randomness of training step ``step`` (splitmix64 of base + step).

    Every step draws from its own seed, so a batch depends only on (seed, step): a run resumed at
    any step, or one whose batches are prepared ahead of time, draws exactly what an
    uninterrupted run draws.
    """
    z = (base + (step + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) >> 1


def _lr(cfg: TrainConfig, step: int) -> float:
    if cfg.regime == "theory":
        return cfg.lr  # type: ignore[return-value]
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))  # type: ignore[operator]


def train(config: TrainConfig, out_dir: str | Path | None = None, resume: bool = True,
          stop_after: int | None = None, progress: bool | None = None,
          splits: Splits | None = None, source: Dataset | None = None,
          workers: int | None = None) -> TrainResult:
    """Train a two-layer ReLU field by conditional flow matching.

    Parameters
    ----------
    config : TrainConfig
    out_dir : path or None
        Directory for ``checkpoint.pt`` (written atomically every ``checkpoint_every`` steps, at
        the end and on KeyboardInterrupt). With ``resume`` a matching checkpoint is continued.
    resume : bool
        Continue from an existing checkpoint (its config must equal this one).
    stop_after : int or None
        Stop once this many steps are done (an interruption, for tests); ``completed`` is False.
    progress : bool or None
        Show a tqdm bar (None: when stderr is a terminal).
    splits, source : optional
        Precomputed :func:`prepare_data` output (else computed from the config).
    workers : int or None
        Threads preparing the batches of coming steps (practice regime), so that couplings are
        solved on other cores while a step trains; 0 draws them in the training thread. None
        means :func:`default_workers`. The result does not depend on it.

    Returns
    -------
    TrainResult
    """
    cfg = config.resolved()
    if splits is None or source is None:
        splits, source = prepare_data(cfg)
    dim = splits.train.shape[1]
    spec = FieldSpec(dim, cfg.width, cfg.regime, bool(cfg.normalize), cfg.fourier)
    field = TwoLayerReLUField(spec, seed=derive_seed(cfg.seed, "init"))
    initial_W = field.W.detach().clone()
    theory = cfg.regime == "theory"
    adam = None if theory else _FlatAdam([field.W, field.A])
    losses = torch.empty(cfg.steps)
    step, elapsed = 0, 0.0
    ckpt = Path(out_dir) / CHECKPOINT if out_dir is not None else None
    if ckpt is not None and resume and ckpt.is_file():
        step, elapsed = _restore(load(ckpt), cfg, field, adam, losses)
    end = cfg.steps if stop_after is None else min(cfg.steps, max(step, int(stop_after)))
    if workers is None:
        workers = default_workers(cfg.coupling)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise FlowsError(f"workers={workers!r} is not allowed; it must be an int >= 0")
    batches = None if theory else _Batches(
        functools.partial(draw_batch, cfg, splits.train, source, derive_seed(cfg.seed, "train")),
        workers, end)
    step_fn = _theory_step(cfg, splits, source, field, spec) if theory else \
        _practice_step(cfg, spec, field, adam, batches)
    bar = progress_bar(cfg.steps, step, f"train {cfg.data}", progress)

    def save() -> None:
        if ckpt is not None:
            atomic_save(_state(cfg, field, adam, losses, step, elapsed), ckpt)

    try:
        with _deferred_interrupt() as interrupted:
            while step < end:
                t0 = time.perf_counter()
                chunk = min(end, (step // cfg.checkpoint_every + 1) * cfg.checkpoint_every)
                start = step
                while step < chunk and not interrupted():
                    losses[step] = step_fn(step)
                    step += 1
                elapsed += time.perf_counter() - t0
                if step > start:
                    bar.update(step - start)
                    bar.set_postfix_str(f"loss {float(losses[step - 1]):.4g}")
                    if not math.isfinite(float(losses[step - 1])):
                        raise FlowsError(f"the training loss became non-finite by step {step}; "
                                         f"lower lr={cfg.lr}")
                    save()
                if interrupted():
                    raise KeyboardInterrupt
    finally:
        bar.close()
        if batches is not None:
            batches.close()
    test_loss = None
    if theory and step == cfg.steps:
        test_loss = theory_test_loss(cfg, splits, source, field)
    return TrainResult(field, cfg, losses[:step].clone(), step, elapsed, step == cfg.steps,
                       initial_W, test_loss)


@contextlib.contextmanager
def _deferred_interrupt() -> Iterator[Callable[[], bool]]:
    """Within the block Ctrl-C (SIGINT) only raises a flag, read by the yielded callable.

    The training loop finishes the step it is in, writes its checkpoint and then raises
    KeyboardInterrupt, so an interruption never leaves a half-applied update. Outside the main
    thread, where no signal handler can be set, SIGINT behaves as usual.
    """
    hit = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield hit.is_set
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hit.set())
    try:
        yield hit.is_set
    finally:
        signal.signal(signal.SIGINT, previous)


def theory_test_loss(cfg: TrainConfig, splits: Splits, source: Dataset,
                     field: TwoLayerReLUField) -> float:
    """The theory objective on held-out points with fresh (t, x0) draws.

    Uses n = min(n_train, n_eval) held-out points with k_draws draws each.
    """
    n = min(cfg.n_train, splits.heldout.shape[0])  # type: ignore[type-var]
    z, u = fixed_objective(splits.heldout[:n], source, cfg.k_draws, cfg.path, cfg.sigma_min,
                           field.spec, derive_seed(cfg.seed, "test-objective"))
    with torch.no_grad():
        return float((field.forward_z(z) - u).square().sum(1).mean())


def _theory_step(cfg, splits, source, field, spec):
    z, u = fixed_objective(splits.train[: cfg.n_train], source, cfg.k_draws, cfg.path,
                           cfg.sigma_min, spec, derive_seed(cfg.seed, "objective"))
    lr = cfg.lr

    def step(s: int) -> torch.Tensor:
        loss, gw, _ = field.loss_and_grads(z, u, grad_a=False)
        field.W.data.sub_(gw, alpha=lr)
        return loss

    return step


def draw_batch(cfg: TrainConfig, pool: torch.Tensor, source: Dataset, base: int, step: int,
               gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The practice-regime batch of training step ``step``: (x_t, t, dx_t), each with B rows.

    x1 is drawn (with replacement) from ``pool``, x0 from the source, t ~ U(0, 1); the pairs are
    coupled and placed on the path. ``gen`` is reseeded with :func:`step_seed` first, so the
    batch depends only on (base, step).
    """
    gen.manual_seed(step_seed(base, step))
    b = cfg.batch
    x1 = pool[torch.randint(0, pool.shape[0], (b,), generator=gen)]
    x0 = torch.randn(x1.shape, generator=gen) if source.name == "normal" else \
        source.sample(b, gen)
    t = torch.rand(b, 1, generator=gen)
    x0, x1 = couple(cfg.coupling, x0, x1, gen, cfg.sinkhorn_reg)
    ps = get_path(cfg.path, cfg.sigma_min).sample(x0, x1, t, gen)
    return ps.x_t, t, ps.dx_t


class _Batches:
    """Batches of steps s, s+1, ... in step order, prepared ahead by worker threads.

    With ``workers`` = 0 each batch is drawn when asked for, in the calling thread. Each worker
    owns a generator; since a batch depends only on (seed, step), the result is the same for any
    number of workers. The compiled OT solver and torch release the GIL, so the couplings of
    coming steps are solved on other cores while the current step trains.
    """

    def __init__(self, draw: Callable[[int, torch.Generator], tuple], workers: int,
                 end: int) -> None:
        self.draw, self.end, self.depth = draw, end, 2 * workers
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="flows-batch") \
            if workers > 0 else None
        self.local = threading.local()
        self.queue: deque = deque()
        self.next = -1

    def _job(self, step: int) -> tuple:
        gen = getattr(self.local, "gen", None)
        if gen is None:
            gen = self.local.gen = torch.Generator()
        return self.draw(step, gen)

    def get(self, step: int) -> tuple:
        """The batch of ``step`` (steps are expected in increasing order)."""
        if self.pool is None:
            return self._job(step)
        if step != self.next - len(self.queue):  # first call or a jump: start afresh
            self._cancel()
            self.next = step
        while len(self.queue) < self.depth and self.next < self.end:
            self.queue.append(self.pool.submit(self._job, self.next))
            self.next += 1
        return self.queue.popleft().result()

    def _cancel(self) -> None:
        for future in self.queue:
            future.cancel()
        self.queue.clear()

    def close(self) -> None:
        """Drop pending batches and stop the workers."""
        self._cancel()
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def _practice_step(cfg, spec, field, adam, batches):
    def step(s: int) -> torch.Tensor:
        x_t, t, dx_t = batches.get(s)
        z = features(x_t, t, spec.fourier, spec.normalize)
        loss, gw, ga = field.loss_and_grads(z, dx_t)
        adam.step([gw, ga], _lr(cfg, s))
        return loss

    return step


def default_workers(coupling: str) -> int:
    """Batch-preparing threads used by :func:`train` when ``workers`` is None.

    0 (batches drawn in the training thread) for the cheap independent coupling; for "ot" and
    "sinkhorn", whose couplings dominate a step, one thread per CPU core this process may use.
    """
    if coupling == "independent":
        return 0
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else (os.cpu_count() or 1))


def _state(cfg, field, adam, losses, step, elapsed) -> dict:
    return {"format": FORMAT, "config": cfg.to_dict(), "step": step, "elapsed": elapsed,
            "W": field.W.detach().clone(), "A": field.A.detach().clone(),
            "adam": None if adam is None else adam.state_dict(),
            "losses": losses[:step].clone()}


def _restore(blob: dict, cfg, field, adam, losses) -> tuple[int, float]:
    if blob.get("format") != FORMAT:
        raise FlowsError("the checkpoint in --out is not a training checkpoint of this version "
                         "of flows; use another --out or --fresh")
    if blob["config"] != cfg.to_dict():
        diff = sorted(k for k in blob["config"] if blob["config"][k] != cfg.to_dict().get(k))
        raise FlowsError(f"the checkpoint in --out was written with a different config "
                         f"(differs in {diff}); use another --out or --fresh")
    with torch.no_grad():
        field.W.copy_(blob["W"])
        field.A.copy_(blob["A"])
    if adam is not None:
        adam.load_state_dict(blob["adam"])
    step = int(blob["step"])
    losses[:step] = blob["losses"]
    return step, float(blob["elapsed"])
