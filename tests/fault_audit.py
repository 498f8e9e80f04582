"""The fault audit: every case of issue 45 run through the command lines' ``main(argv)``.

Each case builds its faulty input, runs one command in this process and checks what a user
sees: the exit status, the one line on stderr (the words it must name) and the folder the
command was pointed at, listed before and after (names, sizes, modes, modification times and
the bytes' sha256): a refused command changes nothing in it. The cases are grouped as in the
issue (1 a refused rerun, 2 damaged models, 3 declared sizes, 4 refusals that claimed the
folder first, 5 "unexpected" errors, 6 bad input accepted, 7 ``--config``, 8 values of a model
file, 9 permissions and leftovers).

``tests/runkit/test_fault_audit.py`` runs each case as a test; run as a script it prints the
count of right cases and each wrong one::

    PYTHONPATH=$PWD python tests/fault_audit.py          # this checkout
    PYTHONPATH=/path/to/other/checkout python tests/fault_audit.py   # another one's code

(run from elsewhere than a checkout's root, the library imported is the one on PYTHONPATH).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import pickletools
import shutil
import struct
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FORMATS = HERE / "formats"
if __name__ == "__main__":  # a script: its folder's test packages "flows" and "neurodyn" would
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # shadow the library


@dataclass(frozen=True)
class Case:
    """One audited case: its group in the issue, a name and the check (raises AssertionError)."""

    group: int
    name: str
    check: Callable[[Env], None]


CASES: list[Case] = []


def case(group: int, name: str):
    """Register the decorated ``check(env)`` as a case of ``group``."""

    def deco(func):
        CASES.append(Case(group, name, func))
        return func

    return deco


# ------------------------------------------------------------------ running and listing
def run(prog: str, argv: list[str], umask: int | None = None) -> tuple[int, str]:
    """``main(argv)`` of ``neurodyn`` or ``flows`` in this process: (exit code, stderr); the
    warnings it raises are printed to stderr as a command line would show them."""
    if prog == "neurodyn":
        from neurodyn.cli import main
    else:
        from flows.cli import main
    err = io.StringIO()
    old = os.umask(umask) if umask is not None else None
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("default")
            code = main([str(a) for a in argv])
    finally:
        if old is not None:
            os.umask(old)
    return code, err.getvalue()


def listing(path: Path) -> dict | None:
    """Every entry under ``path`` (itself included): name -> (kind, size, mode, mtime_ns, sha256
    of the bytes); None when ``path`` does not exist."""
    path = Path(path)
    if not path.exists():
        return None
    entries = [path, *sorted(path.rglob("*"))] if path.is_dir() else [path]
    out = {}
    for p in entries:
        st = p.stat()
        digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
        out[str(p.relative_to(path.parent))] = ("dir" if p.is_dir() else "file", st.st_size,
                                                oct(st.st_mode & 0o777), st.st_mtime_ns, digest)
    return out


def refused(prog: str, argv: list, watch: Path, words: list[str], code: int = 2,
            absent: list[str] = ()) -> str:
    """Run a command that must be refused: exit ``code``, one line on stderr naming every one
    of ``words`` (case-insensitive) and none of ``absent``, and ``watch`` listed the same before
    and after. Returns the line."""
    before = listing(watch)
    got, err = run(prog, argv)
    after = listing(watch)
    line = err.strip()
    assert got == code, f"exit {got}, expected {code}: {line[:400]}"
    assert len(line.splitlines()) == 1, f"{len(line.splitlines())} lines on stderr: {line[:600]}"
    for word in words:
        assert word.lower() in line.lower(), f"{word!r} not named: {line[:400]}"
    for word in absent:
        assert word.lower() not in line.lower(), f"{word!r} in the line: {line[:400]}"
    assert after == before, f"{watch} changed: {_diff(before, after)}; {line[:200]}"
    return line


def _diff(before: dict | None, after: dict | None) -> str:
    if before is None or after is None:
        return f"{'absent' if before is None else 'present'} before, " \
               f"{'absent' if after is None else sorted(after)} after"
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return f"entries {changed}"


# ------------------------------------------------------------------ the environment
class Env:
    """A scratch folder and the models the cases share, built once, on first use."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._built: dict[str, Path] = {}
        self._count = 0

    def fresh(self, name: str) -> Path:
        """A path under the scratch folder that does not exist yet."""
        self._count += 1
        return self.root / f"{self._count:03d}-{name}"

    def folder(self, name: str) -> Path:
        """A new, empty folder."""
        p = self.fresh(name)
        p.mkdir()
        return p

    def _once(self, key: str, build: Callable[[Path], None]) -> Path:
        if key not in self._built:
            path = self.root / f"fixture-{key}"
            build(path)
            self._built[key] = path
        return self._built[key]

    @property
    def ring(self) -> Path:
        """``neurodyn fit ring`` (16 neurons, 2 steps) run under umask 022."""
        return self._once("ring", lambda p: _ok(run(
            "neurodyn", ["fit", "ring", "--n", "16", "--steps", "2", "--out", p], umask=0o022)))

    @property
    def torus(self) -> Path:
        """``neurodyn fit torus`` (12 x 12, 2 steps)."""
        return self._once("torus", lambda p: _ok(run(
            "neurodyn", ["fit", "torus", "--n", "12", "12", "--steps", "2", "--out", p])))

    @property
    def flow(self) -> Path:
        """``flows train`` on moons (width 16, 20 steps)."""
        return self._once("flow", lambda p: _ok(run(
            "flows", ["train", "--data", "moons", "--steps", "20", "--width", "16",
                      "--n-eval", "50", "--out", p])))

    @property
    def activity(self) -> Path:
        """Recorded ring counts ``(2999, 20)`` at dt 0.02 s with their heading (an .npz)."""
        def build(p: Path) -> None:
            from neurodyn.datasets import rat_trajectory, ring_activity

            p.mkdir()
            tr = rat_trajectory(dt=0.02, duration=60.0, synthetic=True, seed=0)
            ring_activity(cells=30, recorded=20, trajectory=tr, seed=0).save(p / "data.npz")

        return self._once("activity", build) / "data.npz"

    @property
    def cells_model(self) -> Path:
        """A fit-activity model folder for :attr:`activity`: the ring network and its cells."""
        def build(p: Path) -> None:
            from types import SimpleNamespace

            from neurodyn.inference import place_ring_cells
            from neurodyn.inference.files import save_cells

            p.mkdir()
            d = np.load(self.activity)
            cells = place_ring_cells(d["counts"].astype(float), d["heading"], float(d["dt"]))
            shutil.copy(self.ring / "model.pt", p / "model.pt")
            save_cells(p / "cells.npz", SimpleNamespace(
                cells=cells, geometry="ring", dt=float(d["dt"]),
                used=np.ones(d["counts"].shape[1], bool), lattice=None))

        return self._once("cells", build)

    def activity_with(self, name: str, **arrays) -> Path:
        """:attr:`activity` with some arrays replaced (an .npz under a new name)."""
        path = self.fresh(name).with_suffix(".npz")
        np.savez(path, **{**dict(np.load(self.activity)), **arrays})
        return path

    def copy(self, folder: Path, name: str) -> Path:
        """A copy of a run folder (times and modes kept)."""
        dest = self.fresh(name)
        shutil.copytree(folder, dest)
        return dest


