"""Review page: captured transcripts of intake items, and the reviewers' actions.

Revision ID: c18a0c0de002
Revises: b19a0c0de001
Create Date: 2026-12-03 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "c18a0c0de002"
down_revision: str | Sequence[str] | None = "b19a0c0de001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "intake_transcripts",
        sa.Column("item_id", _ID, autoincrement=False, nullable=False),
        sa.Column("session_id", sa.String(length=256), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("events", _JSON, nullable=False),
        sa.Column("omitted", sa.Integer(), nullable=False),
        sa.Column("sources", _JSON, nullable=True),
        sa.Column("notes", _JSON, nullable=False),
        sa.Column("captured_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("item_id", name=op.f("pk_intake_transcripts")),
    )
    op.create_table(
        "intake_actions",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("item_id", _ID, nullable=False),
        sa.Column("reviewer", sa.String(length=128), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("entry_id", sa.String(length=128), nullable=True),
        sa.Column("detail", _JSON, nullable=False),
        sa.Column("override", sa.Boolean(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_intake_actions")),
    )
    with op.batch_alter_table("intake_actions", schema=None) as batch_op:
        batch_op.create_index("ix_intake_actions_item_id_id", ["item_id", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("intake_actions", schema=None) as batch_op:
        batch_op.drop_index("ix_intake_actions_item_id_id")
    op.drop_table("intake_actions")
    op.drop_table("intake_transcripts")
