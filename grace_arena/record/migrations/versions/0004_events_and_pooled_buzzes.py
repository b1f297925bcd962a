"""events: matches grouped into events, registered teams and players, pooled buzzpoints

Every existing match gets an event of its own (``match-<id>``, titled like the match), and
its teams and players are registered in that event, so that a record written before events
existed reads exactly as before.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 01:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "arena_event",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "event_team",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("team_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "team_id"),
    )
    op.create_table(
        "event_player",
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("team_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("event_id", "player_id"),
    )
    op.create_table(
        "event_import",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("source_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("packet_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("imported_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id", "source", "source_key", name="uq_event_import"),
    )
    with op.batch_alter_table("event_import", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_event_import_event_id"), ["event_id"], unique=False)
    op.create_table(
        "pooled_buzz",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("import_id", sa.Integer(), nullable=False),
        sa.Column("packet_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("tossup_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("team_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("team_kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("word_index", sa.Integer(), nullable=False),
        sa.Column("clue_index", sa.Integer(), nullable=False),
        sa.Column("fraction_revealed", sa.Float(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("source_word_index", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["event_id"], ["arena_event.id"]),
        sa.ForeignKeyConstraint(["import_id"], ["event_import.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("pooled_buzz", schema=None) as batch_op:
        batch_op.create_index(
            "ix_pooled_buzz_question", ["event_id", "packet_id", "tossup_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_pooled_buzz_import_id"), ["import_id"], unique=False)

    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(sa.Column("event_id", sa.Integer(), nullable=True))

    # every match already in the record gets an event of its own, with its teams and players
    for statement in (
        "INSERT INTO arena_event (name, title, created_at, meta) "
        "SELECT 'match-' || id, title, created_at, '{\"created_for_match\": true}' FROM match",
        "UPDATE match SET event_id = "
        "(SELECT e.id FROM arena_event e WHERE e.name = 'match-' || match.id)",
        "INSERT INTO event_team (event_id, team_id, name, kind, model) "
        "SELECT m.event_id, t.team_id, t.name, t.kind, t.model "
        "FROM team t JOIN match m ON m.id = t.match_id",
        "INSERT INTO event_player (event_id, player_id, team_id, name, kind) "
        "SELECT m.event_id, p.player_id, p.team_id, p.name, p.kind "
        "FROM player p JOIN match m ON m.id = p.match_id",
    ):
        op.execute(sa.text(statement))

    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.alter_column("event_id", existing_type=sa.Integer(), nullable=False)
        batch_op.create_index(batch_op.f("ix_match_event_id"), ["event_id"], unique=False)
        batch_op.create_foreign_key("fk_match_event_id", "arena_event", ["event_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_constraint("fk_match_event_id", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_match_event_id"))
        batch_op.drop_column("event_id")
    with op.batch_alter_table("pooled_buzz", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pooled_buzz_import_id"))
        batch_op.drop_index("ix_pooled_buzz_question")
    op.drop_table("pooled_buzz")
    with op.batch_alter_table("event_import", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_event_import_event_id"))
    op.drop_table("event_import")
    op.drop_table("event_player")
    op.drop_table("event_team")
    op.drop_table("arena_event")
