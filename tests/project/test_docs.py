"""The documentation (``docs/``, built by ``make docs``).

- The command-line reference is each command's ``--help``: the reference pages are built
  alone and every (sub)command of both parsers must have its section, whose text equals what
  ``--help`` prints (at the reference's width), in-process and, for a few, from the installed
  console scripts.
- The whole build, notebooks executed, finishes with no warning (slow: it executes the three
  tutorials and imports every public module; ``make docs`` runs the same build).
"""

from __future__ import annotations

import contextlib
import html
import importlib
import io
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
sys.path.insert(0, str(DOCS / "_ext"))
import cliref  # noqa: E402  (docs/_ext/cliref.py: the reference's directive)

sys.path.remove(str(DOCS / "_ext"))


class _Sections(HTMLParser):
    """``{title: text of its <pre>}`` of the reference's sections (ids ``cli-...``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: dict[str, str] = {}
        self._section: str | None = None
        self._title: list[str] | None = None
        self._pre: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and (attrs.get("id") or "").startswith("cli-"):
            self._section = attrs["id"]
        elif self._section and tag in ("h1", "h2", "h3") and self._title is None:
            self._title = []
        elif self._section and tag == "a" and self._title is not None:
            self._title.append("\0")  # the header link's pilcrow is not the title
        elif self._section and tag == "pre":
            self._pre = []

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3") and self._title is not None and self._section:
            self._title = ["".join(self._title).split("\0")[0].strip()]
        elif tag == "pre" and self._pre is not None:
            self.found[self._title[0]] = html.unescape("".join(self._pre))
            self._pre, self._title, self._section = None, None, None

    def handle_data(self, data):
        if self._pre is not None:
            self._pre.append(data)
        elif self._title is not None and self._section:
            self._title.append(data)

    def handle_entityref(self, name):
        self.handle_data(f"&{name};")

    def handle_charref(self, name):
        self.handle_data(f"&#{name};")


def cli_sections(page: Path) -> dict[str, str]:
    """The command sections of a built reference page: ``{"neurodyn fit": its text}``."""
    parser = _Sections()
    parser.feed(page.read_text())
    return parser.found


def help_output(command: str, path: tuple[str, ...]) -> str:
    """What ``command *path --help`` prints, run here through the command's ``main``."""
    module = importlib.import_module(cliref.COMMANDS[command])
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", str(cliref.COLUMNS))
        with contextlib.redirect_stdout(out):
            assert module.main([*path, "--help"]) == 0
    return out.getvalue()


def every_command(command: str) -> list[tuple[str, ...]]:
    """Every (sub)command path of ``command``'s parser, found by argparse's own choices."""
    parser = importlib.import_module(cliref.COMMANDS[command]).build_parser()
    paths, todo = [], [((), parser)]
    while todo:
        path, p = todo.pop()
        paths.append(path)
        for action in p._actions:
            choices = getattr(action, "choices", None)
            if isinstance(choices, dict):  # a sub-command action: name -> parser
                todo += [((*path, name), sub) for name, sub in choices.items()]
    return paths


def check_reference(site: Path) -> int:
    """Assert that the built reference pages under ``site`` hold every command's ``--help``;
    returns the number of sections checked."""
    checked = 0
    for command in cliref.COMMANDS:
        sections = cli_sections(site / "cli" / f"{command}.html")
        paths = every_command(command)
        assert set(sections) == {" ".join((command, *p)) for p in paths}
        for path in paths:
            expected = help_output(command, path)
            assert expected.startswith("usage: " + " ".join((command, *path))), expected[:80]
            shown = sections[" ".join((command, *path))]
            assert shown.rstrip("\n") == expected.rstrip("\n"), " ".join((command, *path))
            checked += 1
    return checked


