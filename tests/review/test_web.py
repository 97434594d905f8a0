"""The review page over HTTP: who may see and change what, and what the pages show."""

from __future__ import annotations

import json
import re
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jsonschema

from monitor.review.web import build_app
from monitor.testing import Reply, call, running

ALICE = {"Authorization": "Bearer alice-token-0123456789"}
BOB = {"Authorization": "Bearer bob-token-0123456789"}

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "fixture.v1.json").read_text(encoding="utf-8"))
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def sids(store: Any) -> list[str]:
    return [i["session_id"] for i in store.items]


def shows_nothing(reply: Reply, store: Any) -> bool:
    return not any(sid in reply.text for sid in sids(store)) and "review-" not in reply.text


def login(base: str, token: str) -> dict[str, str]:
    """Log in through the form; return the headers a browser would send after it."""
    page = call(base, "GET", "/login")
    nonce = re.search(r'name="nonce" value="([^"]+)"', page.text)
    assert nonce is not None
    cookie = f"monitor_login={nonce.group(1)}"
    body = urlencode({"nonce": nonce.group(1), "token": token, "next": "/"}).encode()
    reply = call(base, "POST", "/login", {**FORM, "Cookie": cookie}, body)
    assert reply.status == 303, reply.text
    session = reply.headers["Set-Cookie"].split(";")[0]
    home = call(base, "GET", "/", {"Cookie": session})
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', home.text)
    assert csrf is not None and csrf.group(1)
    return {"Cookie": session, "X-CSRF-Token": csrf.group(1)}


def routes(store: Any) -> list[tuple[str, str]]:
    item = store.items[0]
    entry = item_entries(store, item["id"])[0]
    out = []
    for route in build_app(store.config()).router.routes():
        info = route.resource.get_info() if route.resource else {}
        path = info.get("path") or info.get("formatter", "")
        if path in ("/login",) or path.startswith("/static/"):
            continue
        out.append((route.method, path.format(item=item["id"], entry=entry)))
    return out


def item_entries(store: Any, item_id: int) -> list[str]:
    from monitor.store.intake import get_item

    with store.maker() as s:
        got = get_item(s, item_id)
    assert got is not None
    return [e["id"] for e in got["draft"]["must_survive"]]


def test_anonymous_and_wrong_token_requests_see_nothing(review_store: Any) -> None:
    every = routes(review_store)
    assert len(every) >= 14  # every page, API route and write
    with running(build_app(review_store.config())) as base:
        for method, path in every:
            anonymous = call(base, method, path, {"Accept": "text/html"})
            page = method in ("GET", "HEAD")
            assert anonymous.status in ((303, 401) if page else (401,)), (method, path)
            assert shows_nothing(anonymous, review_store), (method, path)
            if anonymous.status == 303:
                assert anonymous.headers["Location"].startswith("/login?next=")
            for headers in (
                {"Authorization": "Bearer wrong"},
                {"Authorization": "Basic YWxpY2U6YWxpY2U="},
                {"Authorization": "Bearer "},
                {"Cookie": "monitor_session=YWxpY2U.9999999999.bm9uY2U.forged"},
                {"Accept": "application/json"},
            ):
                reply = call(base, method, path, headers)
                # A wrong token is never redirected; a page without one may go to the login.
                redirect = page and "Authorization" not in headers and "Accept" not in headers
                assert reply.status in ((303, 401) if redirect else (401,)), (method, path, headers)
                assert shows_nothing(reply, review_store)
        login_page = call(base, "GET", "/login")
        assert login_page.status == 200 and shows_nothing(login_page, review_store)


def test_a_bearer_token_shows_the_queue(review_store: Any) -> None:
    with running(build_app(review_store.config())) as base:
        page = call(base, "GET", "/", ALICE)
        api = call(base, "GET", "/api/items?week=2026-W48", BOB)
    assert page.status == 200
    assert all(sid in page.text for sid in sids(review_store))
    assert "signed in as <b>alice</b>" in page.text
    listed = json.loads(api.body)["items"]
    assert [i["session_id"] for i in listed] == sids(review_store)
    assert listed[0]["tally"]["undecided"] == 10


def test_responses_are_hardened_and_timed(review_store: Any) -> None:
    with running(build_app(review_store.config())) as base:
        page = call(base, "GET", f"/items/{review_store.items[0]['id']}", ALICE)
        js = call(base, "GET", "/static/review.js")
        css = call(base, "GET", "/static/review.css")
        missing = call(base, "GET", "/static/nope.js")
        sneaky = call(base, "GET", "/static/..%2Freview.js")
    assert page.status == 200
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["X-Frame-Options"] == "DENY"
    assert re.fullmatch(r"app;dur=\d+\.\d\d", page.headers["Server-Timing"])
    assert js.status == 200 and js.headers["Content-Type"].startswith("text/javascript")
    assert css.status == 200 and missing.status == 404 and sneaky.status == 404
    # No asset from anywhere else: every script, style and icon is the app's own.
    for ref in re.findall(r'(?:src|href)="([^"]+)"', page.text):
        assert ref.startswith(("/", "#")), ref


