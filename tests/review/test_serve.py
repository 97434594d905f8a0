"""``monitor serve`` as a reviewer starts it: the issue's acceptance check, and its refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from monitor.cli import build_parser, main
from monitor.testing import call, free_port, serving

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sessions.jsonl.gz"


@pytest.mark.postgres
@pytest.mark.slow
def test_the_queue_is_shown_to_a_reviewer_and_to_nobody_else(pg_url: str, tmp_path: Path) -> None:
    assert main(["db", "upgrade", "--db", pg_url]) == 0
    # The examples end in two deliberately bad lines: the run finishes, skipping them (3).
    assert main(["replay", str(EXAMPLES), "--db", pg_url, "--no-progress"]) == 3
    assert main(["sample", "--week", "2026-W48", "--db", pg_url]) == 0
    from monitor.store.db import make_engine, make_sessionmaker
    from monitor.store.intake import list_items

    engine = make_engine(pg_url)
    with make_sessionmaker(engine)() as s:
        queued = [i["session_id"] for i in list_items(s, week="2026-W48")]
    engine.dispose()
    assert len(queued) == 20

    with serving(pg_url, "alice:SECRET", tmp_path) as base:
        anonymous = call(base, "GET", "/")
        browser = call(base, "GET", "/", {"Accept": "text/html"})
        api = call(base, "GET", "/api/items", {"Accept": "application/json"})
        wrong = call(base, "GET", "/", {"Authorization": "Bearer NOT-SECRET"})
        near = call(base, "GET", "/", {"Authorization": "Bearer SECRETX"})
        alice = call(base, "GET", "/", {"Authorization": "Bearer SECRET"})
    for refused in (anonymous, browser, api, wrong, near):
        assert refused.status in (401, 403, 303)
        assert not any(sid in refused.text for sid in queued)
    assert wrong.status == near.status == api.status == 401
    assert browser.status == 303 and browser.headers["Location"].startswith("/login?next=")
    assert alice.status == 200
    assert all(sid in alice.text for sid in queued)
    assert sorted(set(re.findall(r"ex-\d{4}-[0-9a-f]{8}", alice.text))) == sorted(queued)


def test_serve_binds_to_loopback_by_default() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8080)


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        ("", "no reviewers configured; set MONITOR_REVIEW_TOKENS"),
        ("alice", "review token entry 1 is not NAME:TOKEN"),
    ],
)
def test_serve_refuses_to_start_without_good_reviewers(
    tokens: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MONITOR_REVIEW_TOKENS", tokens)
    code = main(["serve", "--db", f"sqlite:///{tmp_path}/x.db", "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
