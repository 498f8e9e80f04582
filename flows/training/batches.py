"""Minibatches of practice-regime training: per-step seeds, coupling, path, prepared ahead.

Every batch depends only on (seed, step) (:func:`step_seed`), so a run resumed at any step, or
one whose batches are prepared by worker threads, draws exactly what an uninterrupted serial
run draws. Batches are drawn on the CPU from seeded generators and moved to the training
device before the coupling, so the OT costs are formed on the device.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import torch

from ..assignment.warmstart import MAX_DIM, PriceMap
from ..conditions import drop_labels
from ..coupling import couple, couple_within_classes, resolve_ot_solver
from ..data import Dataset
from ..errors import derive_seed
from ..path import get_path
from .times import draw_times

_MASK64 = (1 << 64) - 1


def step_seed(base: int, step: int) -> int:
    """Seed of the randomness of training step ``step`` (splitmix64 of base + step).

    Every step draws from its own seed, so a batch depends only on (seed, step): a run resumed at
    any step, or one whose batches are prepared ahead of time, draws exactly what an
    uninterrupted run draws.

    Examples
    --------
    >>> step_seed(0, 5) == step_seed(0, 5) != step_seed(0, 6)
    True
    """
    z = (base + (step + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) >> 1


Batch = tuple[torch.Tensor, torch.Tensor, torch.Tensor, "torch.Tensor | None"]


def _points(cfg, pool: torch.Tensor, source: Dataset, gen: torch.Generator
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The rows of ``pool`` drawn with replacement, x1 (those rows) and x0 from the source."""
    b = cfg.batch
    idx = torch.randint(0, pool.shape[0], (b,), generator=gen)
    x1 = pool[idx]
    x0 = torch.randn(x1.shape, generator=gen) if source.name == "normal" else \
        source.sample(b, gen)
    return idx, x0, x1


def draw_batch(cfg, pool: torch.Tensor, source: Dataset, base: int, step: int,
               gen: torch.Generator, pool_labels: torch.Tensor | None = None,
               classes: int = 0, device: torch.device | str = "cpu",
               warm: PriceMap | None = None) -> Batch:
    """The practice-regime batch of training step ``step``: (x_t, t, dx_t, c).

    x1 is drawn (with replacement) from ``pool`` (with its labels c when ``pool_labels`` is
    given), x0 from the source, t from ``cfg.time_sampling`` (:mod:`flows.training.times`);
    the pairs are coupled (within classes when labelled) and placed on the path; then a
    fraction ``cfg.label_dropout`` of the labels becomes the null label ``classes``. ``gen``
    is reseeded with :func:`step_seed` first, so the batch depends only on (base, step).
    Shapes (B, d), (B, 1), (B, d) and (B,) (c is None without labels), on ``device``.
    ``warm`` is a warm start of the exact OT coupling (:func:`ot_warm_start`);
    the batch does not depend on it.
    """
    gen.manual_seed(step_seed(base, step))
    idx, x0, x1 = _points(cfg, pool, source, gen)
    t = draw_times(cfg.time_sampling, cfg.batch, gen)
    x0, x1, t = x0.to(device), x1.to(device), t.to(device)
    c = None
    if pool_labels is None:
        x0, x1 = couple(cfg.coupling, x0, x1, gen, cfg.sinkhorn_reg, cfg.ot_solver, warm)
    else:
        x0, x1, c = couple_within_classes(cfg.coupling, x0, x1, pool_labels[idx], gen,
                                          cfg.sinkhorn_reg, cfg.ot_solver)
        c = drop_labels(c, cfg.label_dropout, classes, gen).to(device)
    ps = get_path(cfg.path, cfg.sigma_min).sample(x0, x1, t, gen)
    return ps.x_t, t, ps.dx_t, c


# reference batches of the warm start of exact-OT training (0: no warm start)
WARM_BATCHES = 4


def ot_warm_start(cfg, pool: torch.Tensor, source: Dataset, base: int,
                  device: torch.device | str = "cpu") -> PriceMap | None:
    """The warm start of a run's exact-OT couplings: a :class:`flows.assignment.warmstart.PriceMap`
    fit on ``WARM_BATCHES`` reference batches drawn like training batches from their own seeds.

    None (cold starts) unless the coupling is "ot" solved by the auction on the CPU, without
    labels, in at most :data:`flows.assignment.warmstart.MAX_DIM` dimensions. It depends only on the
    run's seed and data, and changes only the time the couplings take.
    """
    if cfg.coupling != "ot" or resolve_ot_solver(cfg.ot_solver) != "auction" or \
            torch.device(device).type != "cpu" or pool.shape[1] > MAX_DIM or WARM_BATCHES <= 0:
        return None
    gen = torch.Generator()
    pairs = []
    for r in range(WARM_BATCHES):
        gen.manual_seed(derive_seed(base, f"ot-warm-start-{r}"))
        _, x0, x1 = _points(cfg, pool, source, gen)
        pairs.append((x0.double().numpy(), x1.double().numpy()))
    return PriceMap.fit(pairs)


