"""Sweeps: a grid of independent cells run on a Dask cluster, stored as they finish, resumable.

A sweep is a function ``cell(params) -> dict`` of one cell's parameters (its grid coordinates,
the fixed settings and a ``seed`` derived from the coordinates) and a grid ``{axis: values}``.
:func:`run_sweep` submits every cell not yet stored to a Dask cluster (a ``LocalCluster`` of
one single-threaded worker process per core by default, or an existing scheduler by address),
writes each finished cell atomically to ``OUT/cells/<key>.json`` as it arrives (so an
interrupted sweep loses only the cells in flight, and a rerun runs only the missing ones), and
at the end writes one table ``OUT/table.csv`` in grid order (and ``OUT/table.parquet`` when
pyarrow is installed, extra ``parquet``). Each cell file holds the key of the full
configuration that produced it (a hash of the cell function, its parameters: the fixed
settings, the coordinates and the seed) and a checksum of its content: a stored cell is reused
only when both match, so a cell left by a run with other settings (another base seed, other
fixed settings), or a truncated or edited cell file, is computed again, never tabled.
Because each cell's seed depends
only on its coordinates and the sweep's base seed, the table does not depend on the number of
workers or the order in which cells finish.

The command-line options of a sweep (``--workers``, ``--scheduler``) are added by
:func:`_runkit.cli.add_sweep_arguments`.

Without the optional ``dask[distributed]`` dependency (extra ``cluster``) a sweep runs its
cells one after another in this process (``workers=0`` asks for that explicitly).

Examples
--------
>>> import tempfile
>>> def square(p):
...     return {"y": p["x"] ** 2}
>>> res = run_sweep(square, {"x": [1, 2, 3]}, tempfile.mkdtemp(), workers=0,
...                 progress=False)
>>> [row["y"] for row in res.rows], res.ran
([1, 4, 9], 3)
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import importlib.util
import io
import itertools
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BadInput, RunFailed
from .files import atomic_write_bytes, atomic_write_text, read_json, to_jsonable, write_json
from .results import require_pandas, require_xarray
from .runtime import progress as progress_bar
from .runtime import set_threads
from .seeds import check_seed

__all__ = ["SweepResult", "cell_seed", "config_key", "grid_cells", "grid_points", "local_cluster",
           "run_sweep", "check_sweep_options", "sweep_workers", "DASK_AVAILABLE",
           "PARQUET_AVAILABLE", "PRELOAD"]

#: whether dask.distributed is installed (extra ``cluster``)
DASK_AVAILABLE = importlib.util.find_spec("distributed") is not None
#: whether pyarrow is installed (extra ``parquet``): the table is then also ``table.parquet``
PARQUET_AVAILABLE = importlib.util.find_spec("pyarrow") is not None


def cell_seed(base_seed: int, coords: Mapping[str, Any]) -> int:
    """A seed in ``[0, 2**31)`` from the base seed and a cell's coordinates (stable hash).

    >>> cell_seed(0, {"n": 64, "kappa": 0.5}) == cell_seed(0, {"kappa": 0.5, "n": 64})
    True
    >>> cell_seed(0, {"n": 64}) != cell_seed(1, {"n": 64})
    True
    """
    text = json.dumps([check_seed("seed", base_seed), to_jsonable(dict(coords))], sort_keys=True)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


def grid_cells(grid: Mapping[str, Sequence]) -> list[dict]:
    """Every combination of the grid's values, in grid order (last axis fastest).

    >>> grid_cells({"a": [1, 2], "b": ["x", "y"]})
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    if not grid:
        raise BadInput("grid: needs at least one axis {name: [values]}")
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise BadInput(f"grid[{name!r}]={values!r}: must be a non-empty list of values")
    names = list(grid)
    return [dict(zip(names, combo, strict=True))
            for combo in itertools.product(*(grid[n] for n in names))]