def test_login_gives_a_strict_http_only_cookie(review_store: Any) -> None:
    with running(build_app(review_store.config())) as base:
        headers = login(base, "alice-token-0123456789")
        page = call(base, "GET", "/", headers)
        first = call(base, "GET", "/login")
        nonce = re.search(r'name="nonce" value="([^"]+)"', first.text).group(1)  # type: ignore[union-attr]
        body = urlencode({"nonce": nonce, "token": "guess", "next": "/"}).encode()
        wrong = call(base, "POST", "/login", {**FORM, "Cookie": f"monitor_login={nonce}"}, body)
        stale = call(base, "POST", "/login", FORM, body)  # no form cookie: a forged login
        good = urlencode(
            {"nonce": nonce, "token": "bob-token-0123456789", "next": "//evil.example/"}
        )
        redirected = call(
            base, "POST", "/login", {**FORM, "Cookie": f"monitor_login={nonce}"}, good.encode()
        )
        gone = call(base, "POST", "/logout", headers)
    cookie = redirected.headers["Set-Cookie"]
    assert page.status == 200 and "signed in as <b>alice</b>" in page.text
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
    assert (
        wrong.status == 401
        and "not a reviewer" in wrong.text
        and shows_nothing(wrong, review_store)
    )
    assert stale.status == 403
    assert redirected.headers["Location"] == "/"  # never off-site
    assert gone.status == 303 and 'monitor_session=""' in gone.headers["Set-Cookie"]


def test_the_cookie_is_secure_over_tls_and_behind_a_trusted_proxy(
    review_store: Any, tmp_path: Path
) -> None:
    openssl = shutil.which("openssl")
    assert openssl, "openssl is part of the base system"
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    client = ssl.create_default_context(cafile=str(cert))
    client.check_hostname = False
    with running(build_app(review_store.config()), server) as base:
        tls = call(base, "GET", "/login", context=client)
    assert tls.status == 200 and "Secure" in tls.headers["Set-Cookie"]
    forwarded = {"X-Forwarded-Proto": "https"}
    with running(build_app(review_store.config(trust_proxy=True))) as base:
        trusted = call(base, "GET", "/login", forwarded)
    with running(build_app(review_store.config())) as base:
        ignored = call(base, "GET", "/login", forwarded)
    assert "Secure" in trusted.headers["Set-Cookie"]
    assert "Secure" not in ignored.headers["Set-Cookie"]


def test_browser_writes_need_the_sessions_csrf_token(fresh_store: Any) -> None:
    item = fresh_store.items[0]["id"]
    with running(build_app(fresh_store.config())) as base:
        alice = login(base, "alice-token-0123456789")
        cookie_only = {"Cookie": alice["Cookie"]}
        refused = [
            call(base, "POST", f"/items/{item}/claim", cookie_only),
            call(base, "POST", f"/items/{item}/claim", {**cookie_only, "X-CSRF-Token": "x"}),
            call(base, "POST", f"/items/{item}/claim", {**alice, "Origin": "http://evil.example"}),
            call(base, "POST", f"/items/{item}/claim", {**FORM, **cookie_only}, b"csrf=nope"),
        ]
        other = login(base, "bob-token-0123456789")
        crossed = call(
            base,
            "POST",
            f"/items/{item}/claim",
            {"Cookie": alice["Cookie"], "X-CSRF-Token": other["X-CSRF-Token"]},
        )
        before = call(base, "GET", f"/api/items/{item}", ALICE)
        token = alice["X-CSRF-Token"]
        by_form = call(
            base, "POST", f"/items/{item}/claim", {**FORM, **cookie_only}, f"csrf={token}".encode()
        )
        by_header = call(base, "POST", f"/items/{item}/release", {**alice, "X-Panel": "1"})
    assert [r.status for r in refused] == [403, 403, 403, 403] and crossed.status == 403
    assert json.loads(before.body)["item"]["status"] == "queued"
    assert by_form.status == 303 and by_form.headers["Location"] == f"/items/{item}"
    assert by_header.status == 200 and 'id="panel"' in by_header.text


