"""Every ```python block of the README and of the documentation's pages runs as written, at the
sizes shown.

The files: ``README.md``, ``README.new.md`` while a draft of the next README is beside it, and
every page of ``docs/``. The blocks of one section (the text under one heading of one file) run
in order in one namespace, as a reader pasting them into one session would, inside a fresh
temporary directory (files the blocks write land there) with the repository's root importable
(the user-model example names a module of ``tests/``). A section whose blocks take more than a
few seconds is marked slow (``make test-slow`` runs it).
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FILES = [path for path in (README, ROOT / "README.new.md") if path.is_file()] + sorted(
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
