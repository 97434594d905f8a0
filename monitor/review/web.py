"""``monitor serve``: the intake review page, an aiohttp application over the store.

Server-rendered HTML (Jinja2) with one small script for the keyboard; every asset is served from
the package, so the page works offline and from an installed wheel. Handlers are thin: they
authenticate, read or write through ``monitor.store.review`` (in a thread, off the event loop),
and render. The rules are in ``monitor.review.decisions``.

Security, in the order a request meets it (``_guard``):

1. ``/login`` and ``/static/`` are the only routes open to anyone; they hold no queue data.
2. ``Authorization: Bearer TOKEN`` authenticates any request (scripts). A wrong token is 401,
   never a redirect. Without the header, the session cookie must verify; otherwise a page
   request is redirected to the login form and anything else gets 401, with no data.
3. Writes are POST only. A cookie-authenticated write must carry the session's CSRF token
   (``X-CSRF-Token`` header or ``csrf`` form field), and a write with an ``Origin`` header must
   come from this host. A bearer token is never sent by a browser on its own, so it needs none.
4. The reviewer recorded is the authenticated one; no form field names a reviewer.

Responses carry a strict Content-Security-Policy (same-origin scripts and styles only), no
caching, and ``Server-Timing: app;dur=…`` (the handler's time, which ``bench/review_page.py``
reads).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlsplit

from aiohttp import web
from jinja2 import Environment, PackageLoader, select_autoescape

from monitor.review import decisions, fixture, timeline
from monitor.review.auth import SESSION_LIFETIME_S, Login, Reviewers, Sessions
from monitor.review.decisions import ReviewError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

COOKIE: Final = "monitor_session"
LOGIN_COOKIE: Final = "monitor_login"
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
STATUSES: Final = ("queued", "in_review", "accepted", "rejected")
CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
STATIC_TYPES: Final = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
STATIC_NAMES: Final = ("favicon.svg", "review.css", "review.js")
#: Default probes for an item added from the timeline, by class.
PROBES: Final = {
    "constraint": "What instructions from the user still apply to this work?",
    "commitment": "What did you undertake to do earlier in this conversation?",
    "open_question": "Which questions in this conversation are still open?",
    "reference": "What did the earlier result say?",
}


class Config:
    """What the handlers share: the store, who may log in, and how the page is reached."""

    def __init__(
        self,
        maker: sessionmaker[Session],
        reviewers: Reviewers,
        *,
        trust_proxy: bool = False,
        sessions: Sessions | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.maker = maker
        self.reviewers = reviewers
        self.sessions = sessions or Sessions(reviewers)
        self.trust_proxy = trust_proxy
        self.clock = clock
        self.env = Environment(
            loader=PackageLoader("monitor.review", "templates"),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["pretty"] = lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True)
        # Assets are cached for an hour; their URLs carry a digest of their content, so a new
        # version of the package is fetched at once.
        digest = hashlib.sha256()
        for name in sorted(STATIC_NAMES):
            digest.update(resources.files("monitor.review").joinpath("static", name).read_bytes())
        self.env.globals["assets"] = digest.hexdigest()[:12]


class Auth:
    """The authenticated reviewer of a request, and how they proved it."""

    def __init__(self, reviewer: str, login: Login | None) -> None:
        self.reviewer = reviewer
        self.login = login


CONFIG: Final = web.AppKey("config", Config)
AUTH: Final = web.RequestKey("auth", Auth)


def _config(request: web.Request) -> Config:
    return request.app[CONFIG]


def _auth(request: web.Request) -> Auth:
    return request[AUTH]


def _secure(request: web.Request, cfg: Config) -> bool:
    if request.secure:
        return True
    proto = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
    return cfg.trust_proxy and proto == "https"


def _wants_html(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "text/html" in accept or not accept or accept == "*/*"


def _local(path: str | None) -> str:
    """``path`` if it is a path on this site, else ``/`` (no open redirect)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return path


def _unauthorized(message: str = "authentication required") -> web.HTTPUnauthorized:
    return web.HTTPUnauthorized(
        text=message + "\n", headers={"WWW-Authenticate": 'Bearer realm="monitor review"'}
    )