def _ok(result: tuple[int, str]) -> None:
    code, err = result
    if code != 0:
        raise RuntimeError(f"building a fixture failed ({code}): {err.strip()[-500:]}")


# ------------------------------------------------------------------ faulty files
def _data_offset(data: bytes, info: zipfile.ZipInfo) -> int:
    """Where a stored zip entry's bytes start (after its local header)."""
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                   info.header_offset + 30])
    return info.header_offset + 30 + name_len + extra_len


def flip_tensor_byte(src: Path, dest: Path) -> Path:
    """A copy of a torch file with one byte flipped in the middle of its largest tensor's data."""
    data = bytearray(Path(src).read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = max((i for i in zf.infolist() if "/data/" in i.filename and
                    not i.filename.endswith("serialization_id")), key=lambda i: i.file_size)
    data[_data_offset(data, info) + info.file_size // 2] ^= 0x01
    Path(dest).write_bytes(bytes(data))
    return Path(dest)


def flip_pickled_float(src: Path, dest: Path) -> Path:
    """A copy of a torch file with the last byte of the first float of its ``data.pkl`` flipped
    (the pickle stays valid; the number changes in its last digits)."""
    data = bytearray(Path(src).read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = next(i for i in zf.infolist() if i.filename.endswith("data.pkl"))
        pkl = zf.read(info)
    at = next(pos for op, _, pos in pickletools.genops(pkl) if op.name == "BINFLOAT")
    data[_data_offset(data, info) + at + 8] ^= 0x01
    Path(dest).write_bytes(bytes(data))
    return Path(dest)


def declared_npz(path: Path, **arrays: tuple[tuple[int, ...], str]) -> Path:
    """An .npz whose arrays' headers declare ``name=(shape, dtype)`` and hold no data."""
    from numpy.lib import format as npformat

    with zipfile.ZipFile(path, "w") as zf:
        for name, (shape, dtype) in arrays.items():
            buf = io.BytesIO()
            npformat.write_array_header_1_0(buf, {"descr": npformat.dtype_to_descr(
                np.dtype(dtype)), "fortran_order": False, "shape": tuple(shape)})
            zf.writestr(f"{name}.npy", buf.getvalue())
    return path


def truncated(src: Path, dest: Path) -> Path:
    """The first half of a file."""
    data = Path(src).read_bytes()
    Path(dest).write_bytes(data[:len(data) // 2])
    return Path(dest)


def mnist_cache(folder: Path, train: int = 50_000, width: int = 784, drop: str = "",
                images: np.ndarray | None = None) -> Path:
    """An MNIST cache folder (``mnist.npz``) of blank images, with one fault."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for split, n in (("train", train), ("valid", 10_000), ("test", 10_000)):
        arrays[f"{split}_images"] = np.zeros((n, width), np.uint8)
        arrays[f"{split}_labels"] = (np.arange(n) % 10).astype(np.uint8)
    if images is not None:
        arrays["train_images"] = images
    arrays.pop(drop, None)
    np.savez(folder / "mnist.npz", **arrays)
    return folder


@contextlib.contextmanager
def env_var(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def full_disk():
    """Every fsync fails as on a full disk (ENOSPC): the first artifact written fails."""
    real = os.fsync

    def fail(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    os.fsync = fail
    try:
        yield
    finally:
        os.fsync = real


def _sim(model, out) -> list:
    return ["simulate", "--model", model, "--duration", "1", "--count", "2", "--out", out]


# ------------------------------------------------------------------ 1: a refused rerun
@case(1, "refused_rerun_leaves_the_finished_fit_byte_identical")
def _(env: Env) -> None:
    run_ = env.copy(env.ring, "finished-fit")
    refused("neurodyn", ["fit", "ring", "--n", "16", "--steps", "3", "--out", run_], run_,
            ["different config", "steps", "--fresh"])


@case(1, "refused_rerun_leaves_the_finished_training_byte_identical")
def _(env: Env) -> None:
    run_ = env.copy(env.flow, "finished-train")
    refused("flows", ["train", "--data", "moons", "--steps", "30", "--width", "16",
                      "--n-eval", "50", "--out", run_], run_, ["different config", "steps"])


@case(1, "refused_rerun_leaves_an_interrupted_grid_cell_run_byte_identical")
def _(env: Env) -> None:
    import torch

    from neurodyn.spatial.gridcells.checkpoint import save_run_state

    out = env.fresh("grid")
    argv = ["grid-cells", "--model", env.torus, "--duration", "2", "--shuffles", "0",
            "--cells", "4", "--out", out]
    _ok(run("neurodyn", argv))
    # as a run interrupted with other arguments left it: its checkpoint of another identity
    save_run_state(out / "grid_state.pt", {"seed": 99}, {"u": torch.zeros(1)})
    refused("neurodyn", argv, out, ["grid_state.pt", "another run", "--fresh"])


# ------------------------------------------------------------------ 2: damaged model files
def _damaged_format(file: Path, flip: Callable[[Path, Path], Path]) -> Callable[[Env], None]:
    def check(env: Env) -> None:
        folder = env.folder("damaged")
        bad = flip(file, folder / file.name)
        out = folder / "out"
        if file.name.startswith("flows"):
            argv = ["sample", "--model", bad, "--n", "10", "--out", folder / "s.npy"]
            refused("flows", argv, folder, ["damaged", "edited", file.name])
        else:
            refused("neurodyn", _sim(bad, out), folder, ["damaged", "edited", file.name])

    return check


for _file in sorted(FORMATS.glob("*.pt")):
    case(2, f"tensor_byte_flipped_in_{_file.stem}")(_damaged_format(_file, flip_tensor_byte))
case(2, "pickled_float_flipped_in_a_torus_model")(
    _damaged_format(FORMATS / "neurodyn-727e242-torus.pt", flip_pickled_float))


@case(2, "tensor_byte_flipped_in_a_model_of_today")
def _(env: Env) -> None:
    folder = env.folder("today")
    bad = flip_tensor_byte(env.ring / "model.pt", folder / "model.pt")
    refused("neurodyn", _sim(bad, folder / "out"), folder, ["damaged", "edited", "model.pt"])


# ------------------------------------------------------------------ 3: declared sizes
@case(3, "generate_count_1e13")
def _(env: Env) -> None:
    out = env.fresh("gen")
    refused("neurodyn", ["generate", "--model", env.ring, "--count", "10000000000000",
                         "--out", out], out, ["--count", "memory", "available"],
            absent=["unexpected"])


@case(3, "grid_cells_trajectory_declaring_745_GiB")
def _(env: Env) -> None:
    folder = env.folder("traj")
    path = declared_npz(folder / "track.npz", t=((50_000_000_000,), "<f8"),
                        pos=((50_000_000_000, 2), "<f8"))
    refused("neurodyn", ["grid-cells", "--model", env.torus, "--trajectory", path, "--out",
                         folder / "out"], folder, ["track.npz", "available"],
            absent=["unexpected"])


@case(3, "mnist_cache_declaring_90_TiB")
def _(env: Env) -> None:
    folder = env.folder("mnist-huge")
    cache = folder / "cache"
    cache.mkdir()
    declared_npz(cache / "mnist.npz", train_images=((50_000_000_000_000, 2), "u1"),
                 train_labels=((50_000,), "u1"), valid_images=((10_000, 784), "u1"),
                 valid_labels=((10_000,), "u1"), test_images=((10_000, 784), "u1"),
                 test_labels=((10_000,), "u1"))
    with env_var("FLOWS_DATA_DIR", str(cache)):
        refused("flows", ["train", "--data", "mnist", "--steps", "2", "--out", folder / "out"],
                folder, ["mnist.npz", "available"], absent=["unexpected"])


def _too_large(command: str, argv: Callable[[Env], list], words: list[str]):
    def check(env: Env) -> None:
        out = env.fresh(command)
        refused("neurodyn", [command, *argv(env), "--out", out], out,
                [*words, "available"], absent=["unexpected"])

    return check


# sizes found beyond the three: each was an "unexpected" allocation error, or a run
case(3, "speed_gain_duration_1e12")(_too_large(
    "speed-gain", lambda e: ["--model", e.ring, "--duration", "1e12"], ["--duration"]))
case(3, "fit_activity_learned_ring_of_1e10_neurons")(_too_large(
    "fit-activity", lambda e: ["ring", "--data", e.activity, "--n", "10000000000"], ["--n"]))
case(3, "sweep_grid_of_1e10_neurons")(_too_large(
    "sweep", lambda e: ["kappa", "--grid", "n=10000000000", "--workers", "0"], ["--grid"]))
case(3, "fit_torus_of_1e10_neurons")(_too_large(
    "fit", lambda e: ["torus", "--n", "100000", "100000"], ["--n"]))


@case(3, "grid_cells_tracking_spanning_1e12_seconds")
def _(env: Env) -> None:
    folder = env.folder("long-track")
    np.savez(folder / "track.npz", t=np.array([0.0, 0.02, 1e12]), pos=np.full((3, 2), 0.5))
    refused("neurodyn", ["grid-cells", "--model", env.torus, "--trajectory",
                         folder / "track.npz", "--dt", "0.02", "--out", folder / "out"],
            folder, ["track.npz", "1e+12 s", "available"], absent=["unexpected"])


@case(3, "windows_longer_than_the_recording")
def _(env: Env) -> None:
    for argv, words in (
            (["fit-activity", "ring", "--data", env.activity, "--window", "100001"],
             ["--window", "2999"]),
            (["generate", "--model", env.cells_model, "--data", env.activity, "--window",
              "100001"], ["window", "2999"])):
        out = env.fresh("window")
        refused("neurodyn", [*argv, "--out", out], out, words)


# ------------------------------------------------------------------ 4: refused before claiming
def _fit_activity_counts(name: str, counts: Callable[[np.ndarray], np.ndarray]):
    def check(env: Env) -> None:
        c = np.load(env.activity)["counts"]
        data = env.activity_with(name, counts=counts(c))
        out = env.fresh("fa")
        refused("neurodyn", ["fit-activity", "ring", "--data", data, "--no-topology",
                             "--out", out], out, ["counts"])

    return check


case(4, "fit_activity_negative_counts")(_fit_activity_counts(
    "negative", lambda c: np.where(np.arange(c.size).reshape(c.shape) == 7, -1, c)))
case(4, "fit_activity_all_zero_counts")(_fit_activity_counts(
    "zero", lambda c: np.zeros(c.shape, np.int64)))
case(4, "fit_activity_overflowing_int64_counts")(_fit_activity_counts(
    "overflow", lambda c: np.full(c.shape, 2**62, np.int64)))


@case(4, "decode_empty_counts")
def _(env: Env) -> None:
    data = env.activity_with("empty", counts=np.zeros((0, 20)), heading=np.zeros(0))
    out = env.fresh("dec")
    refused("neurodyn", ["decode", "--model", env.cells_model, "--data", data, "--out", out],
            out, ["counts"], absent=["zero-size array"])


def _generate_data(name: str, data: Callable[[Env], Path], model: Callable[[Env], Path],
                   words: list[str]):
    def check(env: Env) -> None:
        out = env.fresh("gen")
        refused("neurodyn", ["generate", "--model", model(env), "--data", data(env),
                             "--count", "150", "--held", "50", "--out", out], out, words,
                absent=["unexpected"])

    case(4, name)(check)


_generate_data("generate_data_with_a_model_without_cells_valid_counts", lambda e: e.activity,
               lambda e: e.ring, ["cells.npz"])
_generate_data("generate_data_with_a_model_without_cells_truncated_counts",
               lambda e: truncated(e.activity, e.fresh("t").with_suffix(".npz")),
               lambda e: e.ring, ["cells.npz"])
_generate_data("generate_data_with_a_model_without_cells_missing_counts",
               lambda e: e.fresh("missing").with_suffix(".npz"), lambda e: e.ring,
               ["cells.npz"])
_generate_data("generate_data_declaring_72_TiB",
               lambda e: declared_npz(e.fresh("big").with_suffix(".npz"),
                                      counts=((10_000_000_000_000, 1), "<f8"),
                                      dt=((), "<f8")),
               lambda e: e.cells_model, ["available"])


def _pickle_npz(env: Env) -> Path:
    path = env.fresh("pickle").with_suffix(".npz")
    np.savez(path, counts=np.array([{"a": 1}], dtype=object), dt=np.float64(0.02))
    return path


_generate_data("generate_data_holding_a_pickle", _pickle_npz, lambda e: e.cells_model,
               ["pickle.npz"])


@case(4, "flows_eval_fd_on_2d_samples")
def _(env: Env) -> None:
    folder = env.folder("fd")
    rng = np.random.default_rng(0)
    np.save(folder / "a.npy", rng.normal(size=(100, 2)))
    np.save(folder / "b.npy", rng.normal(size=(100, 2)))
    refused("flows", ["eval", "--samples", folder / "a.npy", "--reference", folder / "b.npy",
                      "--metric", "fd", "--out", folder / "out"], folder, ["fd"])


def _negative_seed(command: str, model: Callable[[Env], Path], extra: list[str]):
    def check(env: Env) -> None:
        out = env.fresh(command)
        refused("neurodyn", [command, "--model", model(env), *extra, "--out", out], out,
                ["seed"])

    return check


case(4, "diffuse_seed_minus_5")(_negative_seed(
    "diffuse", lambda e: e.ring, ["--seed", "-5", "--duration", "5", "--runs", "2"]))
case(4, "manifold_seed_minus_1")(_negative_seed(
    "manifold", lambda e: e.ring, ["--seed", "-1", "--samples", "50", "--no-topology"]))
case(4, "simulate_seed_minus_1")(_negative_seed(
    "simulate", lambda e: e.ring, ["--seed", "-1", "--duration", "1", "--count", "2"]))
case(4, "restore_seed_minus_1")(_negative_seed(
    "restore", lambda e: e.ring, ["--seed", "-1", "--duration", "1", "--count", "2"]))
case(4, "path_integrate_seed_minus_1")(_negative_seed(
    "path-integrate", lambda e: e.ring, ["--seed", "-1", "--duration", "1", "--runs", "2"]))
case(4, "generate_seed_minus_1")(_negative_seed(
    "generate", lambda e: e.ring, ["--seed", "-1", "--count", "150", "--held", "50"]))
case(4, "grid_cells_seed_minus_1")(_negative_seed(
    "grid-cells", lambda e: e.torus, ["--seed", "-1", "--duration", "5"]))


@case(4, "options_found_by_a_sweep_of_extreme_values")
def _(env: Env) -> None:
    """Each was an "unexpected" error, a refusal after the claim or a process killed for
    memory, found by trying -1, 0, nan, 1e300 and 2.5 in every numeric option."""
    for argv, words in (
            (["speed-gain", "--model", env.ring, "--coupling-width", "1e300"],
             ["--coupling-width"]),
            (["generate", "--model", env.ring, "--relax", "1e300"], ["--relax", "available"]),
            (["grid-cells", "--model", env.torus, "--duration", "2", "--orientation",
              "1e300"], ["orientation"]),
            (["grid-cells", "--model", env.torus, "--duration", "2", "--gain-sd", "2.5"],
             ["gain_sd", "spectrum"]),
            (["grid-cells", "--model", env.torus, "--duration", "2", "--weight-sd", "1e300"],
             ["weight_sd", "steps per trajectory sample"])):
        out = env.fresh(argv[0])
        refused("neurodyn", [*argv, "--out", out], out, words, absent=["unexpected"])


@case(4, "flows_and_sweep_options_found_by_a_sweep_of_extreme_values")
def _(env: Env) -> None:
    for prog, argv, words in (
            ("flows", ["train", "--data", "moons", "--lr", "1e300"], ["lr", "float32"]),
            ("flows", ["experiment", "width", "--widths", "8", "--lr", "1e300"], ["lr"]),
            ("flows", ["experiment", "width", "--widths", "8", "--scheduler", "nowhere"],
             ["scheduler"]),
            ("neurodyn", ["sweep", "kappa", "--scheduler", "nowhere"], ["scheduler"])):
        out = env.fresh(argv[0])
        refused(prog, [*argv, "--out", out], out, words, absent=["unexpected"])


@case(4, "grid_cells_bins_1")
def _(env: Env) -> None:
    out = env.fresh("bins")
    refused("neurodyn", ["grid-cells", "--model", env.torus, "--bins", "1", "--duration", "5",
                         "--out", out], out, ["bins"])


@case(4, "grid_cells_teleporting_trajectory")
def _(env: Env) -> None:
    folder = env.folder("teleport")
    pos = np.full((200, 2), 0.2)
    pos[100:] = 0.8  # 0.85 m in 20 ms
    np.save(folder / "track.npy", pos)
    refused("neurodyn", ["grid-cells", "--model", env.torus, "--trajectory",
                         folder / "track.npy", "--dt", "0.02", "--out", folder / "out"],
            folder, ["trajectory"])


# ------------------------------------------------------------------ 5: "unexpected" errors
@case(5, "fit_activity_truncated_npz")
def _(env: Env) -> None:
    folder = env.folder("trunc")
    data = truncated(env.activity, folder / "data.npz")
    refused("neurodyn", ["fit-activity", "ring", "--data", data, "--out", folder / "out"],
            folder, ["--data", "data.npz"], absent=["unexpected"])


@case(5, "decode_truncated_data")
def _(env: Env) -> None:
    folder = env.folder("trunc")
    data = truncated(env.activity, folder / "data.npz")
    refused("neurodyn", ["decode", "--model", env.cells_model, "--data", data, "--out",
                         folder / "out"], folder, ["--data", "data.npz"], absent=["unexpected"])


@case(5, "decode_truncated_cells")
def _(env: Env) -> None:
    model = env.copy(env.cells_model, "cells")
    truncated(env.cells_model / "cells.npz", model / "cells.npz")
    out = env.fresh("out")
    refused("neurodyn", ["decode", "--model", model, "--data", env.activity, "--out", out],
            out, ["cells.npz"], absent=["unexpected"])


@case(5, "grid_cells_truncated_trajectory")
def _(env: Env) -> None:
    folder = env.folder("trunc")
    np.savez(folder / "full.npz", position=np.full((500, 2), 0.5))
    path = truncated(folder / "full.npz", folder / "track.npz")
    refused("neurodyn", ["grid-cells", "--model", env.torus, "--trajectory", path, "--dt",
                         "0.02", "--out", folder / "out"], folder, ["track.npz"],
            absent=["unexpected"])


def _mnist_refused(env: Env, name: str, words: list[str], **fault) -> None:
    folder = env.folder(name)
    cache = mnist_cache(folder / "cache", **fault)
    with env_var("FLOWS_DATA_DIR", str(cache)):
        refused("flows", ["train", "--data", "mnist", "--steps", "2", "--out", folder / "out"],
                folder, ["mnist.npz", *words], absent=["unexpected"])


@case(5, "mnist_cache_missing_a_key")
def _(env: Env) -> None:
    _mnist_refused(env, "mnist-key", ["train_labels"], drop="train_labels")


@case(5, "mnist_cache_wrong_image_width")
def _(env: Env) -> None:
    _mnist_refused(env, "mnist-width", ["train_images", "784"], width=783)


def _flows_model_edited(env: Env, name: str, edit: Callable[[dict], None]) -> tuple[Path, Path]:
    import torch

    folder = env.folder(name)
    blob = torch.load(env.flow / "model.pt", weights_only=True)
    edit(blob)
    torch.save(blob, folder / "model.pt")
    return folder, folder / "model.pt"


@case(5, "flows_model_without_its_spec")
def _(env: Env) -> None:
    folder, model = _flows_model_edited(env, "nospec", lambda b: b.pop("spec"))
    refused("flows", ["sample", "--model", model, "--n", "10", "--out", folder / "s.npy"],
            folder, ["model.pt", "spec"], absent=["unexpected"])


# ------------------------------------------------------------------ 6: bad input accepted
@case(6, "decode_negative_counts")
def _(env: Env) -> None:
    c = np.load(env.activity)["counts"].copy()
    c[5, 3] = -2
    data = env.activity_with("neg", counts=c)
    out = env.fresh("dec")
    refused("neurodyn", ["decode", "--model", env.cells_model, "--data", data, "--out", out],
            out, ["counts"])


@case(6, "decode_window_longer_than_the_recording")
def _(env: Env) -> None:
    out = env.fresh("dec")
    refused("neurodyn", ["decode", "--model", env.cells_model, "--data", env.activity,
                         "--window", "100001", "--out", out], out, ["--window", "2999"])


@case(6, "decode_with_cells_holding_nan")
def _(env: Env) -> None:
    model = env.copy(env.cells_model, "nan-cells")
    cells = dict(np.load(model / "cells.npz"))
    cells["gain"] = np.full_like(cells["gain"], np.nan)
    np.savez(model / "cells.npz", **cells)
    out = env.fresh("dec")
    refused("neurodyn", ["decode", "--model", model, "--data", env.activity, "--out", out],
            out, ["cells.npz", "gain"])


@case(6, "grid_cells_complex_positions")
def _(env: Env) -> None:
    folder = env.folder("complex")
    t = np.arange(500) * 0.02
    np.savez(folder / "positions.npz", position=np.full((500, 2), 0.5 + 0.1j))
    np.savez(folder / "tracking.npz", t=t, pos=np.full((500, 2), 0.5 + 0.1j))
    for name in ("positions.npz", "tracking.npz"):  # the positions, or a tracking to resample
        refused("neurodyn", ["grid-cells", "--model", env.torus, "--trajectory",
                             folder / name, "--dt", "0.02", "--out", folder / "out"],
                folder, [name, "complex"])


@case(6, "mnist_cache_with_10_training_images")
def _(env: Env) -> None:
    _mnist_refused(env, "mnist-10", ["train_images", "50000"], train=10)


@case(6, "mnist_cache_of_nan_images")
def _(env: Env) -> None:
    _mnist_refused(env, "mnist-nan", ["train_images"],
                   images=np.full((50_000, 784), np.nan, np.float16))


# ------------------------------------------------------------------ 7: --config
@case(7, "config_whose_argv_runs_another_command")
def _(env: Env) -> None:
    folder = env.folder("config")
    record = json.loads((env.ring / "config.json").read_text())
    record["argv"] = _sim(env.ring, folder / "sim")
    record["argv"] = [str(a) for a in record["argv"]]
    (folder / "config.json").write_text(json.dumps(record))
    refused("neurodyn", ["fit", "--config", folder / "config.json", "--out", folder / "out"],
            folder, ["argv", "neurodyn simulate", "neurodyn fit"])


# ------------------------------------------------------------------ 8: a model's values
@case(8, "flows_model_with_a_bad_regime")
def _(env: Env) -> None:
    folder, model = _flows_model_edited(env, "regime",
                                        lambda b: b["spec"].__setitem__("regime", "bogus"))
    refused("flows", ["sample", "--model", model, "--n", "10", "--out", folder / "s.npy"],
            folder, ["model.pt", "regime", "bogus"])


@case(8, "flows_model_with_a_missing_source")
def _(env: Env) -> None:
    folder, model = _flows_model_edited(
        env, "source", lambda b: b["config"].__setitem__("source", "gone.npy"))
    refused("flows", ["sample", "--model", model, "--n", "10", "--out", folder / "s.npy"],
            folder, ["model.pt", "source", "gone.npy"])


@case(8, "neurodyn_model_with_huge_coefficients")
def _(env: Env) -> None:
    import torch

    folder = env.folder("huge")
    blob = torch.load(env.ring / "model.pt", weights_only=True)
    blob["energy_state"] = {k: v * 1e30 if v.is_floating_point() else v
                            for k, v in blob["energy_state"].items()}
    torch.save(blob, folder / "model.pt")
    refused("neurodyn", _sim(folder / "model.pt", folder / "out"), folder,
            ["model.pt", "energy_state"])


@case(8, "flows_train_data_beyond_float32")
def _(env: Env) -> None:
    folder = env.folder("f32")
    x = np.random.default_rng(0).normal(size=(200, 2))
    x[3, 1] = 1e39
    np.save(folder / "big.npy", x)
    refused("flows", ["train", "--data", folder / "big.npy", "--steps", "2", "--out",
                      folder / "out"], folder, ["float32", "big.npy"],
            absent=["non-finite", "warning"])


# ------------------------------------------------------------------ 9: permissions, leftovers
@case(9, "umask_022_gives_0644_artifacts")
def _(env: Env) -> None:
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in env.ring.rglob("*") if p.is_file()}
    wrong = {k: v for k, v in modes.items() if v != "0o644"}
    assert modes and not wrong, f"modes other than 0o644: {wrong}"


@case(9, "refusal_into_a_foreign_run_leaves_its_lock")
def _(env: Env) -> None:
    folder = env.copy(env.ring, "foreign")
    (folder / ".lock").write_text("")  # as an earlier version left it
    os.utime(folder / ".lock", ns=(1_000_000_000, 1_000_000_000))
    refused("flows", ["train", "--data", "moons", "--steps", "2", "--out", folder], folder,
            ["neurodyn fit"])


@case(9, "disk_full_sample_leaves_no_lock")
def _(env: Env) -> None:
    folder = env.folder("full")
    with full_disk():
        code, err = run("flows", ["sample", "--model", env.flow, "--n", "10", "--out",
                                  folder / "s.npy"])
    assert code == 1, f"exit {code}: {err.strip()[:300]}"
    left = sorted(p.name for p in folder.iterdir())
    assert left == [], f"left behind: {left}"


@case(9, "disk_full_is_one_line_naming_the_path")
def _(env: Env) -> None:
    out = env.fresh("full")
    with full_disk():
        code, err = run("neurodyn", _sim(env.ring, out))
    line = err.strip()
    assert code == 1, f"exit {code}: {line[:300]}"
    assert len(line.splitlines()) == 1 and "unexpected" not in line, line[:400]
    assert str(out) in line and "no space left" in line.lower(), line[:400]


# ------------------------------------------------------------------ the script
def audit(root: Path | None = None, only: list[str] | None = None) -> list[tuple[Case, str]]:
    """Run every case (or those named in ``only``); return each with "" (right) or why it is
    wrong."""
    with tempfile.TemporaryDirectory() as tmp:
        env = Env(Path(root or tmp))
        results = []
        for c in CASES:
            if only and c.name not in only:
                continue
            start = time.perf_counter()
            try:
                c.check(env)
                why = ""
            except AssertionError as err:
                why = str(err) or "assertion failed"
            except Exception as err:  # noqa: BLE001 - a crash of the harness is a wrong case too
                why = f"harness error {type(err).__name__}: {err}"
            print(f"{'right' if not why else 'WRONG'} {c.group} {c.name} "
                  f"({time.perf_counter() - start:.1f} s){': ' + why[:300] if why else ''}",
                  file=sys.__stderr__, flush=True)
            results.append((c, why))
    return results


def main(argv: list[str] | None = None) -> int:
    """Print the count of right cases and the wrong ones; exit 1 if any is wrong."""
    import flows
    import neurodyn

    print(f"library: {Path(neurodyn.__file__).parent.parent} "
          f"(flows from {Path(flows.__file__).parent.parent})")
    results = audit(only=list(argv or sys.argv[1:]) or None)
    wrong = [(c, why) for c, why in results if why]
    print(f"{len(results) - len(wrong)} right of {len(results)} "
          f"({100 * (len(results) - len(wrong)) / max(len(results), 1):.1f}%)")
    for c, why in wrong:
        print(f"  wrong: group {c.group} {c.name}: {why[:300]}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
