"""Provenance of flags and sessions, and the review history of intake items.

``flags.source``: where the flagged event was read (file and line, or topic, partition and
offset); ``sessions.sources``: spans of the session's input (at most 16). Both stay NULL for
rows written before this revision. ``intake_items.history``: every claim, reopen and
resolution of an item, with who did it and whether it overrode another reviewer's claim.

Revision ID: b19a0c0de001
Revises: 2ce848fdcafa
Create Date: 2026-12-03 17:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "b19a0c0de001"
down_revision: str | Sequence[str] | None = "2ce848fdcafa"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("flags", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source", JSON, nullable=True))
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sources", JSON, nullable=True))
    with op.batch_alter_table("intake_items", schema=None) as batch_op:
        batch_op.add_column(sa.Column("history", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("intake_items", schema=None) as batch_op:
        batch_op.drop_column("history")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("sources")
    with op.batch_alter_table("flags", schema=None) as batch_op:
        batch_op.drop_column("source")
