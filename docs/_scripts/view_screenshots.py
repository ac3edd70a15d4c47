"""Make the screenshots of docs/tutorials/why-judges-disagree.md from the tutorial itself.

The tutorial's ```python and ```bash blocks up to its `assay view` command run in a
scratch directory (so the run pictured is the run the page builds), then `assay view`
serves it and a headless Chromium at a fixed window size opens the pages the tutorial
shows, sets the label of item s2 through the form as a reader would, and saves one PNG
per picture:

    python docs/_scripts/view_screenshots.py [--out docs/assets/view] [--work DIR]

Needs the `view` extra, selenium, chromium and chromedriver (as tests/test_report_browser).
tests/test_view_browser.py runs it into a temp dir and checks every PNG the page names.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorials" / "why-judges-disagree.md"
OUT = ROOT / "docs" / "assets" / "view"
WINDOW = (1280, 860)
RUN = "runs/why"
JUDGES = ("openai/my-model::claim-check@1", "openai/my-model::claim-check@2")
FENCE = re.compile(r"^```(\w*)\s*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
URL = re.compile(r"(http://127\.0\.0\.1:\d+)/\?token=[\w-]+")


def setup_blocks(page: Path) -> list[tuple[str, str]]:
    """(language, text) of the page's python and bash blocks before `assay view`."""
    blocks = []
    for lang, text in FENCE.findall(page.read_text(encoding="utf-8")):
        if lang == "bash" and "assay view" in text:
            return blocks
        if lang in ("python", "bash"):
            blocks.append((lang, text))
    raise SystemExit(f"{page}: no ```bash block runs `assay view`")


def run_setup(work: Path, env: dict[str, str]) -> None:
    """Run the tutorial's set-up blocks in `work`, as its docs test does."""
    for n, (lang, text) in enumerate(setup_blocks(TUTORIAL)):
        if lang == "python":
            script = work / f"block_{n}.py"
            script.write_text(text, encoding="utf-8")
            command = [sys.executable, str(script)]
        else:
            command = ["bash", "-e", "-c", text]
        subprocess.run(command, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL)


@contextmanager
def viewer(work: Path, env: dict[str, str]) -> Iterator[tuple[str, str]]:
    """`assay view runs/why --annotator ann`: (base URL, URL with the token)."""
    command = [sys.executable, "-m", "assay", "view", RUN, "--annotator", "ann"]
    proc = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, text=True)
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        found = URL.search(proc.stdout.readline())
        watchdog.cancel()
        if found is None:
            raise SystemExit("assay view printed no URL")
        yield found.group(1), found.group(0)
    finally:
        watchdog.cancel()
        proc.send_signal(2)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    """Headless Chromium at WINDOW, its own profile, the system's chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        raise SystemExit("chromium and chromedriver are needed (apt-get install chromium ...)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--disable-background-networking", "--hide-scrollbars",
                "--force-device-scale-factor=1", f"--user-data-dir={profile}",
                f"--window-size={WINDOW[0]},{WINDOW[1]}"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service(driver_path, log_output=os.devnull))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def wait(what: str, check: Callable[[], Any], timeout: float = 30) -> Any:
    end = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > end:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def shoot(driver: Any, out: Path, name: str, scroll_to: str | None = None) -> None:
    """Save the window as out/NAME.png, `scroll_to` (a CSS selector) at the top."""
    wait("the page", lambda: driver.execute_script("return document.readyState") == "complete")
    if scroll_to:
        driver.execute_script(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'start'});"
            "window.scrollBy(0, -12);",
            scroll_to,
        )
    time.sleep(0.3)
    driver.save_screenshot(str(out / f"{name}.png"))
    print(f"wrote {out / name}.png")


def label_s2(driver: Any, base: str, run_id: str, out: Path) -> None:
    """Fill the form as the tutorial does, screenshot it, save, wait for the history."""
    from selenium.webdriver.support.ui import Select

    driver.get(f"{base}/runs/{run_id}/items/claims/s2")
    Select(driver.find_element("id", "label-select")).select_by_value("unsupported")
    note = "a 20% lower risk in one trial is not 'prevents all'"
    driver.find_element("id", "label-note").send_keys(note)
    shoot(driver, out, "label-form", scroll_to="section#adjudication")
    driver.find_element("id", "label-submit").click()
    wait("the saved label", lambda: driver.find_elements("css selector", "ol#label-history li b"))


def take(driver: Any, base: str, login: str, out: Path) -> None:
    """Every picture the tutorial shows, in its order."""
    driver.get(login)
    run_id = wait("the run", lambda: driver.execute_script(
        "const r = document.querySelector('table#runs tr[data-run]'); return r && r.dataset.run"
    ))  # fmt: skip
    shoot(driver, out, "runs")
    driver.get(f"{base}/runs/{run_id}/items?outcome=wrong")
    shoot(driver, out, "items-wrong")
    driver.get(f"{base}/runs/{run_id}/items?disagreeing=1")
    shoot(driver, out, "items-disagree")
    pair = urlencode({"a": JUDGES[0], "b": JUDGES[1]})
    driver.get(f"{base}/runs/{run_id}/items/claims/{quote('s6')}?{pair}")
    shoot(driver, out, "item-side-by-side", scroll_to="form#compare-judges")
    label_s2(driver, base, run_id, out)
    driver.get(f"{base}/compare?run={run_id}")
    shoot(driver, out, "compare")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the PNGs")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="view-shots-") as tmp:
        work = (args.work or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, ASSAY_CACHE_DIR=str(work / "cache"))
        run_setup(work, env)
        with viewer(work, env) as (base, login), chromium(work / "profile") as driver:
            take(driver, base, login, args.out.resolve())


if __name__ == "__main__":
    main()