# --- middleware ------------------------------------------------------------------------------

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def _headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    start = time.perf_counter()
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        _harden(exc, request, start)
        raise
    _harden(response, request, start)
    return response


def _harden(response: web.StreamResponse, request: web.Request, start: float) -> None:
    h = response.headers
    h["Content-Security-Policy"] = CSP
    h["X-Content-Type-Options"] = "nosniff"
    h["X-Frame-Options"] = "DENY"
    h["Referrer-Policy"] = "same-origin"  # no-referrer would make browsers send `Origin: null`
    if not request.path.startswith("/static/"):
        h["Cache-Control"] = "no-store"
    h["Server-Timing"] = f"app;dur={(time.perf_counter() - start) * 1000:.2f}"


def _is_public(request: web.Request) -> bool:
    return request.path == "/login" or request.path.startswith("/static/")


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    if _is_public(request):
        return await handler(request)
    cfg = _config(request)
    header = request.headers.get("Authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        reviewer = cfg.reviewers.who(token.strip()) if scheme.lower() == "bearer" else None
        if reviewer is None:
            raise _unauthorized("wrong or unknown token")
        request[AUTH] = Auth(reviewer, None)
    else:
        login = cfg.sessions.verify(request.cookies.get(COOKIE))
        if login is None:
            if request.method in SAFE_METHODS and _wants_html(request):
                raise web.HTTPSeeOther("/login?next=" + quote(request.path_qs, safe=""))
            raise _unauthorized()
        request[AUTH] = Auth(login.reviewer, login)
    if request.method not in SAFE_METHODS:
        await _check_write(request, cfg)
    return await handler(request)


async def _check_write(request: web.Request, cfg: Config) -> None:
    origin = request.headers.get("Origin")
    if origin is not None and urlsplit(origin).netloc != request.host:
        raise web.HTTPForbidden(text="cross-origin write refused\n")
    login = _auth(request).login
    if login is None:
        return  # bearer: no browser attaches it by itself
    token = request.headers.get("X-CSRF-Token")
    if token is None and request.content_type == "application/x-www-form-urlencoded":
        token = str((await request.post()).get("csrf", "")) or None
    if not cfg.sessions.check_csrf(login, token):
        raise web.HTTPForbidden(text="missing or wrong CSRF token\n")


# --- rendering -------------------------------------------------------------------------------


def _render(
    request: web.Request, name: str, http_status: int = 200, **context: Any
) -> web.Response:
    cfg = _config(request)
    auth = request.get(AUTH)
    csrf = cfg.sessions.csrf(auth.login) if auth is not None and auth.login else ""
    html = cfg.env.get_template(name).render(
        reviewer=auth.reviewer if auth is not None else None, csrf=csrf, **context
    )
    return web.Response(text=html, status=http_status, content_type="text/html")


async def _db(request: web.Request, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Run store work in a thread, turning a refused action into its HTTP status."""
    try:
        return await asyncio.to_thread(fn, *args, **kw)
    except ReviewError as exc:
        raise _refusal(request, exc) from None


def _refusal(request: web.Request, exc: ReviewError) -> web.HTTPException:
    kinds: dict[int, type[web.HTTPException]] = {
        404: web.HTTPNotFound,
        409: web.HTTPConflict,
        422: web.HTTPUnprocessableEntity,
    }
    kind = kinds.get(exc.status, web.HTTPInternalServerError)
    if "application/json" in request.headers.get("Accept", ""):
        return kind(text=json.dumps({"error": str(exc)}), content_type="application/json")
    return kind(text=str(exc) + "\n")


# --- login -----------------------------------------------------------------------------------


async def login_page(request: web.Request) -> web.Response:
    # Reuse a pending form's nonce: a second tab, or a stray request redirected here, must not
    # invalidate the form already on screen.
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    if not (16 <= len(nonce) <= 64 and nonce.replace("-", "").replace("_", "").isalnum()):
        nonce = secrets.token_urlsafe(16)
    response = _render(request, "login.html", next=_local(request.query.get("next")), nonce=nonce)
    _set_cookie(request, response, LOGIN_COOKIE, nonce, max_age=1800)
    return response


def _set_cookie(
    request: web.Request, response: web.StreamResponse, name: str, value: str, max_age: int
) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="Strict",
        secure=_secure(request, _config(request)),
    )


async def login(request: web.Request) -> web.StreamResponse:
    cfg = _config(request)
    form = await request.post()
    origin = request.headers.get("Origin")
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    given = str(form.get("nonce", ""))
    if (origin is not None and urlsplit(origin).netloc != request.host) or not (
        nonce and hmac.compare_digest(nonce, given)
    ):
        raise web.HTTPForbidden(text="login form expired; reload the login page\n")
    reviewer = cfg.reviewers.who(str(form.get("token", "")))
    if reviewer is None:
        await asyncio.sleep(0.5)  # slows guessing; tokens should be long anyway
        response = _render(
            request,
            "login.html",
            http_status=401,
            next=_local(str(form.get("next", ""))),
            nonce=nonce,
            error="That token is not a reviewer's.",
        )
        return response
    response = _see_other(_local(str(form.get("next", "/"))))
    lifetime = int(SESSION_LIFETIME_S)
    _set_cookie(request, response, COOKIE, cfg.sessions.issue(reviewer), lifetime)
    response.del_cookie(LOGIN_COOKIE, path="/")
    return response


def _see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


async def logout(request: web.Request) -> web.StreamResponse:
    response = _see_other("/login")
    response.del_cookie(COOKIE, path="/")
    return response


# --- the queue -------------------------------------------------------------------------------


def _queue_data(cfg: Config, week: str | None, status: str | None) -> dict[str, Any]:
    from monitor.sampling import iso_week
    from monitor.store import review

    with cfg.maker() as session:
        weeks = review.weeks(session)
        chosen = week or (weeks[0] if weeks else iso_week(cfg.clock()))
        items = review.queue(session, chosen, status)
    return {"weeks": weeks, "week": chosen, "status": status, "items": items}


def _filters(request: web.Request) -> tuple[str | None, str | None]:
    from monitor.sampling import parse_week

    week = request.query.get("week") or None
    status = request.query.get("status") or None
    if week is not None:
        try:
            parse_week(week)
        except ValueError as exc:
            raise web.HTTPBadRequest(text=f"{exc}\n") from None
    if status is not None and status not in STATUSES:
        raise web.HTTPBadRequest(text=f"status must be one of {', '.join(STATUSES)}\n")
    return week, status


async def queue_page(request: web.Request) -> web.Response:
    week, status = _filters(request)
    data = await _db(request, _queue_data, _config(request), week, status)
    return _render(request, "queue.html", statuses=STATUSES, **data)


async def api_items(request: web.Request) -> web.Response:
    week, status = _filters(request)
    data = await _db(request, _queue_data, _config(request), week, status)
    return web.json_response(
        {"week": data["week"], "weeks": data["weeks"], "items": data["items"]}, dumps=_dumps
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# --- an item ---------------------------------------------------------------------------------


def _item_id(request: web.Request) -> int:
    try:
        return int(request.match_info["item"])
    except ValueError:
        raise web.HTTPNotFound(text="no such item\n") from None


def _view(cfg: Config, item_id: int, reviewer: str, *, with_timeline: bool) -> dict[str, Any]:
    from monitor.store import review

    with cfg.maker() as session:
        data = review.item_data(session, item_id)
    item = data.item
    draft = item.get("draft") or {}
    entries = decisions.fold(draft, data.actions)
    transcript = data.transcript
    view: dict[str, Any] = {
        "item": item,
        "draft": draft,
        "entries": entries,
        "tally": decisions.tally(entries),
        "actions": data.actions,
        "transcript": transcript,
        "session": data.session,
        "previous_id": data.previous_id,
        "next_id": data.next_id,
        "me": reviewer,
        "mine": item["status"] == "in_review" and item["claimed_by"] == reviewer,
        "probes": PROBES,
        "classes": decisions.CLASSES,
    }
    if with_timeline:
        events = (transcript or {}).get("events") or []
        view["turns"] = timeline.build(events, data.flags, entries, draft.get("compactions") or ())
        view["flag_count"] = len(data.flags)
    return view


async def item_page(request: web.Request) -> web.Response:
    cfg = _config(request)
    view = await _db(
        request, _view, cfg, _item_id(request), _auth(request).reviewer, with_timeline=True
    )
    return _render(request, "item.html", **view)


async def panel(request: web.Request) -> web.Response:
    cfg = _config(request)
    view = await _db(
        request, _view, cfg, _item_id(request), _auth(request).reviewer, with_timeline=False
    )
    return _render(request, "_panel.html", **view)


def _api_view(view: Mapping[str, Any]) -> dict[str, Any]:
    item = dict(view["item"])
    transcript = view["transcript"]
    return {
        "item": item,
        "entries": [
            {
                **e.fields(),
                "origin": e.origin,
                "verdict": e.verdict,
                "edited": e.edited,
                "decided_by": e.decided_by,
            }
            for e in view["entries"]
        ],
        "tally": view["tally"],
        "transcript": None
        if transcript is None
        else {k: transcript[k] for k in ("status", "omitted", "notes", "captured_at")}
        | {"events": len(transcript["events"])},
        "actions": [
            {
                "id": a.id,
                "reviewer": a.reviewer,
                "action": a.action,
                "entry_id": a.entry_id,
                "detail": dict(a.detail),
                "override": a.override,
                "at": a.at.isoformat() if a.at else None,
            }
            for a in view["actions"]
        ],
    }


async def api_item(request: web.Request) -> web.Response:
    cfg = _config(request)
    view = await _db(
        request, _view, cfg, _item_id(request), _auth(request).reviewer, with_timeline=False
    )
    return web.json_response(_api_view(view), dumps=_dumps)


def _fixture(cfg: Config, item_id: int) -> tuple[bytes, str]:
    with cfg.maker() as session:
        doc = fixture.document(session, item_id)
    return fixture.dumps(doc), fixture.file_name(doc)


async def download(request: web.Request) -> web.Response:
    body, name = await _db(request, _fixture, _config(request), _item_id(request))
    return web.Response(
        body=body,
        content_type="application/json",
        charset="utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


# --- writes ----------------------------------------------------------------------------------


async def _form(request: web.Request) -> dict[str, Any]:
    if request.content_type == "application/json":
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text="body is not JSON\n") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="body must be a JSON object\n")
        return body
    return {k: v for k, v in (await request.post()).items() if isinstance(v, str)}


def _yes(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in ("1", "true", "on", "yes"))


def _write(cfg: Config, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    with cfg.maker.begin() as session:
        return fn(session, *args, **kw)


async def _answer(request: web.Request, item_id: int) -> web.StreamResponse:
    """After a write: the panel for the page's script, JSON for scripts, else a redirect."""
    if request.headers.get("X-Panel") == "1":
        return await panel(request)
    if "application/json" in request.headers.get("Accept", ""):
        return await api_item(request)
    raise web.HTTPSeeOther(f"/items/{item_id}")


def _lifecycle(name: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        from monitor.store import review

        cfg = _config(request)
        item_id = _item_id(request)
        form = await _form(request)
        who = _auth(request).reviewer
        now = cfg.clock()
        override = _yes(form.get("override"))
        if name == "claim":
            await _db(request, _write, cfg, review.claim, item_id, who, now, override=override)
        elif name == "release":
            await _db(request, _write, cfg, review.release, item_id, who, now, override=override)
        elif name == "reopen":
            await _db(request, _write, cfg, review.reopen, item_id, who, now)
        else:
            verdict = str(form.get("verdict", ""))
            if verdict not in ("accept", "reject"):
                raise web.HTTPUnprocessableEntity(text="verdict must be accept or reject\n")
            await _db(
                request,
                _write,
                cfg,
                review.resolve,
                item_id,
                who,
                now,
                accept=verdict == "accept",
                note=form.get("note"),
                override=override,
            )
        return await _answer(request, item_id)

    return handle


def _event_origin(
    cfg: Config, item_id: int, event_id: str | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The timeline event an added item was taken from, and its call when it is a tool event."""
    if not event_id:
        return None, None
    from monitor.store.transcripts import load

    with cfg.maker() as session:
        row = load(session, item_id)
    events = row.events if row is not None else []
    event = next((e for e in events if e.get("event_id") == event_id), None)
    if event is None:
        return None, None
    origin = {"event_id": event_id, "turn": event.get("turn"), "kind": event.get("kind")}
    tool = event.get("tool")
    call = None
    if tool and tool.get("name"):
        arguments = json.dumps(tool.get("arguments") or {}, sort_keys=True, separators=(",", ":"))
        call = {"tool": str(tool["name"]), "arguments": arguments}
    return origin, call


def _entry(name: str) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        from monitor.store import review

        cfg = _config(request)
        item_id = _item_id(request)
        form = await _form(request)
        who = _auth(request).reviewer
        fields = {k: form.get(k) for k in decisions.EDITABLE}
        if name == "add":
            origin, call = await asyncio.to_thread(
                _event_origin, cfg, item_id, str(form.get("event_id") or "") or None
            )
            if origin is not None:
                origin["selection"] = _yes(form.get("selection"))
            await _db(
                request,
                _write,
                cfg,
                review.decide,
                item_id,
                who,
                cfg.clock(),
                "add",
                None,
                fields,
                call=call if fields["class"] == "reference" else None,
                origin=origin,
            )
        else:
            entry_id = request.match_info["entry"]
            await _db(
                request,
                _write,
                cfg,
                review.decide,
                item_id,
                who,
                cfg.clock(),
                name,
                entry_id,
                fields if name == "edit" else None,
            )
        return await _answer(request, item_id)

    return handle


# --- static files ----------------------------------------------------------------------------


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or suffix not in STATIC_TYPES:
        raise web.HTTPNotFound()
    path = resources.files("monitor.review").joinpath("static", name)
    if not path.is_file():
        raise web.HTTPNotFound()
    return web.Response(
        body=path.read_bytes(),
        content_type=STATIC_TYPES[suffix],
        headers={"Cache-Control": "public, max-age=3600"},
    )


# --- the application -------------------------------------------------------------------------


def build_app(config: Config) -> web.Application:
    app = web.Application(middlewares=[_headers, _guard], client_max_size=256 * 1024)
    app[CONFIG] = config
    r = app.router
    r.add_get("/login", login_page)
    r.add_post("/login", login)
    r.add_post("/logout", logout)
    r.add_get("/static/{name}", static)
    r.add_get("/", queue_page)
    r.add_get("/api/items", api_items)
    r.add_get("/api/items/{item}", api_item)
    r.add_get("/items/{item}", item_page)
    r.add_get("/items/{item}/panel", panel)
    r.add_get("/items/{item}/fixture.json", download)
    for name in decisions.LIFECYCLE_ACTIONS:
        r.add_post(f"/items/{{item}}/{name}", _lifecycle(name))
    r.add_post("/items/{item}/entries", _entry("add"))
    for name in ("confirm", "reject", "edit"):
        r.add_post(f"/items/{{item}}/entries/{{entry}}/{name}", _entry(name))
    return app


def serve(
    maker: sessionmaker[Session],
    reviewers: Reviewers,
    host: str,
    port: int,
    *,
    trust_proxy: bool = False,
) -> None:
    """Run the page until interrupted."""
    app = build_app(Config(maker, reviewers, trust_proxy=trust_proxy))
    where = f"http://{host}:{port}/"
    sys.stderr.write(f"review page on {where} for {', '.join(reviewers.names)}\n")
    if host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(
            f"warning: listening on {host} without TLS; put a TLS proxy in front of it\n"
        )
    for name in reviewers.weak:
        sys.stderr.write(f"warning: {name}'s token is shorter than 16 characters\n")
    web.run_app(app, host=host, port=port, print=None, access_log=None, handle_signals=True)


__all__ = ["Config", "build_app", "serve"]