def _key(coords: Mapping[str, Any]) -> str:
    text = json.dumps(to_jsonable(dict(coords)), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep.

    Attributes
    ----------
    rows : one dict per cell in grid order: coordinates, ``seed``, then the cell's results.
    table : path of ``table.csv``.
    parquet : path of ``table.parquet`` (the same table), ``None`` without pyarrow.
    ran : cells computed by this call (the others were already stored).
    seconds : wall time of this call.
    stale : stored cell files this call did not reuse and computed again (written by another
        configuration, truncated or edited).
    """

    rows: list
    table: Path
    ran: int
    seconds: float
    parquet: Path | None = None
    stale: int = 0

    def __repr__(self) -> str:
        return (f"SweepResult(cells={len(self.rows)}, ran={self.ran}, "
                f"seconds={self.seconds:.3g}, table={str(self.table)!r})")

    def to_pandas(self):
        """The table (one row per cell, as ``table.csv``) as a DataFrame; needs pandas.

        Returns
        -------
        pandas.DataFrame
        """
        return require_pandas("SweepResult.to_pandas()").DataFrame(self.rows)

    def to_xarray(self):
        """The table as an ``xarray.Dataset`` with one dimension ``run`` (one cell each, in
        grid order) and one variable per column; needs xarray (extra ``xarray``).

        Returns
        -------
        xarray.Dataset
        """
        require_xarray("SweepResult.to_xarray()")
        return self.to_pandas().rename_axis("run").to_xarray()

    def to_dict(self) -> dict:
        """Summary for ``metrics.json``: what the configuration determines (a resumed sweep
        writes the same); what this call did is :meth:`timing`."""
        return {"cells": len(self.rows), "table": str(self.table),
                "parquet": None if self.parquet is None else str(self.parquet)}

    def timing(self) -> dict:
        """What this call did, for ``timing.json``: cells computed, stale cells recomputed,
        wall time."""
        return {"ran": self.ran, "stale": self.stale, "seconds": self.seconds}


def _run_cell(cell: Callable[[dict], dict], params: dict) -> dict:
    """Run one cell with one thread per library (workers share the machine's cores)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    set_threads(1)
    out = cell(dict(params))
    if not isinstance(out, Mapping):
        raise RunFailed(f"sweep cell {params}: returned {type(out).__name__}, expected a dict")
    return dict(out)


def _cell_name(cell: Callable) -> str:
    """A stable name of a cell function (``module.qualname``; a partial names its parts)."""
    if isinstance(cell, functools.partial):
        return "/".join([_cell_name(cell.func), *(_cell_name(a) if callable(a) else repr(a)
                                                   for a in cell.args)])
    return f"{getattr(cell, '__module__', '')}.{getattr(cell, '__qualname__', repr(cell))}"


def config_key(cell: Callable, params: Mapping[str, Any]) -> str:
    """The key of the full configuration of one cell: a hash of the cell function's name and
    its parameters (fixed settings, coordinates and seed), as JSON.

    >>> def f(p):
    ...     return {}
    >>> config_key(f, {"x": 1, "seed": 5}) == config_key(f, {"seed": 5, "x": 1})
    True
    >>> config_key(f, {"x": 1, "seed": 5}) != config_key(f, {"x": 1, "seed": 6})
    True
    """
    try:
        params = to_jsonable(dict(params))
    except TypeError as err:
        raise BadInput(f"sweep cell parameters {sorted(params)}: {err}; a cell's parameters "
                       "must be convertible to JSON") from None
    text = json.dumps({"cell": _cell_name(cell), "params": params}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _checksum(record: Mapping[str, Any]) -> str:
    body = {k: record.get(k) for k in ("coords", "seed", "result", "config_key")}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _store(cell_dir: Path, key: str, coords: dict, seed: int, result: dict,
           cfg_key: str) -> dict:
    record = to_jsonable({"coords": coords, "seed": seed, "result": result,
                          "config_key": cfg_key})
    record["checksum"] = _checksum(record)
    write_json(record, cell_dir / f"{key}.json")
    return read_json(cell_dir / f"{key}.json", what="sweep cell")


def _valid_cell(record: Any, coords: dict, cfg_key: str) -> bool:
    """Whether a stored cell record was written by this sweep's configuration for ``coords``,
    intact: its coordinates and configuration key match and its checksum holds."""
    return (isinstance(record, dict) and isinstance(record.get("result"), dict)
            and record.get("coords") == to_jsonable(coords)
            and record.get("config_key") == cfg_key
            and record.get("checksum") == _checksum(record))


def _load_done(cell_dir: Path, cells: list[dict], cfg_keys: dict[str, str]
               ) -> tuple[dict[str, dict], int]:
    """The stored cells valid for this configuration, and how many stored files were not
    (another configuration, truncated or edited: they are computed again)."""
    done, stale = {}, 0
    for coords in cells:
        key = _key(coords)
        path = cell_dir / f"{key}.json"
        if not path.exists():
            continue
        try:
            record = read_json(path, what="sweep cell")
        except BadInput:
            record = None
        if _valid_cell(record, coords, cfg_keys[key]):
            done[key] = record
        else:
            stale += 1
    return done, stale


#: modules every local worker process starts with (imported once, in the forkserver)
PRELOAD = ("torch", "numpy")


def _forkserver_context(preload: Sequence[str]):
    """The multiprocessing context of Dask's worker processes: a forkserver that has imported
    ``preload`` (and what Dask preloads itself), so that a worker starts as a fork of a process
    that already holds torch and the sweep's modules instead of importing them again. The
    forkserver starts with the first local cluster of the process and keeps the environment
    and ``sys.path`` it started with."""
    import multiprocessing
    import multiprocessing.forkserver as fs

    import dask
    from distributed import utils

    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        ctx = utils.get_mp_context()
    server = getattr(fs, "_forkserver", None)
    if server is not None and getattr(server, "_forkserver_pid", None) is None:
        have = list(getattr(server, "_preload_modules", []) or [])
        ctx.set_forkserver_preload(have + [m for m in preload if m not in have])
    return ctx if isinstance(ctx, multiprocessing.context.BaseContext) else None


def _start_cluster(workers: int | None, preload: Sequence[str]):
    import dask
    from distributed import Client, LocalCluster

    n = (os.cpu_count() or 1) if workers is None else workers
    _forkserver_context(list(PRELOAD) + [m for m in preload if m and m != "__main__"])
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
    return Client(cluster), cluster


@contextlib.contextmanager
def local_cluster(workers: int | None = None, preload: Sequence[str] = ()):
    """A Dask client on a new ``LocalCluster`` of ``workers`` single-threaded worker processes
    (default: one per core), started from a forkserver that preloads :data:`PRELOAD` and
    ``preload``; both are closed on leaving the block. Pass the client to several
    :func:`run_sweep` calls (``client=``) to pay the start-up once::

        with local_cluster(2, preload=["neurodyn.experiments.sweeps"]) as client:
            for grid in grids:
                run_sweep(cell, grid, out, client=client)
    """
    client, cluster = _start_cluster(workers, preload)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _client(workers: int | None, scheduler: str | None, preload: Sequence[str]):
    """A Dask client and the cluster it started (``None`` for an existing scheduler)."""
    from distributed import Client

    if scheduler is not None:
        return Client(scheduler), None
    return _start_cluster(workers, preload)


def run_sweep(cell: Callable[[dict], dict], grid: Mapping[str, Sequence], out: str | Path, *,
              fixed: Mapping[str, Any] | None = None, seed: int = 0,
              workers: int | None = None, scheduler: str | None = None,
              progress: bool | None = None,
              figures: Callable[[list, Path], Any] | None = None,
              client=None, preload: Sequence[str] = ()) -> SweepResult:
    """Run every cell of ``grid`` not yet stored in ``out``; write the table (and figures).

    Parameters
    ----------
    cell : top-level (picklable) function ``params -> dict`` of scalar results; ``params``
        holds the cell's coordinates, ``fixed`` and ``seed``.
    grid : ``{axis: [values]}``; cells are all combinations, in this order.
    out : the sweep's directory (``cells/`` and ``table.csv`` go there).
    fixed : settings shared by every cell (recorded in the cell files' parameters).
    seed : base seed; cell seeds are :func:`cell_seed` of it and the coordinates.
    workers : worker processes of the local cluster (default: the number of cores); ``0``
        runs the cells in this process.
    scheduler : address of an existing Dask scheduler (``tcp://host:8786``); overrides
        ``workers``.
    progress : a bar over cells (default: on a terminal).
    figures : optional ``figures(rows, out)`` drawing the sweep's figures from the table rows.
    client : an existing Dask client (e.g. :func:`local_cluster`) to run the cells on, kept
        open; overrides ``workers`` and ``scheduler``.
    preload : modules a new local cluster's worker processes import before they start (the
        cell's own module is always among them).

    Returns
    -------
    SweepResult
    """
    start = time.perf_counter()
    out = Path(out)
    fixed = dict(fixed or {})
    cells = grid_cells(grid)
    _check_sweep(grid, fixed, workers, scheduler)
    params = {_key(c): {**fixed, **c, "seed": cell_seed(seed, c)} for c in cells}
    cfg_keys = {k: config_key(cell, p) for k, p in params.items()}
    cell_dir = out / "cells"
    cell_dir.mkdir(parents=True, exist_ok=True)
    done, stale = _load_done(cell_dir, cells, cfg_keys)
    todo = [c for c in cells if _key(c) not in done]
    bar = progress_bar(total=len(cells), initial=len(done), desc=f"sweep {out.name}",
                       enabled=progress)
    try:
        if todo and (workers == 0 or (scheduler is None and not DASK_AVAILABLE)):
            for c in todo:
                k = _key(c)
                done[k] = _store(cell_dir, k, c, params[k]["seed"], _run_cell(cell, params[k]),
                                 cfg_keys[k])
                bar.update(1)
        elif todo:
            _run_on_dask(cell, todo, params, cfg_keys, cell_dir, done, bar, out.name,
                         client=client,
                         workers=workers, scheduler=scheduler, preload=preload)
    finally:
        bar.close()
    rows = [{**done[_key(c)]["coords"], "seed": done[_key(c)]["seed"],
             **done[_key(c)]["result"]} for c in cells]
    table, parquet = _write_tables(rows, out)
    if figures is not None:
        figures(rows, out)
    return SweepResult(rows, table, len(todo), time.perf_counter() - start, parquet, stale)


def _write_tables(rows: list[dict], out: Path) -> tuple[Path, Path | None]:
    """Write ``table.csv`` (and ``table.parquet`` when pyarrow is present) into ``out``
    atomically; return their paths (None for a parquet file not written)."""
    table = out / "table.csv"
    atomic_write_text(_csv(rows), table)
    parquet = None
    if PARQUET_AVAILABLE:
        parquet = out / "table.parquet"
        atomic_write_bytes(_parquet(rows), parquet)
    return table, parquet


def _check_sweep(grid: Mapping[str, Sequence], fixed: dict, workers: int | None,
                 scheduler: str | None) -> None:
    """Raise :class:`BadInput` for a name in both ``grid`` and ``fixed`` (or ``seed`` in
    either), a bad worker count, or a scheduler without dask.distributed."""
    clash = set(fixed) & set(grid) | ({"seed"} & (set(fixed) | set(grid)))
    if clash:
        raise BadInput(f"grid/fixed: names {sorted(clash)} used twice (or 'seed', which the "
                       "sweep sets from the coordinates)")
    check_sweep_options(workers, scheduler)


def sweep_workers(workers: int | None = None, scheduler: str | None = None) -> int | None:
    """The worker processes a sweep runs on, as its ``config.json`` records them: ``workers``;
    without it one per core (a local Dask cluster), or 0 (cells in this process) without the
    ``cluster`` extra; None with a ``scheduler`` (that scheduler's workers).

    >>> sweep_workers(2)
    2
    >>> sweep_workers(None, "tcp://h:8786") is None
    True
    """
    if workers is not None or scheduler is not None:
        return workers
    return (os.cpu_count() or 1) if DASK_AVAILABLE else 0


def check_sweep_options(workers: int | None = None, scheduler: str | None = None) -> None:
    """Refuse (:class:`BadInput`) a worker count that is not an integer >= 0, and a scheduler
    without dask.distributed or whose address dask cannot parse; a command calls it before it
    claims its ``--out``.

    >>> check_sweep_options(2, None)
    >>> check_sweep_options(None, "nowhere")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    _runkit.errors.BadInput: scheduler='nowhere' ...
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 0):
        raise BadInput(f"workers={workers!r}: must be an integer >= 0 (0: in this process)")
    if scheduler is not None and not DASK_AVAILABLE:
        raise BadInput(f"scheduler={scheduler!r}: needs dask.distributed "
                       "(pip install 'neurodyn-flows[cluster]')")
    if scheduler is not None:
        _check_address(scheduler)


def _check_address(scheduler: str) -> None:
    """Refuse a scheduler address that dask cannot parse (``notanaddress``, no port)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(scheduler)
        if scheme in ("tcp", "tls", "ucx"):
            parse_host_port(location)
    except (ValueError, TypeError) as err:
        raise BadInput(f"scheduler={scheduler!r} is not a scheduler address such as "
                       f"tcp://host:8786 ({err}); see --scheduler") from None


def _run_on_dask(cell: Callable[[dict], dict], todo: list[dict], params: dict, cfg_keys: dict,
                 cell_dir: Path, done: dict, bar, name: str, *, client, workers: int | None,
                 scheduler: str | None, preload: Sequence[str]) -> None:
    """Run the cells ``todo`` on ``client`` (or on a cluster of its own, closed at the end),
    storing each result into ``cell_dir`` and ``done`` as it completes."""
    from distributed import as_completed

    own = client is None
    if own:
        client, cluster = _client(workers, scheduler,
                                  [getattr(cell, "__module__", ""), *preload])
    try:
        futures = {client.submit(_run_cell, cell, params[_key(c)], pure=False,
                                 key=f"cell-{name}-{_key(c)}"): c for c in todo}
        for fut in as_completed(futures):
            c = futures[fut]
            k = _key(c)
            done[k] = _store(cell_dir, k, c, params[k]["seed"], fut.result(), cfg_keys[k])
            bar.update(1)
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


def grid_points(point: Callable[[dict], Any], grid: Mapping[str, Sequence],
                fixed: Mapping[str, Any], sweep: Mapping[str, Any] | None, kind: type) -> list:
    """One typed result per cell of ``grid`` (grid order), in this process or as sweep cells.

    Parameters
    ----------
    point : top-level (picklable) function ``params -> Result`` of one cell's parameters
        ``{**fixed, **coordinates}`` (no ``seed``: a run's own seed is a coordinate or a fixed
        setting under another name, so the results do not depend on how the grid is run).
    grid : ``{axis: [values]}``.
    fixed : settings shared by every cell (picklable).
    sweep : ``None``: every cell in this process, one after another. Else ``{"out": DIR,
        "workers": ..., "scheduler": ...}``: the cells through :func:`run_sweep` (stored in
        and resumed from ``DIR``), each stored row (``point(params).to_dict()``) rebuilt with
        ``kind.from_dict``.
    kind : the :class:`_runkit.Result` class ``point`` returns.

    Returns
    -------
    list of ``kind``

    Examples
    --------
    >>> from _runkit.results import Result
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Square(Result):
    ...     y: int
    >>> def square(p):
    ...     return Square(p["x"] ** 2)
    >>> grid_points(square, {"x": [1, 2]}, {}, None, Square)
    [Square(y=1), Square(y=4)]
    """
    if sweep is None:
        return [point({**fixed, **coords}) for coords in grid_cells(grid)]
    opts = dict(sweep)
    preload = [*opts.pop("preload", ()), getattr(point, "__module__", "")]
    res = run_sweep(functools.partial(_point_row, point), grid, opts.pop("out"),
                    fixed=dict(fixed), preload=preload, **opts)
    return [kind.from_dict(row) for row in res.rows]


def _point_row(point: Callable[[dict], Any], params: dict) -> dict:
    """The cell of :func:`grid_points`: ``point``'s result as the JSON row a sweep stores."""
    return point(params).to_dict()


def _csv(rows: list[dict]) -> str:
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: (repr(v) if isinstance(v, float) else
                        json.dumps(v) if isinstance(v, (list, dict)) else v)
                    for k, v in row.items()})
    return buf.getvalue()


def _parquet(rows: list[dict]) -> bytes:
    """The table as Parquet bytes: the columns of :func:`_csv` in its order, numbers and
    strings typed (a column mixing them is stored as text), lists and dicts as JSON text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    arrays = {}
    for name in columns:
        values = [row.get(name) for row in rows]
        values = [json.dumps(v) if isinstance(v, (list, dict)) else v for v in values]
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays[name] = pa.array([None if v is None else str(v) for v in values])
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(arrays), sink)
    return sink.getvalue().to_pybytes()
