"""an event's phases and pools; forfeits, carryover and entered results of its games

``event_phase`` and ``event_pool`` hold a tournament's structure; a round and a game name
their phase (and a game its pool). A game may be a forfeit (the team that forfeited), carry
over into later phases, or hold a result entered by its final score. An older event has no
phase: it reads as one.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "event_phase",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "phase_id"),
    )
    op.create_table(
        "event_pool",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("phase_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("pool_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("teams", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "phase_id", "pool_id"),
    )
    with op.batch_alter_table("event_round", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("phase_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
    with op.batch_alter_table("event_game", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("phase_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.add_column(
            sa.Column("pool_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.add_column(
            sa.Column("forfeit", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.add_column(sa.Column("carryover", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("result", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("event_game", schema=None) as batch_op:
        for column in ("result", "carryover", "forfeit", "pool_id", "phase_id"):
            batch_op.drop_column(column)
    with op.batch_alter_table("event_round", schema=None) as batch_op:
        batch_op.drop_column("phase_id")
    op.drop_table("event_pool")
    op.drop_table("event_phase")
