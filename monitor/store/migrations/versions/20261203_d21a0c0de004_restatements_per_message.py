"""One restatement flag per user message; sessions count spanning restatements and retries.

Stores written before this revision hold one ``restated_instruction`` row per restated
instruction, so one message could hold dozens. Each (session, turn) group becomes one row: the
best-scoring row is kept, its key becomes the message's (``text_key("message\\0" + event_id)``,
as ``detect.step`` now writes it, so re-processing the same input adds nothing), and its evidence
lists every instruction the group restated, those spanning a compaction first. The other rows of
the group are deleted. Sessions' ``restate_flags`` are recounted per message, and the new
``restate_spanning`` counts those with a compaction between.

Revision ID: d21a0c0de004
Revises: c18a0c0de002
Create Date: 2026-12-03 19:00:00
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "d21a0c0de004"
down_revision: str | Sequence[str] | None = "c18a0c0de002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Restated instructions listed per message (``restatements.MAX_LISTED``, frozen here: a
#: migration must not change when the code does).
_LISTED = 5


def _key(event_id: str) -> str:
    text = "message\x00" + event_id
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("restate_spanning", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("retries", sa.Integer(), nullable=False, server_default="0"))
    bind = op.get_bind()
    flags = sa.table(
        "flags",
        sa.column("id", sa.BigInteger()),
        sa.column("session_id", sa.String()),
        sa.column("signal", sa.String()),
        sa.column("turn", sa.BigInteger()),
        sa.column("original_turn", sa.BigInteger()),
        sa.column("compaction_turn", sa.BigInteger()),
        sa.column("key", sa.String()),
        sa.column("event_id", sa.String()),
        sa.column("evidence", sa.JSON()),
    )
    rows = (
        bind.execute(
            sa.select(flags).where(flags.c.signal == "restated_instruction").order_by(flags.c.id)
        )
        .mappings()
        .all()
    )
    groups: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for r in rows:
        groups[(r["session_id"], r["turn"])].append(r)
    for members in groups.values():
        ranked = sorted(
            members,
            key=lambda r: (
                r["compaction_turn"] is None,
                -float((r["evidence"] or {}).get("score", 0.0)),
                r["original_turn"],
            ),
        )
        top = ranked[0]
        evidence = dict(top["evidence"] or {})
        evidence["restated"] = [
            {
                "earlier": (r["evidence"] or {}).get("earlier", ""),
                "original_turn": r["original_turn"],
                "later": (r["evidence"] or {}).get("later", ""),
                "score": (r["evidence"] or {}).get("score", 0.0),
                "spans_compaction": r["compaction_turn"] is not None,
            }
            for r in ranked[:_LISTED]
        ]
        evidence["restated_count"] = len(ranked)
        evidence["tier"] = "spanning" if top["compaction_turn"] is not None else "unspanned"
        bind.execute(
            flags.update()
            .where(flags.c.id == top["id"])
            .values(key=_key(top["event_id"]), evidence=evidence)
        )
        others = [r["id"] for r in ranked[1:]]
        if others:
            bind.execute(flags.delete().where(flags.c.id.in_(others)))
    sessions = sa.table(
        "sessions",
        sa.column("session_id", sa.String()),
        sa.column("restate_flags", sa.Integer()),
        sa.column("restate_spanning", sa.Integer()),
    )
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (sid, _turn), members in groups.items():
        counts[sid][0] += 1
        counts[sid][1] += any(r["compaction_turn"] is not None for r in members)
    for sid, (total, spanning) in counts.items():
        bind.execute(
            sessions.update()
            .where(sessions.c.session_id == sid)
            .values(restate_flags=total, restate_spanning=spanning)
        )


def downgrade() -> None:
    # The merged rows stay merged: the per-instruction rows they came from are gone.
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("retries")
        batch_op.drop_column("restate_spanning")
