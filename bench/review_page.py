"""The review page: server time to render an item of a 2,000-event session, and the keystrokes
to review an item with ten candidates.

    python bench/review_page.py [--events 2000] [--runs 30] [--screenshot examples/review-page.png]

Render time is the handler's own time (``Server-Timing: app;dur=…``: reading the item, its
actions, transcript and flags, folding the decisions, laying out the timeline and rendering the
template), for the SQLite store and, when the local PostgreSQL answers, for PostgreSQL; the
first request (template compilation) is reported apart. Keystrokes are counted in Debian's
chromium driving the real page: from the queue, claim and open the item, one verdict per
candidate, resolve; the store is then checked to hold what the keys said.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.review.auth import parse_tokens  # noqa: E402
from monitor.review.web import Config, build_app  # noqa: E402
from monitor.store.db import make_engine, make_sessionmaker  # noqa: E402
from monitor.testing import (  # noqa: E402
    call,
    database_url,
    fill_review_store,
    review_session,
    running,
    scratch_database,
    serving,
)

TOKEN = "bench-token-0123456789abcdef"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def server_ms(reply: Any) -> float:
    found = re.fullmatch(r"app;dur=([0-9.]+)", reply.headers["Server-Timing"])
    assert found, reply.headers["Server-Timing"]
    return float(found.group(1))


def render(url: str, events: int, runs: int, tmp: Path) -> dict[str, Any]:
    items = fill_review_store(url, tmp, [review_session("bench-item", 10, events)])
    item = items[0]["id"]
    engine = make_engine(url)
    try:
        app = build_app(Config(make_sessionmaker(engine), parse_tokens(f"bench:{TOKEN}")))
        with running(app) as base:
            claimed = call(base, "POST", f"/items/{item}/claim", BEARER)
            assert claimed.status in (200, 303), claimed.text
            first = call(base, "GET", f"/items/{item}", BEARER)
            assert first.status == 200, first.text
            times, walls = [], []
            for _ in range(runs):
                start = time.perf_counter()
                reply = call(base, "GET", f"/items/{item}", BEARER)
                walls.append((time.perf_counter() - start) * 1000)
                assert reply.status == 200
                times.append(server_ms(reply))
    finally:
        engine.dispose()
    rows = first.text.count('class="ev ')
    assert rows == events, (rows, events)
    times.sort()
    return {
        "first": server_ms(first),
        "median": statistics.median(times),
        "p95": times[max(0, round(0.95 * len(times)) - 1)],
        "max": times[-1],
        "wall_median": statistics.median(walls),
        "bytes": len(first.body),
        "rows": rows,
    }


def keystrokes(url: str, tmp: Path, screenshot: Path | None) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from monitor.review.decisions import fold, tally
    from monitor.store import review
    from monitor.store.intake import get_item

    items = fill_review_store(url, tmp, [review_session("bench-keys", 10, 300)])
    item = items[0]["id"]
    count = 0
    with serving(url, f"bench:{TOKEN}", tmp) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(base + "/")
        page.keyboard.type(TOKEN)
        page.keyboard.press("Enter")
        page.wait_for_url(base + "/")

        def press(key: str) -> None:
            nonlocal count
            page.keyboard.press(key)
            count += 1

        started = time.perf_counter()
        press("c")  # claim the first item of the queue and open it
        page.wait_for_selector("#panel[data-mine='1']")
        for key in "yyyyn":
            press(key)
        page.wait_for_selector("body:not([data-busy])", state="attached")
        if screenshot is not None:  # to the first flagged turn and back: keys not counted
            page.keyboard.press("t")
            page.keyboard.press("f")
            page.screenshot(path=str(screenshot))
            page.keyboard.press("t")
        for key in "yyyyy":
            press(key)
        press("r")
        page.wait_for_selector("#resolve[open]")
        press("Control+Enter")
        page.wait_for_selector("#panel[data-status='accepted']")
        seconds = time.perf_counter() - started
        browser.close()
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as s:
            got = get_item(s, item)
            actions = review.actions(s, item)
    finally:
        engine.dispose()
    assert got is not None and got["status"] == "accepted"
    counts = tally(fold(got["draft"], actions))
    assert counts == {"confirmed": 9, "rejected": 1, "undecided": 0}, counts
    return {"keys": count, "seconds": seconds, "tally": counts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--screenshot", type=Path, help="write the item page mid-review here")
    parser.add_argument("--json", action="store_true", help="one JSON object; ratio = p95 / 300 ms")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        results = {"sqlite": render(f"sqlite:///{base}/render.db", args.events, args.runs, base)}
        try:
            with scratch_database("review_bench_") as name:
                results["postgres"] = render(database_url(name), args.events, args.runs, base)
        except Exception as exc:  # the local PostgreSQL is optional here
            print(f"postgres: skipped ({type(exc).__name__}: {exc})")
        for store, r in results.items():
            print(
                f"render item page, {r['rows']} events, {store}: server median {r['median']:.1f} ms"
                f", p95 {r['p95']:.1f} ms, max {r['max']:.1f} ms ({args.runs} runs; first request"
                f" {r['first']:.1f} ms; wall median {r['wall_median']:.1f} ms;"
                f" {r['bytes'] / 1024:.0f} KiB of HTML); target <= 300 ms"
            )
        k: dict[str, Any] | None = None
        if os.path.exists(CHROMIUM):
            k = keystrokes(f"sqlite:///{base}/keys.db", base, args.screenshot)
        if args.json:
            worst = max(r["p95"] for r in results.values())
            print(json.dumps({"render_ms": results, "keystrokes": k, "ratio": worst / 300.0}))
            return 0
        if k is None:
            print(f"keystrokes: skipped ({CHROMIUM} missing; `make services` installs it)")
            return 0
        print(
            f"keystrokes to review an item with ten candidates: {k['keys']} (claim and open 1,"
            f" verdicts 10, resolve 2; one more, ], moves to the next item) in"
            f" {k['seconds']:.1f} s of scripted typing; store: {k['tally']}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
