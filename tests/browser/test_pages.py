"""Every report page in a real headless Chromium (Debian's), driven by Playwright: it renders without a script error,
nothing sticks out of the viewport sideways at 1280 and 800 px (nor when printed), and its screenshot is not blank.

The pages are made the way users make them (the CLI on generated clusters of 4, 40 and 1,000 nodes, real install
runs on an embedded cluster); see ``pages.py``. Chromium comes from the distribution (``apt-get install chromium``;
``.ci/run`` installs it): Playwright only drives it and never downloads a browser of its own. The test is skipped
only where Chromium is genuinely absent, and fails instead under CI.

``BERTH_SCREENSHOTS=DIR`` keeps the screenshots (one per page and width) for a person to look at.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import pages

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WIDTHS = (1280, 800)

# Elements whose right edge passes the viewport's, outside any box that clips or scrolls its overflow (a wide table
# in its own scroll box is fine; the page itself scrolling sideways is not).
OVERFLOW_JS = """
() => {
  const vw = document.documentElement.clientWidth;
  const boxed = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if ((r.right > vw + 0.5 || r.left < -0.5) && !boxed(el)) {
      out.push(`${el.tagName.toLowerCase()}.${el.className} [${Math.round(r.left)}, ${Math.round(r.right)}]`);
    }
  }
  // Text that runs past its box (a long word that does not wrap) is no element: measure the text itself.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    if (!t.parentElement || !t.textContent.trim()) continue;
    range.selectNodeContents(t);
    const r = range.getBoundingClientRect();
    if (r.width > 0 && (r.right > vw + 0.5 || r.left < -0.5) && !boxed(t.parentElement)) {
      out.push(`text "${t.textContent.trim().slice(0, 40)}" in ${t.parentElement.tagName.toLowerCase()} [${Math.round(r.left)}, ${Math.round(r.right)}]`);
    }
  }
  return {vw: vw, scrollWidth: document.documentElement.scrollWidth, over: out.slice(0, 10)};
}
"""


def chromium() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is required under CI (.ci/run installs Debian's chromium package)")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    chromium()  # skip before spending time on pages nobody can look at
    root = tmp_path_factory.mktemp("pages")
    found = pages.placement_pages(root / "placement")
    found.update(pages.install_pages(root / "install"))
    found["run-40"] = pages.live_page(root)
    found["demo"] = pages.demo_page(root)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with (
        sync_playwright() as p,
        tempfile.TemporaryDirectory(prefix="berth-chromium-", ignore_cleanup_errors=True) as profile,
    ):
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


def non_blank(png: bytes) -> tuple[float, int]:
    """(share of pixels unlike the background, number of distinct colours) of a screenshot."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    background = max(colours)[0] if colours else 0
    total = image.width * image.height
    return 1 - background / total, len(colours)


def check(page: Any, name: str, width: int, media: str) -> list[str]:
    problems: list[str] = []
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(media=media)
    for opened in (False, True):
        if opened:  # the folded sections (every node of a large cluster, the rest of a score table) too
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        got = page.evaluate(OVERFLOW_JS)
        where = f"{name} at {width}px ({media}{', folded parts open' if opened else ''})"
        if got["scrollWidth"] > got["vw"]:
            problems.append(f"{where}: the page scrolls sideways ({got['scrollWidth']} > {got['vw']})")
        problems += [f"{where}: {el} sticks out" for el in got["over"]]
    return problems


def test_every_report_page_renders_fits_the_viewport_and_is_not_blank(
    browser: Any, site: dict[str, Path]
) -> None:
    assert set(site) >= {
        "simulate-4",
        "simulate-40",
        "simulate-1000",
        "compare-40",
        "install-ok",
        "install-failed",
    }
    keep = os.environ.get("BERTH_SCREENSHOTS")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None,
    )
    problems: list[str] = []
    for name, path in sorted(site.items()):
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.emulate_media(media="screen")  # the print check of the page before set "print"
            page.goto(path.as_uri(), wait_until="load")
            title = page.locator("h1").inner_text()
            if not title.strip() or page.locator("main h2").count() < 2:
                problems.append(f"{name} at {width}px: no title or sections rendered")
            png = page.screenshot()
            share, colours = non_blank(png)
            if share < 0.02 or colours < 8:
                problems.append(
                    f"{name} at {width}px: the screenshot is blank ({share:.1%} ink, {colours} colours)"
                )
            if keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(Path(keep) / f"{name}-{width}.png"), full_page=True)
            problems += check(page, name, width, "screen")
        problems += check(page, name, 800, "print")
    assert errors == [], "\n".join(errors)
    assert problems == [], "\n".join(problems)