def test_the_recorded_reviewer_is_the_authenticated_one(fresh_store: Any) -> None:
    item = fresh_store.items[0]["id"]
    entry = item_entries(fresh_store, item)[0]
    json_form = {**FORM, "Accept": "application/json"}
    with running(build_app(fresh_store.config())) as base:
        claimed = call(
            base, "POST", f"/items/{item}/claim", {**BOB, **json_form}, b"reviewer=alice"
        )
        call(
            base,
            "POST",
            f"/items/{item}/entries/{entry}/confirm",
            {**BOB, **json_form},
            b"reviewer=alice",
        )
        as_alice = call(
            base, "POST", f"/items/{item}/entries/{entry}/reject", {**ALICE, **json_form}
        )
        resolve = urlencode({"verdict": "accept", "note": "fine"}).encode()
        blocked = call(base, "POST", f"/items/{item}/resolve", {**ALICE, **json_form}, resolve)
        override = urlencode({"verdict": "accept", "note": "bob is away", "override": "1"})
        done = call(
            base, "POST", f"/items/{item}/resolve", {**ALICE, **json_form}, override.encode()
        )
        reopened = call(base, "POST", f"/items/{item}/reopen", {**BOB, **json_form})
    state = json.loads(done.body)
    assert json.loads(claimed.body)["item"]["claimed_by"] == "bob"
    assert as_alice.status == 409 and "bob holds this item" in as_alice.text
    assert blocked.status == 409 and "overriding their claim is recorded" in blocked.text
    assert done.status == 200
    assert (state["item"]["status"], state["item"]["resolved_by"]) == ("accepted", "alice")
    assert [(a["reviewer"], a["action"], a["override"]) for a in state["actions"]] == [
        ("bob", "claim", False),
        ("bob", "confirm", False),
        ("alice", "resolve", True),
    ]
    assert state["actions"][-1]["detail"]["from"] == "bob"
    again = json.loads(reopened.body)["item"]
    assert (again["status"], again["claimed_by"], again["resolved_by"]) == (
        "in_review",
        "bob",
        None,
    )


def test_the_download_is_the_cli_export(fresh_store: Any, tmp_path: Path) -> None:
    from monitor.cli import main

    item = fresh_store.items[0]["id"]
    entries = item_entries(fresh_store, item)
    writes: list[tuple[str, dict[str, Any]]] = [("claim", {})]
    writes += [(f"entries/{e}/confirm", {}) for e in entries[:3]]
    writes += [(f"entries/{entries[3]}/reject", {})]
    writes += [
        (
            "entries",
            {
                "class": "commitment",
                "turn": 5,
                "literal": "I will run the linter.",
                "probe": "What did you promise?",
                "expect": "runs the linter",
                "event_id": "review-ten-00005",
            },
        )
    ]
    writes += [("resolve", {"verdict": "accept", "note": "good"})]
    with running(build_app(fresh_store.config())) as base:
        early = call(base, "GET", f"/items/{item}/fixture.json", ALICE)
        for path, data in writes:
            r = call(
                base, "POST", f"/items/{item}/{path}", {**ALICE, **FORM}, urlencode(data).encode()
            )
            assert r.status == 303, (path, r.text)
        got = call(base, "GET", f"/items/{item}/fixture.json", ALICE)
    assert early.status == 409 and "only accepted items export" in early.text
    assert got.status == 200
    name = re.search(r'filename="([^"]+)"', got.headers["Content-Disposition"]).group(1)  # type: ignore[union-attr]
    assert (
        main(
            [
                "intake",
                "export",
                str(item),
                "--fixture",
                "--out",
                str(tmp_path / "cli"),
                "--db",
                fresh_store.url,
            ]
        )
        == 0
    )
    assert (tmp_path / "cli" / name).read_bytes() == got.body
    assert (
        main(
            [
                "intake",
                "export",
                "--week",
                "2026-W48",
                "--fixture",
                "--out",
                str(tmp_path / "week"),
                "--db",
                fresh_store.url,
            ]
        )
        == 0
    )
    assert [p.name for p in (tmp_path / "week").iterdir()] == [name]
    doc = json.loads(got.body)
    jsonschema.validate(doc, SCHEMA, format_checker=jsonschema.FormatChecker())
    ids = {e["id"] for e in doc["must_survive"]}
    assert set(entries[:3]) <= ids and entries[3] not in ids and len(ids) == 4
    added = next(e for e in doc["must_survive"] if e["id"].startswith("added-"))
    assert added["class"] == "commitment" and "call" not in added
    assert doc["review"]["reviewed_by"] == "alice"
    assert len(doc["transcript"]["events"]) == 300


def test_the_item_page_shows_the_conversation_or_says_why_not(review_store: Any) -> None:
    by_sid = {i["session_id"]: i["id"] for i in review_store.items}
    with running(build_app(review_store.config())) as base:
        ten = call(base, "GET", f"/items/{by_sid['review-ten']}", ALICE).text
        gone = call(base, "GET", f"/items/{by_sid['review-gone']}", ALICE).text
        queue = call(base, "GET", "/?week=2026-W48&status=queued", ALICE).text
        bad = call(base, "GET", "/?week=someday", ALICE)
    assert "300 events captured" in ten
    assert ten.count('class="turn flagged') == 10  # one flagged turn per planted loss
    assert "Never push directly to main, open a pull request instead." in ten
    assert "Compaction by sum-v2.0" in ten and "Summary of the work so far" in ten
    assert ten.count('class="cand undecided"') == 10
    assert "The source is gone" in gone and "late.jsonl: the file is gone" in gone
    assert gone.count('class="turn flagged') == 2  # the evidence stays without the transcript
    assert "3 item" in queue and "file is gone" not in queue
    assert bad.status == 400
