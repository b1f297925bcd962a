"""a player of an event in play on one server process at a time

``player_claim`` says which process has a player in play now (renewed while the player's
connection is open): a token or a name in play on one process is in use on every other.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "player_claim",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("url", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True),
        sa.Column("proc", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("renewed_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "player_id"),
    )


def downgrade() -> None:
    op.drop_table("player_claim")
