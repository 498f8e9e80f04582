"""The offline results page: its HTML, its JSON sections and its rendering in headless Chromium."""

import importlib.util
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

CHROMIUM = Path("/usr/bin/chromium")
REPORT_PY = Path(__file__).resolve().parents[2] / "demos" / "page.py"


def _load_report_module():
    spec = importlib.util.spec_from_file_location("demos_report", REPORT_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


report = _load_report_module()


class _Page(HTMLParser):
    """Collects the <img> attributes and the text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.body_attrs: dict[str, str | None] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        elif tag == "body":
            self.body_attrs = dict(attrs)

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def _png(path: Path, seed: int) -> Path:
    fig = Figure(figsize=(2, 1.5), dpi=40)
    ax = fig.add_subplot()
    ax.plot(np.random.default_rng(seed).normal(size=10))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("rate (Hz)")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def _two_sections(root: Path) -> list:
    _png(root / "ring" / "restoration.png", 0)
    _png(root / "ring" / "energy profile.png", 1)
    _png(root / "flows" / "w2.png", 2)
    return [
        report.Section(
            title="Ring <restoration> & friends",
            description='Bumps relax back to the ring; "quotes" and <b>tags</b> stay text.',
            figures=["ring/restoration.png", root / "ring" / "energy profile.png"],
            metrics={"final distance": 0.0031234, "n_neurons": 128, "ok": True, "big": 123456.7},
            command="neurodyn ring --out results/ring && echo '<done>'",
        ),
        report.Section(
            title="Flow matching: W2 vs width",
            description="W2 decreases with width.",
            figures=["flows/w2.png"],
            metrics={"w2": {"m=64": 0.25, "m=1024": float("nan")}},
            command="flows width --out results/flows",
        ),
    ]


def test_format_value():
    assert report.format_value(0.0031234) == "0.003123"
    assert report.format_value(-0.00012345) == "-1.234e-04"
    assert report.format_value(0.123456) == "0.1235"
    assert report.format_value(123456.7) == "1.235e+05"
    assert report.format_value(12) == "12"
    assert report.format_value(True) == "yes"
    assert report.format_value(float("nan")) == "nan"
    assert report.format_value(0.0) == "0"


def test_html_is_escaped_offline_and_relative(tmp_path):
    path = report.build_report(tmp_path, _two_sections(tmp_path))
    assert path == tmp_path / "index.html"
    page = path.read_text(encoding="utf-8")
    assert "http" not in page.lower()  # no external references of any kind
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "<restoration>" not in page and "<b>tags</b>" not in page
    assert "Ring &lt;restoration&gt; &amp; friends" in page
    assert "&amp;&amp; echo &#x27;&lt;done&gt;&#x27;" in page
    parsed = _parse(page)
    srcs = [img["src"] for img in parsed.images]
    assert srcs == ["ring/restoration.png", "ring/energy%20profile.png", "flows/w2.png"]
    for img in parsed.images:
        assert img["alt"]
        assert not img["src"].startswith("/") and ":" not in img["src"]
    text = "".join(parsed.text)
    assert "0.003123" in text and "128" in text and "w2.m=64" in text and "0.25" in text


def test_figures_must_exist_and_lie_inside(tmp_path):
    outside = _png(tmp_path / "elsewhere" / "x.png", 0)
    with pytest.raises(ValueError, match="outside"):
        report.build_report(tmp_path / "site", [report.Section("a", figures=[outside])])
    with pytest.raises(FileNotFoundError, match="missing.png"):
        report.build_report(tmp_path, [report.Section("a", figures=["missing.png"])])
    with pytest.raises(ValueError, match="title"):
        report.Section("  ")
    with pytest.raises(TypeError, match="metric 'x'"):
        report.Section("a", metrics={"x": object()})


def test_embedded_images_are_data_uris(tmp_path):
    page = report.build_report(tmp_path, _two_sections(tmp_path), embed_images=True).read_text()
    srcs = [img["src"] for img in _parse(page).images]
    assert len(srcs) == 3 and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "http" not in page.lower()


def test_sections_round_trip_through_json_and_the_cli(tmp_path):
    sections = _two_sections(tmp_path)
    ring = report.Section(
        title=sections[0].title,
        description=sections[0].description,
        figures=["restoration.png", tmp_path / "ring" / "energy profile.png"],
        metrics=sections[0].metrics,
        command=sections[0].command,
    )
    written = report.write_section(tmp_path / "ring", ring)
    data = json.loads(written.read_text())
    assert set(data) == {"title", "description", "figures", "metrics", "command"}
    assert data["figures"] == ["restoration.png", "energy profile.png"]
    # a demo folder with only metrics.json still gets a section
    (tmp_path / "flows" / "metrics.json").write_text(json.dumps({"w2": {"m=64": 0.25}}))
    got = report.collect_sections(tmp_path)
    assert [s.title for s in got] == ["flows", ring.title]
    assert got[1].figures == [Path("ring/restoration.png"), Path("ring/energy profile.png")]
    assert got[0].figures == [Path("flows/w2.png")] and got[0].metrics == {"w2.m=64": 0.25}

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "section.json").write_text(json.dumps({"title": "x", "figure": []}))
    with pytest.raises(ValueError, match=r"unknown keys \['figure'\]"):
        report.collect_sections(tmp_path)
    (bad / "section.json").unlink()

    run = subprocess.run(
        [sys.executable, str(REPORT_PY.with_name("run_all.py")), "--out", str(tmp_path),
         "--page-only"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    page = (tmp_path / "index.html").read_text()
    assert [img["src"] for img in _parse(page).images] == [
        "flows/w2.png",
        "ring/restoration.png",
        "ring/energy%20profile.png",
    ]


# ----------------------------------------------------------------------------------------------
# rendering in headless Chromium


@pytest.fixture
def chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing on CI; .ci/install-browser must install it")
    pytest.skip(f"{CHROMIUM} not installed (Debian package 'chromium'; run .ci/install-browser)")


def _render(chromium: Path, page: Path, profile: Path) -> _Page:
    cmd = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.resolve().as_uri(),
    ]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "<body" in run.stdout, run.stderr[-2000:]
    return _parse(run.stdout)


def test_every_image_loads_in_headless_chromium(chromium, tmp_path):
    site = tmp_path / "site"
    report.build_report(site, _two_sections(site))
    dom = _render(chromium, site / "index.html", tmp_path / "profile")
    assert len(dom.images) == 3
    assert [img.get("data-loaded") for img in dom.images] == ["true"] * 3
    assert dom.body_attrs.get("data-images-loaded") == "3/3"


def test_headless_check_detects_a_broken_image(chromium, tmp_path):
    site = tmp_path / "site"
    report.build_report(site, _two_sections(site))
    (site / "flows" / "w2.png").write_bytes(b"not a png")  # corrupt after building
    dom = _render(chromium, site / "index.html", tmp_path / "profile")
    loaded = {img["src"]: img.get("data-loaded") for img in dom.images}
    assert loaded == {
        "ring/restoration.png": "true",
        "ring/energy%20profile.png": "true",
        "flows/w2.png": "false",
    }
    assert dom.body_attrs.get("data-images-loaded") == "2/3"


def test_embedded_page_renders(chromium, tmp_path):
    site = tmp_path / "site"
    report.build_report(site, _two_sections(site), embed_images=True)
    portable = tmp_path / "portable.html"
    portable.write_text((site / "index.html").read_text())  # moved away from its PNGs
    dom = _render(chromium, portable, tmp_path / "profile")
    assert dom.body_attrs.get("data-images-loaded") == "3/3"
    assert re.fullmatch(r"data:image/png;base64,[A-Za-z0-9+/=]+", dom.images[0]["src"])


def test_relative_results_folder(tmp_path, monkeypatch):
    """A results folder given relative to the working directory still resolves its figures."""
    import matplotlib.figure

    folder = tmp_path / "res" / "demo"
    folder.mkdir(parents=True)
    fig = matplotlib.figure.Figure()
    fig.add_subplot().plot([0, 1])
    fig.savefig(folder / "a.png")
    report.write_section(folder, report.Section(title="demo", figures=["a.png"],
                                                metrics={"x": 1.0}))
    monkeypatch.chdir(tmp_path)
    page = report.build_report(Path("res"), report.collect_sections(Path("res")))
    assert "demo/a.png" in page.read_text()


def test_claims_first_quick_banner_and_wide_figures_readable_at_1400px(chromium, tmp_path):
    site = tmp_path / "site"
    sections = _two_sections(site)
    wide = Figure(figsize=(12.5, 1.5), dpi=120)  # 1500 x 180 px, a row of rate maps
    wide.add_subplot().plot([0, 1])
    (site / "grid").mkdir()
    wide.savefig(site / "grid" / "ratemaps.png")
    sections.append(report.Section(title="Grid cells", description="", command="",
                                   figures=["grid/ratemaps.png"],
                                   metrics={"fraction grid": 0.25, "hexagonal": False}))
    page = report.build_report(site, sections, quick=True).read_text()
    first_section = page.index("<section")
    assert page.index("Quick run") < page.index('<table class="claims"') < first_section
    claims = page[page.index('<table class="claims"'):first_section]
    assert "1/1 checks pass" in claims and "0/1 checks pass" in claims  # ok: True / False
    assert "Quick run" not in report.build_report(site, sections).read_text()  # the control
    cmd = [str(chromium), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000",
           "--virtual-time-budget=5000", "--dump-dom", (site / "index.html").as_uri()]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    shown = {img["src"]: float(img["data-shown"]) for img in _parse(run.stdout).images}
    assert len(shown) == 4 and min(shown.values()) >= 0.7, shown