def sphinx_build(source: Path, out: Path) -> tuple[int, str, str]:
    """``python -m sphinx -b html -E -W --keep-going`` (what ``make docs`` runs) in a fresh
    process; (exit code, the warnings Sphinx wrote, standard error). Standard error also holds
    the notebook kernels' own log lines, which are not warnings of the build."""
    warnings = out.parent / f"{out.name}-warnings.txt"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-E", "-W",
                          "--keep-going", "-q", "-w", str(warnings), str(source), str(out)],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return run.returncode, warnings.read_text() if warnings.is_file() else "", run.stderr


def test_the_cli_reference_is_every_commands_help(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(DOCS / "cli", src / "cli")
    (src / "index.md").write_text("# CLI\n\n```{toctree}\ncli/neurodyn\ncli/flows\n```\n")
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_parser', 'cliref']\n")
    code, warnings, errors = sphinx_build(src, tmp_path / "html")
    assert code == 0 and warnings == "", warnings + errors
    assert check_reference(tmp_path / "html") >= 20


def _page(sections: dict[str, str]) -> str:
    return "".join(f'<section id="cli-{title.replace(" ", "-")}"><h2>{title}'
                   f'<a class="headerlink" href="#">¶</a></h2><div><pre><span></span>'
                   f"{html.escape(text)}</pre></div></section>" for title, text in sections.items())


def test_the_check_sees_one_changed_word_or_a_missing_section(tmp_path, monkeypatch):
    """The comparison can fail: a page of every ``--help`` passes, the same page with one word
    changed in one section, or with one section left out, does not."""
    monkeypatch.setattr(cliref, "COMMANDS", {"neurodyn": cliref.COMMANDS["neurodyn"]})
    right = {" ".join(("neurodyn", *p)): help_output("neurodyn", p)
             for p in every_command("neurodyn")}
    page = tmp_path / "cli" / "neurodyn.html"
    page.parent.mkdir()
    page.write_text(_page(right))
    assert cli_sections(page) == right
    assert check_reference(tmp_path) == len(right)
    changed = {**right, "neurodyn fit": right["neurodyn fit"].replace("kappa", "kapa", 1)}
    missing = {k: v for k, v in right.items() if k != "neurodyn decode"}
    for wrong in (changed, missing):
        page.write_text(_page(wrong))
        with pytest.raises(AssertionError):
            check_reference(tmp_path)


@pytest.mark.parametrize("argv", [["neurodyn", "--help"], ["neurodyn", "fit", "--help"],
                                  ["flows", "train", "--help"],
                                  ["flows", "experiment", "risk", "--help"]])
def test_the_console_scripts_print_the_same_help(argv):
    script = Path(sys.executable).parent / argv[0]
    if not script.is_file():
        pytest.skip(f"no console script {script}")
    run = subprocess.run([str(script), *argv[1:]], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": str(cliref.COLUMNS), "PYTHONPATH":
                              str(ROOT)}, check=True)
    assert run.stdout == help_output(argv[0], tuple(argv[1:-1]))


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    """The build ``make docs`` runs (about 3 CPU minutes: the notebooks run), into a temporary
    folder: no warning, the references and the executed tutorials in it."""
    code, warnings, errors = sphinx_build(DOCS, tmp_path / "html")
    assert code == 0, warnings + errors
    assert warnings == "", warnings
    site = tmp_path / "html"
    check_reference(site)
    api = site / "_generated" / "api"
    for module in ("neurodyn", "neurodyn.analysis", "flows", "flows.theory"):
        assert (api / f"{module}.html").is_file(), module
    assert 'id="neurodyn.fit"' in (api / "neurodyn.html").read_text()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = (site / "_generated" / "tutorials" / f"{notebook.stem}.html").read_text()
        assert page.count("<img ") >= 2, notebook.name  # its figures, executed at build time
    assert "not reliably met" in (site / "benchmarks.html").read_text()


def test_a_warning_fails_the_build(tmp_path):
    """The control of the zero-warning check: a page with a reference to a missing page."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text("extensions = ['myst_parser']\n")
    (src / "index.md").write_text("# Index\n\n```{toctree}\nno-such-page\n```\n")
    code, warnings, _ = sphinx_build(src, tmp_path / "html")
    assert code != 0 and "no-such-page" in warnings
