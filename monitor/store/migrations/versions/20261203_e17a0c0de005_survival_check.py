"""Survival check: per-session counts of items checked at compactions, and the ledger items.

``sessions.dropped_flags`` / ``inverted_flags`` count the survival-check flags;
``sessions.survival`` holds compactor -> class -> verdict -> items (what ``monitor report``
sums); ``sessions.items`` the ledger's live items, which fixture drafts propose as what must
survive. Rows written before stay zero / NULL.

Revision ID: e17a0c0de005
Revises: d21a0c0de004
Create Date: 2026-12-03 20:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "e17a0c0de005"
down_revision: str | Sequence[str] | None = "d21a0c0de004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        for name in ("dropped_flags", "inverted_flags"):
            batch_op.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("survival", _JSON, nullable=True))
        batch_op.add_column(sa.Column("items", _JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        for name in ("items", "survival", "inverted_flags", "dropped_flags"):
            batch_op.drop_column(name)
