"""Settings, read once at the edge: environment (``MONITOR_*``) over a TOML file over defaults.

Only ``cli.py`` calls ``load_settings``; everything below it receives a frozen ``Settings`` (or
just the ``DetectConfig`` part). Secrets are ``Secret`` values whose repr never shows them, so a
logged settings object leaks nothing.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import msgspec

from monitor.detect.config import (
    DEFAULT_IGNORED_ARGUMENTS,
    DEFAULT_IGNORED_TOOLS,
    DetectConfig,
    parse_ignored_arguments,
    parse_ignored_tools,
)

ENV_PREFIX: Final = "MONITOR_"


class Secret(str):
    """A string that hides itself in repr/str-formatting of containers and in logs."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Secret('**********')" if self else "Secret('')"

    def reveal(self) -> str:
        return str.__str__(self)


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Every setting of the monitor. Field name ``x`` is env var ``MONITOR_X``."""

    #: Kafka bootstrap servers, comma-separated (``kafka://host:9092`` or ``host:9092``).
    broker: str = "kafka://127.0.0.1:9092"
    #: SQLAlchemy database URL (``postgresql://…`` in production, ``sqlite:///…`` embedded).
    db_url: str = "sqlite:///monitor.db"
    #: Topic of agent events, keyed by session id.
    input_topic: str = "agent-events"
    #: Durable topic of detected flags (the sink writes them to the database).
    flags_topic: str = "compaction-flags"
    #: Topic of records that could not be decoded, with the reason.
    deadletter_topic: str = "agent-events-deadletter"
    #: Topic of new fixture-intake items, for downstream tools ("" disables publishing).
    intake_topic: str = ""
    #: Partitions of the topics the worker creates (and of its tables' changelogs).
    partitions: int = 8
    #: Faust application id (consumer group and changelog topic prefix).
    app_id: str = "compaction-monitor"
    #: Port of the worker's web server (/metrics, /health, /ready).
    web_port: int = 6066
    #: Host the worker's web server binds to.
    web_host: str = "0.0.0.0"
    #: Kafka client session timeout in seconds.
    session_timeout_s: float = 30.0
    #: Longest a consumer fetch may wait for data (ms). Bounds flag latency: a flag crosses two
    #: consumer hops. Apache Kafka's consumer default; Faust on its own fixes 1500.
    fetch_max_wait_ms: int = 500
    #: Most data one fetch returns per partition (bytes); Faust's default. The worker works
    #: through a whole fetch round before the next, so while an input backlog drains, flags
    #: and session summaries produced meanwhile wait for up to this much input per partition
    #: to be processed first. On a 40k-record backlog, 65536 brought the first flag write
    #: from 4.7 s to 0.5 s (medians of 4 and 5 runs), at ~7% less throughput.
    fetch_max_bytes: int = 1_048_576
    #: Repeat window in turns after a compaction.
    window: int = 5
    #: Tools whose repeats are never flagged: `TOOL`, or `TOOL.FIELD=VALUE` for only the calls
    #: whose FIELD is VALUE (empty: missing or empty). Comma-separated in the environment;
    #: setting it replaces the defaults (listed per agent below).
    ignored_tools: tuple[str, ...] = DEFAULT_IGNORED_TOOLS
    #: Argument fields that do not change what a call does (`TOOL.FIELD`, `*.FIELD` for every
    #: tool), left out when comparing calls. Setting it replaces the defaults (listed below).
    ignored_arguments: tuple[str, ...] = DEFAULT_IGNORED_ARGUMENTS
    #: Minimum restatement score to flag (100 x P(same), 0-100); unset: the scorer's own
    #: threshold, chosen on its validation split.
    restate_threshold: float | None = None
    #: Keep a ledger of what must survive and check it at every compaction with summary text,
    #: raising dropped_item and inverted_item flags. Off by default: end to end on the survival
    #: corpus' test domains its flags are right a third of the time (README, "Survival check").
    survival: bool = False
    #: Read restatements with the optional semantic stage too (sentence embeddings; needs the
    #: semantic extra). Off by default: it costs milliseconds per user message (README,
    #: "Semantic stage").
    semantic: bool = False
    #: Turns an event may arrive late by; such events are held and processed in turn order.
    reorder_turns: int = 0
    #: Seconds of event-time silence after which the worker drops a session's state.
    idle_expiry_s: float = 7 * 24 * 3600.0
    #: Records a sink takes per write: flags per transaction, and the most session rows per
    #: transaction in the session sink (whose records hold many summaries each).
    sink_batch: int = 500
    #: Longest wait (seconds) before a partial sink batch is written.
    sink_within_s: float = 1.0
    #: Run the database sinks in a child process of their own (consumer group
    #: ``<app_id>-sinks``), so their writes do not compete with detection for the interpreter.
    #: Ignored for SQLite, whose sinks stay in the worker's process.
    sink_process: bool = True
    #: ``fetch_max_wait_ms`` of the sink process's consumer. Flag records arrive while its
    #: fetches wait, and a broker that holds a fetch its full wait (Tansu does) adds that wait
    #: to every flag's latency and to the end of every backlog.
    sink_fetch_max_wait_ms: int = 100
    #: Seconds between the worker's sweeps that drop ended and idle sessions from its state.
    expiry_interval_s: float = 300.0
    #: When the leader worker queues the previous ISO week's fixture-intake sample (crontab
    #: expression, UTC; "" turns the schedule off).
    intake_cron: str = "10 0 * * mon"
    #: Reviewers of the intake review page (``monitor serve``) and their tokens, as
    #: ``alice:TOKEN,bob:TOKEN``. Wrapped in ``Secret`` on load; keep it in a secret store.
    review_tokens: str = Secret("")
    #: Trust ``X-Forwarded-Proto`` from a TLS proxy in front of ``monitor serve`` (session
    #: cookies are then marked Secure). Only set it when the proxy is the only way in.
    review_trust_proxy: bool = False
    #: Kafka security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
    security_protocol: str = "PLAINTEXT"
    #: SASL mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) when SASL is used.
    sasl_mechanism: str = "PLAIN"
    #: SASL user name when SASL is used.
    sasl_username: str = ""
    #: SASL password (keep it in a secret store, not in the TOML file).
    #: Wrapped in ``Secret`` on load, so it never shows in a repr or a log line.
    sasl_password: str = Secret("")
    #: CA bundle for SSL connections to the broker.
    ssl_cafile: str = ""
    #: Redact secrets (API keys, tokens, passwords) from stored evidence.
    redact: bool = True
    #: Replication factor of the topics the worker and ``monitor produce`` create.
    replication: int = 1
    #: Confirm changelog end offsets by fetching (a workaround for the Tansu test broker, whose
    #: ListOffsets under-reports); leave off against Apache Kafka. See monitor/stream/compat.py.
    end_offsets_by_fetch: bool = False

    def __post_init__(self) -> None:
        # Raised here, msgspec reports it as a validation error naming the setting.
        if self.window < 1:
            raise ValueError(f"window must be at least 1, not {self.window}")
        parse_ignored_tools(self.ignored_tools)
        parse_ignored_arguments(self.ignored_arguments)

    def detect_config(self) -> DetectConfig:
        names, polls = parse_ignored_tools(self.ignored_tools)
        return DetectConfig(
            window=self.window,
            ignored_tools=names,
            ignored_calls=polls,
            ignored_arguments=parse_ignored_arguments(self.ignored_arguments),
            restate_threshold=self.restate_threshold,
            survival=self.survival,
            semantic=self.semantic,
            redact=self.redact,
            reorder_turns=self.reorder_turns,
            idle_expiry_s=self.idle_expiry_s,
        )

    def public(self) -> dict[str, Any]:
        """Settings safe to log or print: secrets masked."""
        out: dict[str, Any] = {}
        for name in self.__struct_fields__:
            value = getattr(self, name)
            out[name] = repr(value) if isinstance(value, Secret) else value
        out["db_url"] = mask_url(self.db_url)
        return out


def mask_url(url: str) -> str:
    """A database URL with its password replaced by ``***`` (for logs and messages)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is still shown, without anything after "//"
        return url.split("//", 1)[0] + "//***"


