"""Table definitions. Alembic migrations in ``migrations/`` are the only way these are created."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

#: Stable constraint names, so later migrations can refer to them and upserts can target them.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JSONType = JSON().with_variant(JSONB(), "postgresql")
#: For columns where "unknown" must be SQL NULL, not JSON ``null`` (so COALESCE and IS NULL
#: see it): provenance and review history, absent on rows written before they existed.
OptionalJSON = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
#: SQLite only auto-increments INTEGER PRIMARY KEY; Postgres gets a 64-bit identity.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class SessionRow(Base):
    """A session that raised at least one flag or reported an incident, with absolute counters."""

    __tablename__ = "sessions"

    session_id: Mapped[str] = mapped_column(String(256), primary_key=True)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    first_flagged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_flagged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    turns: Mapped[int] = mapped_column(Integer, default=0)
    events: Mapped[int] = mapped_column(Integer, default=0)
    tool_calls: Mapped[int] = mapped_column(Integer, default=0)
    user_messages: Mapped[int] = mapped_column(Integer, default=0)
    compactions: Mapped[int] = mapped_column(Integer, default=0)
    repeat_flags: Mapped[int] = mapped_column(Integer, default=0)
    restate_flags: Mapped[int] = mapped_column(Integer, default=0)
    #: Restatement flags with a compaction between the two turns (the primary tier).
    restate_spanning: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: User messages sent again right after an interrupt (never flagged).
    retries: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Survival-check flags, and the items checked at compactions: compactor -> class ->
    #: verdict -> items (``monitor report`` sums them); the ledger's live items (drafts).
    dropped_flags: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    inverted_flags: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    survival: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    items: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    #: Compactions by compactor version (a session may change version midway); NULL for
    #: rows written before it was kept, which ``monitor report`` counts under ``compactor``.
    compactions_by: Mapped[dict[str, int] | None] = mapped_column(JSONType)
    incident: Mapped[bool] = mapped_column(Boolean, default=False)
    compactor: Mapped[str | None] = mapped_column(String(128))
    agent: Mapped[str | None] = mapped_column(String(128))
    attrs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    #: Spans of the session's input (``monitor.provenance``); NULL for rows written before.
    sources: Mapped[list[dict[str, Any]] | None] = mapped_column(OptionalJSON)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        Index("ix_sessions_first_flagged_at", "first_flagged_at"),
        Index("ix_sessions_last_flagged_at", "last_flagged_at"),
    )


class FlagRow(Base):
    """One flag. Unique on (session, signal, turn, key): re-processing inserts nothing new."""

    __tablename__ = "flags"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(256))
    signal: Mapped[str] = mapped_column(String(32))
    turn: Mapped[int] = mapped_column(BigInteger)
    original_turn: Mapped[int] = mapped_column(BigInteger)
    compaction_turn: Mapped[int | None] = mapped_column(BigInteger)
    key: Mapped[str] = mapped_column(String(64))
    event_id: Mapped[str] = mapped_column(String(256))
    ts: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    compactor: Mapped[str | None] = mapped_column(String(128))
    evidence: Mapped[dict[str, Any]] = mapped_column(JSONType)
    #: Where the flagged event was read (``monitor.provenance``); NULL for rows written before.
    source: Mapped[dict[str, Any] | None] = mapped_column(OptionalJSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (
        UniqueConstraint("session_id", "signal", "turn", "key"),
        Index("ix_flags_ts", "ts"),
        Index("ix_flags_signal_ts", "signal", "ts"),
    )


class IntakeItem(Base):
    """A flagged session sampled into the fixture-intake queue. A session enters it at most once."""

    __tablename__ = "intake_items"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    week: Mapped[str] = mapped_column(String(10))
    session_id: Mapped[str] = mapped_column(String(256), unique=True)
    score: Mapped[float] = mapped_column(Float)
    reason: Mapped[dict[str, Any]] = mapped_column(JSONType)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    claimed_by: Mapped[str | None] = mapped_column(String(128))
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    resolved_by: Mapped[str | None] = mapped_column(String(128))
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    note: Mapped[str | None] = mapped_column(Text)
    draft: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    #: Claims, reopenings and resolutions, oldest first (``store.intake``).
    history: Mapped[list[dict[str, Any]] | None] = mapped_column(OptionalJSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())

    __table_args__ = (
        Index("ix_intake_items_week", "week"),
        Index("ix_intake_items_status_id", "status", "id"),
    )


class TranscriptRow(Base):
    """An intake item's session events, captured (redacted, capped) when it was sampled, so the
    review page has the conversation after the source file or topic is gone.

    ``item_id`` (here and in ``intake_actions``) names an ``intake_items`` row without a foreign
    key: the application never deletes items, and maintenance that empties the queue with
    ``TRUNCATE intake_items`` should not have to know about the review tables.
    """

    __tablename__ = "intake_transcripts"

    item_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    session_id: Mapped[str] = mapped_column(String(256))
    #: captured | partial | gone | not_recorded | unavailable (see ``monitor/capture.py``)
    status: Mapped[str] = mapped_column(String(16))
    events: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    omitted: Mapped[int] = mapped_column(Integer, default=0)
    sources: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    notes: Mapped[list[str]] = mapped_column(JSONType, default=list)
    captured_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewActionRow(Base):
    """One reviewer action on an intake item, in order: the record of who did what, and the
    source the review state (each candidate's verdict and edits) is folded from."""

    __tablename__ = "intake_actions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    item_id: Mapped[int] = mapped_column(BigId)
    reviewer: Mapped[str] = mapped_column(String(128))
    action: Mapped[str] = mapped_column(String(16))
    entry_id: Mapped[str | None] = mapped_column(String(128))
    detail: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    #: True when the action overrode another reviewer's claim.
    override: Mapped[bool] = mapped_column(Boolean, default=False)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_intake_actions_item_id_id", "item_id", "id"),)
