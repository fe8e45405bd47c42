"""Opening a report in headless Chromium (Debian's ``chromium``) with Playwright,
with every network request refused and recorded, so that a report that needs the
network fails the test."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """The Chromium executable, or a test failure that says how to get it (set
    CCBENCH_SKIP_BROWSER=1 to skip the browser tests deliberately instead)."""
    path = os.environ.get("CCBENCH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if path:
        return path
    message = (
        "chromium is not installed, so the report cannot be checked in a browser: "
        "run `make system-deps` (apt-get install chromium) or set CCBENCH_CHROMIUM=/path/to/chromium"
    )
    if os.environ.get("CCBENCH_SKIP_BROWSER") == "1":
        pytest.skip(message + " (skipped: CCBENCH_SKIP_BROWSER=1)")
    pytest.fail(message)


@dataclass
class Page:
    page: object
    requests: list[str] = field(default_factory=list)  # every request other than the report itself
    failed: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)


def open_report(playwright, path: Path) -> tuple[object, Page]:
    """Launch Chromium, load ``path`` offline; returns (browser, Page)."""
    browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    out = Page(page)
    url = path.resolve().as_uri()

    def route(r):
        if r.request.url == url or r.request.url.startswith("data:"):
            r.continue_()
        else:
            out.requests.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("requestfailed", lambda req: out.failed.append(f"{req.url}: {req.failure}"))
    page.on("console", lambda msg: out.console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: out.console_errors.append(str(exc)))
    page.goto(url, wait_until="load")
    return browser, out


def screenshot(report: Path, out: Path, *, width: int = 1400, height: int = 1250) -> None:
    """A screenshot of ``report`` opened offline (docs/img/report-screenshot.png)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = open_report(p, report)
        try:
            page.page.set_viewport_size({"width": width, "height": height})
            page.page.screenshot(path=str(out))
        finally:
            browser.close()


if __name__ == "__main__":  # python tests/browser.py REPORT.html OUT.png
    import sys

    screenshot(Path(sys.argv[1]), Path(sys.argv[2]))