def _coerce(name: str, raw: str) -> Any:
    field_type = Settings.__annotations__[name]
    if "tuple" in str(field_type):
        return tuple(x.strip() for x in raw.split(",") if x.strip())
    if "None" in str(field_type) and raw.strip().lower() in ("", "none", "null"):
        return None  # an optional setting left unset
    return raw


def _read_file(path: Path) -> dict[str, Any]:
    """The TOML file's settings; a key that names no setting is an error (a typo would
    otherwise leave the default in force without a word)."""
    import difflib

    try:
        with open(path, "rb") as fh:
            values = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"configuration file {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"configuration file {path} is not valid TOML: {exc}") from None
    known = Settings.__struct_fields__
    for key in values:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"unknown setting {key!r} in {path}{hint}; the settings are listed in "
                "deploy/README.md"
            )
    return values


def load_settings(
    environ: Mapping[str, str] | None = None, config_file: str | Path | None = None
) -> Settings:
    """Defaults, then the TOML file (``MONITOR_CONFIG`` or ``config_file``), then env vars."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = config_file or environ.get(ENV_PREFIX + "CONFIG")
    if path:
        values.update(_read_file(Path(path)))
    for name in Settings.__struct_fields__:
        raw = environ.get(ENV_PREFIX + name.upper())
        if raw is not None:
            values[name] = _coerce(name, raw)
    try:
        settings = msgspec.convert(values, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise ValueError(f"invalid configuration: {exc}") from None
    return msgspec.structs.replace(
        settings,
        sasl_password=Secret(settings.sasl_password),
        review_tokens=Secret(settings.review_tokens),
    )
