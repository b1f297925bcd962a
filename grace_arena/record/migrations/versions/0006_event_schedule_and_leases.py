"""event schedules and match leases: rooms, rounds and scheduled matches of an event; which
server process serves a match

Registered teams get a place in the order of registration and, for model teams, their buzz
policy. Nothing of an older record changes meaning: its events have no rooms, rounds or
schedule, and no match is leased until a server opens it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("event_team", schema=None) as batch_op:
        batch_op.add_column(sa.Column("threshold", sa.Float(), nullable=True))
        batch_op.add_column(
            sa.Column("confidence", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True)
        )
        batch_op.add_column(sa.Column("position", sa.Integer(), nullable=False, server_default="0"))
    op.create_table(
        "event_room",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("room_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("join_code", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("moderator_tokens", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "room_id"),
        sa.UniqueConstraint("join_code"),
    )
    op.create_table(
        "event_round",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("packet_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("tossup_ids", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "number"),
    )
    op.create_table(
        "event_game",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("room_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("teams", sa.JSON(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.ForeignKeyConstraint(["match_id"], ["match.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id"),
    )
    op.create_index(
        "ix_event_game_room", "event_game", ["event_id", "room_id", "round", "slot"], unique=False
    )
    op.create_table(
        "match_lease",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("host", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("url", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True),
        sa.Column("acquired_at", sa.Float(), nullable=False),
        sa.Column("renewed_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["match.id"]),
        sa.PrimaryKeyConstraint("match_id"),
    )


def downgrade() -> None:
    op.drop_table("match_lease")
    op.drop_index("ix_event_game_room", table_name="event_game")
    op.drop_table("event_game")
    op.drop_table("event_round")
    op.drop_table("event_room")
    with op.batch_alter_table("event_team", schema=None) as batch_op:
        batch_op.drop_column("position")
        batch_op.drop_column("confidence")
        batch_op.drop_column("threshold")
