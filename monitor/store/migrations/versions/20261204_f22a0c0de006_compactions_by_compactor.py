"""Compactions by compactor version: ``sessions.compactions_by``.

``monitor report`` divides the downstream flags of each compactor version by its compactions.
A session that changed version midway (a rollout reaching running sessions) had all of its
compactions counted under its latest version; this column counts each under its own. Rows
written before stay NULL and are counted as before, under ``sessions.compactor``.

Revision ID: f22a0c0de006
Revises: e17a0c0de005
Create Date: 2026-12-04 01:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "f22a0c0de006"
down_revision: str | Sequence[str] | None = "e17a0c0de005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("compactions_by", _JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("compactions_by")
