"""Batches prepared ahead: the same batches in step order for any number of threads, errors
raised for their own step, jumps and restarts, and the training thread drawing while it would
wait."""

import os
import threading
import time

import pytest
import torch

from flows.training.batches import Batches, default_workers


def _draw(step, gen):
    """A batch that depends only on the step, drawn from a generator reseeded by it."""
    gen.manual_seed(1000 + step)
    time.sleep(0.001 * (step % 3))  # batches finish out of step order
    return torch.randn(4, generator=gen), torch.tensor(step), torch.zeros(1), None


def _serial(steps):
    gen = torch.Generator()
    return [_draw(s, gen) for s in steps]


@pytest.mark.parametrize("workers", [0, 1, 3])
def test_batches_come_in_step_order_whatever_the_threads(workers):
    batches = Batches(_draw, workers, end=20)
    try:
        got = [batches.get(s) for s in range(20)]
    finally:
        batches.close()
    for a, b in zip(got, _serial(range(20)), strict=True):
        assert torch.equal(a[0], b[0]) and int(a[1]) == int(b[1])


def test_jumps_and_steps_past_the_end_give_their_own_batches():
    batches = Batches(_draw, 2, end=10)
    try:
        steps = [0, 1, 2, 7, 8, 3, 4, 9, 12]  # forward and backward jumps, one past the end
        got = [batches.get(s) for s in steps]
    finally:
        batches.close()
    assert [int(b[1]) for b in got] == steps
    for a, b in zip(got, _serial(steps), strict=True):
        assert torch.equal(a[0], b[0])


@pytest.mark.parametrize("workers", [0, 1, 2])
def test_an_error_is_raised_for_its_own_step_only(workers):
    def draw(step, gen):
        if step == 4:
            raise ValueError("bad batch 4")
        return _draw(step, gen)

    batches = Batches(draw, workers, end=10)
    try:
        assert [int(batches.get(s)[1]) for s in range(4)] == [0, 1, 2, 3]
        with pytest.raises(ValueError, match="bad batch 4"):
            batches.get(4)
        assert int(batches.get(5)[1]) == 5
    finally:
        batches.close()


def test_the_training_thread_draws_while_its_batch_is_not_ready():
    """Workers draw fast and the calling thread slowly: both draw batches. The control is a
    pipeline whose calling thread only waits, which would leave it out of the drawers."""
    main = threading.current_thread()
    drawers: dict[str, int] = {}
    lock = threading.Lock()

    def draw(step, gen):
        me = threading.current_thread()
        with lock:
            drawers[me.name] = drawers.get(me.name, 0) + 1
        time.sleep(0.01 if me is main else 0.002)
        return _draw(step, gen)

    batches = Batches(draw, 1, end=30)
    try:
        assert [int(batches.get(s)[1]) for s in range(30)] == list(range(30))
        workers = list(batches.threads)
    finally:
        batches.close()
    # the first batch is the calling thread's anyway; it drew more while it would have waited
    assert drawers.get(main.name, 0) >= 3 and sum(drawers.values()) == 30, drawers
    assert drawers.get("flows-batch-0", 0) >= 1, drawers
    assert not any(t.is_alive() for t in workers)  # close() joins them


def test_default_workers_leave_one_core_to_the_training_thread():
    assert default_workers("independent") == 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert default_workers("ot") == default_workers("sinkhorn") == max(0, cores - 1)
