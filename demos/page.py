"""The offline results page: one section per demo with its figures, key numbers and command.

Each demo writes its outputs into its own folder ``results/<demo>/`` and, next to them, a
``section.json`` describing itself (:func:`write_section`)::

    {
      "title": "Ring attractor: restoration",
      "description": "Perturbed bumps relax back to the ring.",
      "figures": ["restoration.png", "energy.png"],      # relative to the section's folder
      "metrics": {"final_distance": 0.0031, "n_neurons": 128},
      "command": "neurodyn ring --out results/ring"
    }

:func:`build_report` then builds ``results/index.html`` from every
``results/*/section.json`` (a folder with only a ``metrics.json`` gets a plain section listing its
PNGs). The page needs nothing but the files next to it: inline CSS, images by relative path (or
embedded as data URIs with ``embed_images``), no fonts, scripts or styles from elsewhere. A small
inline script marks each image with ``data-loaded="true"`` or ``"false"`` once the page has
loaded, which lets a headless browser check that every figure renders.

Demo scripts import this module as ``from page import Section, write_section`` (a script's
own folder is on ``sys.path`` when it is run as ``python demos/<name>.py``); ``run_all.py`` runs
the demos and builds the page (``--page-only`` rebuilds it from a results folder). This module
imports no other script.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from _runkit.timing import Stopwatch

__all__ = [
    "Section",
    "SECTION_FILE",
    "build_report",
    "collect_sections",
    "format_value",
    "read_section",
    "write_section",
    "notebook_sections",
]

SECTION_FILE = "section.json"
METRICS_FILE = "metrics.json"
_SECTION_KEYS = ("title", "description", "figures", "metrics", "command", "links")

MetricValue = float | int | str | bool | None


@dataclass
class Section:
    """One block of the results page.

    Attributes
    ----------
    title : str
        Heading, e.g. ``"Torus attractor: Betti numbers"``.
    description : str
        One or two sentences of plain text (escaped, never interpreted as HTML).
    figures : list of str or Path
        PNG files, relative to the report folder (or absolute paths inside it).
    metrics : dict of str to number, str or bool
        Flat table of key numbers; floats are shown with 4 significant digits.
    command : str
        Shell command that reproduces the section's outputs.
    links : dict of str to str or Path
        Further files of the section, ``{label: path}`` like ``figures`` (an executed notebook,
        its rendering); shown as links under the figures.
    """

    title: str
    description: str = ""
    figures: list[str | Path] = field(default_factory=list)
    metrics: dict[str, MetricValue] = field(default_factory=dict)
    command: str = ""
    links: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.title, str) or not self.title.strip():
            raise ValueError(f"Section.title must be a non-empty string; got {self.title!r}")
        for name in ("description", "command"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(
                    f"Section.{name} must be a string; got {type(getattr(self, name)).__name__}"
                )
        if isinstance(self.figures, (str, Path)):
            raise TypeError("Section.figures must be a list of paths, not a single path")
        self.figures = list(self.figures)
        if not isinstance(self.metrics, Mapping):
            raise TypeError(f"Section.metrics must be a dict; got {type(self.metrics).__name__}")
        self.metrics = flatten_metrics(self.metrics)


def flatten_metrics(metrics: Mapping, prefix: str = "") -> dict[str, MetricValue]:
    """Flatten nested dicts into dotted keys: ``{"a": {"b": 1}} -> {"a.b": 1}``.

    Lists of scalars are kept as a comma-separated string, lists holding lists or dicts as
    their compact JSON (cut at 120 characters; the whole is in the demo's ``metrics.json``);
    anything else raises ``TypeError``.

    >>> flatten_metrics({"a": {"b": 1}, "c": [1, 2.5], "d": [[1, 2], {"e": 3}]})
    {'a.b': 1, 'c': '1, 2.5', 'd': '[[1, 2], {"e": 3}]'}
    """
    flat: dict[str, MetricValue] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_metrics(value, prefix=name + "."))
        elif isinstance(value, (list, tuple)):
            if any(isinstance(v, (Mapping, list, tuple)) for v in value):
                text = json.dumps(value, default=str)
                flat[name] = text if len(text) <= 120 else text[:117] + "..."
            else:
                flat[name] = ", ".join(format_value(v) for v in value)
        elif value is None or isinstance(value, (bool, int, float, str)):
            flat[name] = value
        elif hasattr(value, "item"):  # numpy scalar
            flat[name] = value.item()
        else:
            raise TypeError(
                f"metric {name!r} has type {type(value).__name__}; allowed: number, str, bool, "
                "None, a list of those, or a dict of those"
            )
    return flat


def format_value(value: MetricValue) -> str:
    """Format one metric for the page.

    Integers as they are; floats with 4 significant digits, in scientific notation when
    ``|x| < 1e-3`` or ``|x| >= 1e5``; ``nan`` and ``inf`` spelled out; booleans as yes/no.
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0:
            return "0"
        if abs(value) < 1e-3 or abs(value) >= 1e5:
            return f"{value:.3e}"
        return f"{value:.4g}"
    return str(value)


# ----------------------------------------------------------------------------------------------
# section.json


def write_section(out_dir: str | Path, section: Section) -> Path:
    """Write ``out_dir/section.json`` describing a demo's outputs.

    Figures are stored relative to ``out_dir``; they must lie inside it.

    Parameters
    ----------
    out_dir : path
        The demo's output folder (e.g. ``results/ring``).
    section : Section
        Figure paths relative to ``out_dir`` or absolute inside it.

    Returns
    -------
    Path of the written file.
    """
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = [_relative_inside(out_dir, f, "section.figures").as_posix() for f in section.figures]
    payload = {
        "title": section.title,
        "description": section.description,
        "figures": figures,
        "metrics": section.metrics,
        "command": section.command,
    }
    if section.links:
        payload["links"] = {label: _relative_inside(out_dir, f, "section.links").as_posix()
                            for label, f in section.links.items()}
    path = out_dir / SECTION_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2, allow_nan=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_section(path: str | Path, root: str | Path | None = None) -> Section:
    """Read a ``section.json``; figure paths become relative to ``root`` (default: its folder).

    Unknown keys are an error, so that a misspelt key is never silently dropped.
    """
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object with keys {_SECTION_KEYS}")
    unknown = sorted(set(data) - set(_SECTION_KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown keys {unknown}; allowed: {list(_SECTION_KEYS)}")
    if "title" not in data:
        raise ValueError(f"{path}: the key 'title' is required")
    base = path.parent
    root = Path(root) if root is not None else base
    figures = [
        _relative_inside(root, base / f, f"{path}: figures") for f in data.get("figures", [])
    ]
    links = {label: _relative_inside(root, base / f, f"{path}: links").as_posix()
             for label, f in data.get("links", {}).items()}
    return Section(
        title=data["title"],
        description=data.get("description", ""),
        figures=figures,
        metrics=data.get("metrics", {}),
        command=data.get("command", ""),
        links=links,
    )


def collect_sections(results_dir: str | Path) -> list[Section]:
    """Sections of every ``results_dir/*/section.json`` (or ``metrics.json``), sorted by folder.

    A folder with a ``metrics.json`` but no ``section.json`` becomes a section titled by the
    folder name with its PNGs and metrics (nested dicts flattened with dotted keys).
    """
    results_dir = Path(results_dir).resolve()
    sections = []
    for sub in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        sec_file, met_file = sub / SECTION_FILE, sub / METRICS_FILE
        if sec_file.is_file():
            sections.append(read_section(sec_file, root=results_dir))
        elif met_file.is_file():
            metrics = json.loads(met_file.read_text(encoding="utf-8"))
            if not isinstance(metrics, dict):
                raise ValueError(f"{met_file}: expected a JSON object of metrics")
            sections.append(
                Section(
                    title=sub.name,
                    description="",
                    figures=[p.relative_to(results_dir) for p in sorted(sub.glob("*.png"))],
                    metrics=metrics,
                    command="",
                )
            )
    return sections


def _relative_inside(root: Path, figure: str | Path, what: str) -> Path:
    """``figure`` as a path relative to ``root``; error if it points outside."""
    fig = Path(figure)
    absolute = fig if fig.is_absolute() else root / fig
    root_res = root.resolve()
    try:
        return absolute.resolve().relative_to(root_res)
    except ValueError:
        raise ValueError(
            f"{what}: {str(figure)!r} lies outside {str(root)!r}; figures must be inside the "
            "report folder so that the page can refer to them by relative path"
        ) from None


# ----------------------------------------------------------------------------------------------
# HTML

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 0 auto; max-width: 1300px; padding: 1.5rem; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem;
     margin-top: 2.2rem; }
nav ol { columns: 2; padding-left: 1.2rem; }
.figures { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; flex: 1 1 320px; max-width: 100%; }
figure.wide { flex-grow: 0; }
figure img { width: 100%; max-width: 100%; height: auto; border: 1px solid #eee; }
.banner { background: #fff4d6; border: 1px solid #e0b64c; padding: 0.6rem 0.9rem; }
table.claims { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; width: 100%; }
table.claims th, table.claims td { border: 1px solid #ddd; padding: 0.25rem 0.6rem;
                                   text-align: left; vertical-align: top; }
table.claims th { background: #f6f6f6; }
.pass { color: #0a6b2c; font-weight: 600; } .fail { color: #b00020; font-weight: 600; }
figcaption { font-size: 0.8rem; color: #555; }
table.metrics { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; }
table.metrics th, table.metrics td { border: 1px solid #ddd; padding: 0.2rem 0.6rem; }
table.metrics th { text-align: left; background: #f6f6f6; font-weight: 600; }
table.metrics td { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f4f4f4; padding: 0.5rem 0.8rem; overflow-x: auto; }
.muted { color: #666; font-size: 0.85rem; }
img[data-loaded="false"] { outline: 3px solid #c00; }
"""

# After the page has loaded, record on every image whether it decoded; harmless for readers
# and what the headless-browser test reads back from the dumped DOM.
_SCRIPT = """
window.addEventListener("load", function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) {
    var good = imgs[i].complete && imgs[i].naturalWidth > 0;
    imgs[i].setAttribute("data-loaded", good ? "true" : "false");
    if (good) { ok += 1; }
  }
  document.body.setAttribute("data-images-loaded", ok + "/" + imgs.length);
  for (var j = 0; j < imgs.length; j++) {  // rendered / natural width, read by the tests
    if (imgs[j].naturalWidth > 0) {
      var shown = imgs[j].clientWidth / imgs[j].naturalWidth;
      imgs[j].setAttribute("data-shown", shown.toFixed(3));
    }
  }
});
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _image_src(out_dir: Path, rel: Path, embed: bool) -> str:
    if embed:
        data = base64.b64encode((out_dir / rel).read_bytes()).decode("ascii")
        return f"data:image/png;base64,{data}"
    # percent-encode characters that are not safe in a relative URL path
    return quote(rel.as_posix(), safe="/-_.~")


def _png_size(png: Path) -> tuple[int, int]:
    """``(width, height)`` in pixels from a PNG's header; ``(0, 0)`` for another format."""
    head = png.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _caption(rel: Path) -> str:
    """A figure's caption from its name and folder: ``ring/energy_descent.png`` ->
    ``Energy descent (ring)``."""
    words = rel.stem.replace("_", " ").replace("-", " ")
    inner = [p.replace("_", " ") for p in rel.parts[1:-1]]
    return words[:1].upper() + words[1:] + (f" ({', '.join(inner)})" if inner else "")


def _claims_html(sections: Sequence[Section]) -> str:
    """The claims table of the page's top: each section's claim, its first numbers and how
    many of its yes/no checks pass."""
    rows = []
    for i, s in enumerate(sections):
        numbers = [(k, v) for k, v in s.metrics.items() if not isinstance(v, bool)][:2]
        checks = [v for v in s.metrics.values() if isinstance(v, bool)]
        shown = "; ".join(f"{k}: {format_value(v)}" for k, v in numbers)
        if checks:
            good = sum(checks)
            mark = "pass" if good == len(checks) else "fail"
            verdict = f'<span class="{mark}">{good}/{len(checks)} checks pass</span>'
        else:
            verdict = '<span class="muted">numbers only</span>'
        rows.append(f'<tr><td><a href="#section-{i}">{_esc(s.title)}</a></td>'
                    f"<td>{_esc(shown)}</td><td>{verdict}</td></tr>")
    return ('<table class="claims"><thead><tr><th>claim</th><th>numbers</th><th>checks</th>'
            "</tr></thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>")


def _section_html(index: int, section: Section, out_dir: Path, embed: bool) -> str:
    anchor = f"section-{index}"
    parts = [f'<section id="{anchor}">', f"<h2>{_esc(section.title)}</h2>"]
    if section.description:
        parts.append(f"<p>{_esc(section.description)}</p>")
    if section.figures:
        parts.append('<div class="figures">')
        for fig in section.figures:
            rel = _relative_inside(out_dir, fig, f"section {section.title!r} figures")
            if not (out_dir / rel).is_file():
                raise FileNotFoundError(
                    f"section {section.title!r}: figure {rel.as_posix()!r} does not exist in "
                    f"{str(out_dir)!r}"
                )
            alt = f"{section.title}: {rel.stem.replace('_', ' ')}"
            src = _esc(_image_src(out_dir, rel, embed))
            width, height = _png_size(out_dir / rel)
            # a figure keeps its natural width and shrinks only below the row's width; wide
            # ones (rate-map rows, autocorrelograms) take a row of their own
            wide = ' class="wide"' if width > 2 * height else ""
            size = f' style="flex: 0 1 {width}px"' if width else ""
            svg = rel.with_suffix(".svg")
            vector = (f' <a href="{_esc(_image_src(out_dir, svg, False))}">SVG</a>'
                      if (out_dir / svg).is_file() else "")
            parts.append(
                f'<figure{wide}{size}><a href="{src}" title="open at full size"><img src="{src}" '
                f'alt="{_esc(alt)}" loading="eager"></a><figcaption>{_esc(_caption(rel))} '
                f'<span class="muted">({_esc(rel.as_posix())}){vector}</span></figcaption>'
                "</figure>"
            )
        parts.append("</div>")
    if section.links:
        items = " · ".join(f'<a href="{_esc(_image_src(out_dir, Path(f), False))}">{_esc(k)}</a>'
                           for k, f in section.links.items())
        parts.append(f'<p class="links">{items}</p>')
    if section.metrics:
        parts.append('<table class="metrics"><tbody>')
        for key, value in section.metrics.items():
            parts.append(f"<tr><th>{_esc(key)}</th><td>{_esc(format_value(value))}</td></tr>")
        parts.append("</tbody></table>")
    if section.command:
        parts.append('<p class="muted">Reproduce with:</p>')
        parts.append(f"<pre><code>{_esc(section.command)}</code></pre>")
    parts.append("</section>")
    return "\n".join(parts)


def render_html(
    out_dir: Path, sections: Sequence[Section], title: str = "Results", embed: bool = False,
    quick: bool = False, note: str = "",
) -> str:
    """The page as a string (see :func:`build_report`)."""
    banner = ('<p class="banner"><strong>Quick run:</strong> every demo ran at its tiny '
              "<code>--quick</code> size, so its numbers (nan, fractions of 0) do not test the "
              "claims; run <code>python demos/run_all.py --out results</code> for the real "
              "ones.</p>" if quick else "")
    if note:
        banner += f'<p class="banner">{_esc(note)}</p>'
    claims = _claims_html(sections) if sections else ""
    toc = "\n".join(
        f'<li><a href="#section-{i}">{_esc(s.title)}</a></li>' for i, s in enumerate(sections)
    )
    body = "\n".join(_section_html(i, s, out_dir, embed) for i, s in enumerate(sections))
    if not sections:
        body = '<p class="muted">No results yet: run the demos first.</p>'
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_esc(title)}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>{_esc(title)}</h1>
{banner}
{claims}
<p class="muted">Every figure (click to open it at full size), its key numbers and the command
that reproduces it.</p>
<nav><ol>
{toc}
</ol></nav>
{body}
<script>{_SCRIPT}</script>
</body>
</html>
"""


def build_report(
    out_dir: str | Path,
    sections: Sequence[Section],
    title: str = "neurodyn-flows results",
    embed_images: bool = False,
    quick: bool = False,
    note: str = "",
) -> Path:
    """Write ``out_dir/index.html``, a self-contained page of the given sections.

    Parameters
    ----------
    out_dir : path
        Report folder; every figure must be inside it.
    sections : sequence of Section
    title : str
        Page title.
    embed_images : bool
        Embed the PNGs as base64 data URIs (a single portable file) instead of linking them by
        relative path.
    quick : bool
        The demos ran at their ``--quick`` sizes: a banner says so at the top.
    note : str
        A line shown at the top (which demos are not on the page, an interrupted run).

    Returns
    -------
    Path of ``index.html``.

    Raises
    ------
    FileNotFoundError
        If a figure does not exist.
    ValueError
        If a figure lies outside ``out_dir``.
    """
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for s in sections:
        if not isinstance(s, Section):
            raise TypeError(f"sections must contain Section objects; got {type(s).__name__}")
    page = render_html(out_dir, sections, title=title, embed=embed_images, quick=quick,
                       note=note)
    path = out_dir / "index.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, path)
    return path


# ----------------------------------------------------------------------------------------------
# the tutorial notebooks

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def notebook_sections(out_dir: str | Path, notebooks: str | Path = NOTEBOOKS,
                      timeout: int = 900, only: Sequence[str] | None = None) -> list[Path]:
    """Execute each tutorial notebook and give it a section of the page.

    Each ``notebooks/*.ipynb`` runs as a reader runs it (nbclient, a fresh ``python3`` kernel,
    from the repository root); into ``OUT/notebook_<name>/`` go its figures (the PNG outputs,
    ``figure_1.png``, ...), the executed notebook and ``index.html``, a rendering of its text,
    code and outputs, and a ``section.json`` that links them. Needs nbclient, nbformat and
    ipykernel (the ``dev`` extra); nothing heavier.

    Parameters
    ----------
    out_dir : path
        The results folder.
    notebooks : path
        The folder of the notebooks.
    timeout : int
        Seconds a cell may run.
    only : sequence of str, optional
        File names of the notebooks to run (default: every one).

    Returns
    -------
    list of Path
        The ``section.json`` files written.
    """
    import nbclient
    import nbformat

    out_dir, written = Path(out_dir).resolve(), []
    for path in sorted(Path(notebooks).glob("*.ipynb")):
        if only is not None and path.name not in only:
            continue
        nb = nbformat.read(path, as_version=4)
        clock = Stopwatch()
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={
            "metadata": {"path": str(Path(notebooks).resolve().parent)}}).execute()
        seconds = clock.wall_s
        folder = out_dir / f"notebook_{path.stem}"
        folder.mkdir(parents=True, exist_ok=True)
        figures = _notebook_figures(nb, folder)
        nbformat.write(nb, folder / path.name)
        (folder / "index.html").write_text(_notebook_page(nb, path.name), encoding="utf-8")
        title, intro = _notebook_intro(nb)
        written.append(write_section(folder, Section(
            title=f"Notebook: {title}", description=intro, figures=figures,
            metrics={"code cells": sum(c.cell_type == "code" for c in nb.cells),
                     "figures": len(figures), "executed in (s)": round(seconds, 1)},
            command=f"jupyter lab notebooks/{path.name}",
            links={"the notebook, rendered": folder / "index.html",
                   "executed .ipynb": folder / path.name})))
    return written


def _notebook_figures(nb, folder: Path) -> list[Path]:
    """Write each PNG output as ``figure_N.png``; the output records its file name."""
    figures = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            if "image/png" in data:
                figures.append(folder / f"figure_{len(figures) + 1}.png")
                figures[-1].write_bytes(base64.b64decode(data["image/png"]))
                output.setdefault("metadata", {})["filename"] = figures[-1].name
    return figures


def _notebook_intro(nb) -> tuple[str, str]:
    """The first heading and the first paragraph of a notebook's first markdown cell."""
    cells = [c for c in nb.cells if c.cell_type == "markdown"]
    blocks = cells[0].source.strip().split("\n\n") if cells else ["Notebook"]
    title = blocks[0].lstrip("#").strip()
    return title, (blocks[1].replace("\n", " ") if len(blocks) > 1 else "")


def _notebook_page(nb, name: str) -> str:
    """A notebook's text, code and outputs as one HTML page (figures linked from beside it)."""
    body = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            body.append(_markdown_html(cell.source))
        elif cell.cell_type == "code":
            body.append(f'<pre class="code"><code>{_esc(cell.source)}</code></pre>')
            body.extend(_output_html(o) for o in _merged_streams(cell.get("outputs", [])))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_esc(name)}'
            f"</title><style>{_CSS} pre.code {{ border-left: 3px solid #8ab; }} "
            "pre.out { background: #fff; border: 1px solid #eee; }</style></head><body>\n"
            f'<p class="muted"><a href="../index.html">results</a> / {_esc(name)}, executed</p>'
            + "\n".join(body) + "\n</body></html>\n")


def _merged_streams(outputs) -> list:
    """Consecutive outputs of one stream as one, each line as a terminal leaves it (a progress
    bar's updates, separated by carriage returns, end as its last state)."""
    merged: list = []
    for output in outputs:
        if (output.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == output.get("name")):
            merged[-1] = {**merged[-1], "text": merged[-1]["text"] + output["text"]}
        else:
            merged.append(output)
    for i, output in enumerate(merged):
        if output.get("output_type") == "stream":
            lines = [line.rsplit("\r", 1)[-1] for line in output["text"].split("\n")]
            merged[i] = {**output, "text": "\n".join(lines)}
    return merged


def _output_html(output) -> str:
    """One output of a code cell: a figure, a table, text or an error."""
    data = output.get("data", {})
    if "image/png" in data:
        return f'<img src="{_esc(output["metadata"]["filename"])}" alt="figure">'
    if "text/html" in data:  # tables from to_pandas(), written by pandas
        return f'<div class="out">{data["text/html"]}</div>'
    text = data.get("text/plain") or output.get("text") or "\n".join(output.get("traceback", []))
    return f'<pre class="out">{_esc(text)}</pre>' if text.strip() else ""


def _markdown_html(text: str) -> str:
    """The markdown of a notebook's text cells: headings, lists, code blocks, paragraphs,
    inline code, bold and links (what the tutorials use), everything else as plain text."""
    import re

    def inline(line: str) -> str:
        line = _esc(line)
        line = re.sub(r"`([^`]+)`", r"<code>\1</code>", line)
        line = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", line)
        return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', line)

    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.splitlines()
        if block.startswith("```"):
            out.append(f"<pre><code>{_esc(chr(10).join(lines[1:-1]))}</code></pre>")
        elif block.startswith("#"):
            level = min(len(block) - len(block.lstrip("#")), 6)
            out.append(f"<h{level}>{inline(block.lstrip('#').strip())}</h{level}>")
        elif all(line.lstrip().startswith(("- ", "* ")) for line in lines):
            items = "".join(f"<li>{inline(line.lstrip()[2:])}</li>" for line in lines)
            out.append(f"<ul>{items}</ul>")
        else:
            out.append(f"<p>{inline(' '.join(lines))}</p>")
    return "\n".join(out)
