"""Every ```python block of the README and of the documentation's pages runs as written, at the
sizes shown.

The files: ``README.md`` and every page of ``docs/``. The blocks of one section (the text under
one heading of one file) run in order in one namespace, as a reader pasting them into one session
would, inside a fresh temporary directory (files the blocks write land there) with the
repository's root importable (the user-model example names a module of ``tests/``). A section
whose blocks take more than a few seconds is marked slow (``make test-slow`` runs it).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FILES = [README] + sorted(
    path for path in (ROOT / "docs").rglob("*.md")
    if not {"_build", "_generated"} & set(path.relative_to(ROOT / "docs").parts))

#: sections (their heading's text, in any of the files) whose blocks are too long for the
#: default suite
SLOW = {"flows": "two trainings of 5,000 steps",
        "Train, sample, judge": "a training of 5,000 steps",
        "Your own network, conditions and device": "a training of 5,000 steps and a dopri5 "
                                                   "log-likelihood"}


def readme_sections(text: str) -> list[tuple[str, list[str]]]:
    """``(heading, [code of each python block under it, in order])`` for every section with a
    python block, in the order of the file.

    >>> readme_sections("# A\\n```python\\nx = 1\\n```\\n## B\\ntext\\n```python\\ny = 2\\n```\\n")
    [('A', ['x = 1\\n']), ('B', ['y = 2\\n'])]
    """
    sections: dict[str, list[str]] = {}
    heading, block = "", None
    for line in text.splitlines(keepends=True):
        if block is not None:
            if line.strip() == "```":
                sections.setdefault(heading, []).append("".join(block))
                block = None
            else:
                block.append(line)
        elif line.startswith("```python"):
            block = []
        elif re.match(r"#{1,6} ", line):
            heading = line.lstrip("#").strip()
    assert block is None, f"README: a python block under {heading!r} is not closed"
    return list(sections.items())


SECTIONS = [(path.relative_to(ROOT).as_posix(), name, blocks)
            for path in FILES for name, blocks in readme_sections(path.read_text())]


def test_the_readme_has_python_blocks_and_every_slow_section_exists():
    readme = [blocks for file, _, blocks in SECTIONS if file == "README.md"]
    assert sum(len(blocks) for blocks in readme) >= 2
    names = {name for _, name, _ in SECTIONS}
    assert set(SLOW) <= names, f"not sections of the README or the docs: {set(SLOW) - names}"


@pytest.mark.parametrize("file, name, blocks", [
    pytest.param(file, name, blocks, id=f"{file}::{name}",
                 marks=[pytest.mark.slow] if name in SLOW else [])
    for file, name, blocks in SECTIONS])
def test_readme_section_runs(file, name, blocks, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    namespace: dict = {"__name__": "__readme__"}
    for i, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"{file} [{name}, block {i}]", "exec"), namespace)
        except Exception as exc:  # name the block, keep the traceback
            raise AssertionError(f"{file}: section {name!r}, python block {i} failed: "
                                 f"{type(exc).__name__}: {exc}") from exc


#: the README's set-up lines: they install and run the whole project, so no test here runs them;
#: CI runs ``make test`` on a fresh clone (``.ci/run``), and the test below checks that the
#: Makefile and CI hold what they name
SET_UP = ("make demo", "make test", ". .venv/bin/activate")
#: the real recording as the README names it (beside the repository)
RECORDING = "../shared/data/adn_hd_wake_sws.npz"
#: shell sections too long for the default suite (test_real_recording runs the same fit there)
SLOW_SHELL = {"A first fit of a real recording": "a fit of the real recording and a decode"}
#: the most lines a README that teaches may have
MAX_LINES = 200


def shell_sections(text: str) -> list[tuple[str, list[str], str]]:
    """``(heading, [each command line of its indented shell blocks], the section's text)`` for
    every section with an indented (shell) block.

    >>> shell_sections("# A\\nrun\\n\\n    neurodyn fit ring --out r\\n\\nsee `r/a.png`\\n")[0][:2]
    ('A', ['neurodyn fit ring --out r'])
    """
    out, heading, lines, body, fenced = [], "", [], [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            if lines:
                out.append((heading, lines, "".join(body)))
            heading, lines, body = line.lstrip("#").strip(), [], []
            continue
        body.append(line)
        if not fenced and line.startswith("    ") and line.strip():
            lines.append(line.strip())
    if lines:
        out.append((heading, lines, "".join(body)))
    return out


SHELL = shell_sections(README.read_text())


def test_the_readme_is_short_and_its_set_up_is_the_one_ci_and_make_run():
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_LINES
    set_up = [line for _, lines, _ in SHELL for line in lines if line in SET_UP]
    assert set_up == list(SET_UP), f"the README's set-up lines: {set_up}"
    makefile = (ROOT / "Makefile").read_text()
    for target in ("demo", "test"):
        assert re.search(rf"^{target}:", makefile, re.M), f"no make {target}"
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "README.new.md" not in {p.name for p in ROOT.iterdir()}


@pytest.mark.parametrize("heading, lines, body", [
    pytest.param(heading, lines, body, id=heading,
                 marks=[pytest.mark.slow] if heading in SLOW_SHELL else [])
    for heading, lines, body in SHELL if set(lines) - set(SET_UP)])
def test_readme_shell_section_runs_and_draws_its_figures(heading, lines, body, tmp_path,
                                                        monkeypatch):
    """Every command of a section's shell blocks runs in order through the command line's
    ``main`` (exit 0), and every file under a run folder that the section names exists."""
    import shlex

    from flows.cli import main as flows_main
    from neurodyn.cli import main as neurodyn_main
    from tests.conftest import ADN

    monkeypatch.chdir(tmp_path)
    for line in lines:
        if line in SET_UP:
            continue
        if RECORDING in line and not ADN.is_file():
            pytest.skip(f"the real recording is not at {ADN}")
        argv = [str(ADN) if arg == RECORDING else arg for arg in shlex.split(line)]
        main = {"neurodyn": neurodyn_main, "flows": flows_main}.get(argv[0])
        assert main is not None, f"README [{heading}]: {line!r} is not run by a test"
        assert main(argv[1:]) == 0, f"README [{heading}]: {line!r} failed"
    named = re.findall(r"`([\w.-]+/[\w./-]+\.(?:png|json|npy))`", body)
    assert named, f"README [{heading}]: names no file its commands write"
    for name in named:
        assert (tmp_path / name).is_file(), f"README [{heading}]: no {name}"
