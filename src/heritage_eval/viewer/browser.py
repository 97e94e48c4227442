"""Headless Chromium for the viewer's browser tests and benchmark (Selenium, dev extra).

:func:`chromium` starts Debian's ``chromium`` + ``chromium-driver`` with a fresh profile,
no network services and the browser console log enabled; :func:`console_errors` reads
the ``SEVERE`` entries of that log. Nothing here is imported by the viewer itself.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-dev-shm-usage")


def missing_reason() -> str | None:
    """Why the browser cannot be started here (``None`` when it can)."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists() and shutil.which(Path(path).name) is None:
            return f"{path} not found (Debian packages chromium and chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium; the dev extra)"
    return None


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A Selenium Chrome driver for headless Chromium, quit on exit (window size in px)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium") or CHROMIUM
    driver_bin = (CHROMEDRIVER if Path(CHROMEDRIVER).exists()
                  else shutil.which("chromedriver") or CHROMEDRIVER)
    profile = tempfile.mkdtemp(prefix="he-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument(f"--window-size={width},{height}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver: Any) -> list[str]:
    """Messages of the ``SEVERE`` browser-log entries since the last call."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