# the fewest steps a Batches draws ahead of the one asked for (with workers): on two cores
# shared with other processes 16 instead of 4 cut the exact-OT step by about 15% (in-process,
# alternating rounds); a 2-D batch of 512 points is a few kilobytes
DEPTH = 16


class Batches:
    """Batches of steps s, s+1, ... in step order, prepared ahead by worker threads.

    ``workers`` background threads draw the batches of coming steps, and so does the calling
    (training) thread whenever the batch it asks for is not ready: it then draws the batch of
    the next step nobody has taken, so no core waits while there is a batch to draw. With
    ``workers`` = 0 each batch is drawn when asked for, in the calling thread. Every thread owns
    a generator; since a batch depends only on (seed, step), the result is the same for any
    number of workers. The compiled OT solver and torch release the GIL, so the couplings of
    coming steps are solved on other cores while the current step trains.
    """

    def __init__(self, draw: Callable[[int, torch.Generator], Batch], workers: int,
                 end: int) -> None:
        self.draw, self.end, self.workers = draw, end, workers
        # steps drawn ahead of the one asked for, at most: enough that the training thread,
        # whose batch a worker still draws, draws later ones (useful work) instead of waiting
        # while that worker is descheduled on a busy machine
        self.depth = max(DEPTH, 2 * (workers + 1))
        self.local = threading.local()
        self.cond = threading.Condition()
        self.done: dict[int, tuple[bool, object]] = {}  # step -> (ok, batch or exception)
        self.low = self.next = -1  # the step asked for; the next step nobody has taken
        self.era = 0  # counts restarts: a batch of an earlier era is dropped
        self.closed = False
        self.threads: list[threading.Thread] = []

    def _job(self, step: int) -> Batch:
        gen = getattr(self.local, "gen", None)
        if gen is None:
            gen = self.local.gen = torch.Generator()
        return self.draw(step, gen)

    def _run(self, step: int, era: int, helper: bool = False) -> None:
        """Draw the batch of ``step`` outside the lock and file it (called with the lock held).

        An error is filed for get() to raise; an interruption of the calling thread while it
        helps (``helper``) is raised at once.
        """
        self.cond.release()
        try:
            out: tuple[bool, object] = (True, self._job(step))
        except Exception as exc:  # handed to the training thread by get()
            out = (False, exc)
        except BaseException as exc:
            if helper:
                raise
            out = (False, exc)
        finally:
            self.cond.acquire()
        if era == self.era:
            self.done[step] = out
        self.cond.notify_all()

    def _open(self) -> bool:
        """Whether a step is free to take (called with the lock held)."""
        return self.next < min(self.low + self.depth, self.end)

    def _work(self) -> None:
        with self.cond:
            while True:
                while not self.closed and not self._open():
                    self.cond.wait()
                if self.closed:
                    return
                self.next += 1
                self._run(self.next - 1, self.era)

    def get(self, step: int) -> Batch:
        """The batch of ``step`` (steps are expected in increasing order)."""
        if self.workers == 0 or step >= self.end:
            return self._job(step)
        with self.cond:
            if step != self.low + 1 or not self.threads:  # first call or a jump: start afresh
                self.era += 1
                self.done.clear()
                self.next = step
            self.low = step
            if not self.threads:
                self.threads = [threading.Thread(target=self._work, daemon=True,
                                                 name=f"flows-batch-{k}")
                                for k in range(self.workers)]
                for thread in self.threads:
                    thread.start()
            self.cond.notify_all()
            while step not in self.done:
                if self._open():  # help rather than wait
                    self.next += 1
                    self._run(self.next - 1, self.era, helper=True)
                else:
                    self.cond.wait()
            ok, out = self.done.pop(step)
        if not ok:
            raise out  # type: ignore[misc]
        return out  # type: ignore[return-value]

    def close(self) -> None:
        """Drop pending batches and stop the workers (each finishes the batch it draws)."""
        with self.cond:
            self.closed = True
            self.done.clear()
            self.cond.notify_all()
        for thread in self.threads:
            thread.join()


def default_workers(coupling: str) -> int:
    """Batch-preparing threads used by :func:`flows.training.loop.train` when ``workers`` is None.

    0 (batches drawn in the training thread) for the cheap independent coupling; for "ot" and
    "sinkhorn", whose couplings dominate a step, one thread per CPU core this process may use
    besides the training thread, which draws batches too whenever it would wait (so every core
    works, with no more threads than cores).
    """
    if coupling == "independent":
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    return max(0, cores - 1)
