"""leases on the database's clock, fenced by generation; one player per name in an event's
team; the server processes sharing the record; the credit a compensated press was given

Match leases gain a generation (each take-over is a new one), a released flag (a clean stop
frees a match at once), the holder's own clock at its last renewal (``served_until``: a running
answer clock resumes with what it had left) and what identifies the holder for certain on its
system. Leases of an older record keep their holder and renewal; their generation is 1.

Event players gain ``name_key`` (the name case-folded, spaces collapsed), unique in a team: a
name is one player whichever process or phone joins it. An older record may hold two players
of one name in a team (two joins at once made two): the first keeps the name's key, the others
get a key of their own (the name and their player id), so that nothing is merged or lost; a
new join of that name finds the first.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27 09:00:00.000000
"""

import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _name_key(name: str) -> str:
    # as grace_arena.record.store.player_name_key at the time of this migration
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())[:200]


def upgrade() -> None:
    with op.batch_alter_table("match_lease", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("proc", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True)
        )
        batch_op.add_column(
            sa.Column("generation", sa.Integer(), nullable=False, server_default="1")
        )
        batch_op.add_column(
            sa.Column("released", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("served_until", sa.Float(), nullable=True))
    with op.batch_alter_table("match_lease", schema=None) as batch_op:
        batch_op.alter_column("generation", server_default=None)
        batch_op.alter_column("released", server_default=None)

    op.create_table(
        "server_process",
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("url", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=True),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("renewed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("holder"),
    )

    with op.batch_alter_table("buzz", schema=None) as batch_op:
        batch_op.add_column(sa.Column("credit", sa.Float(), nullable=True))

    with op.batch_alter_table("event_player", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("name_key", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True)
        )
    players = sa.table(
        "event_player",
        sa.column("event_id", sa.Integer()),
        sa.column("player_id", sa.String()),
        sa.column("team_id", sa.String()),
        sa.column("name", sa.String()),
        sa.column("name_key", sa.String()),
    )
    bind = op.get_bind()
    taken: set[tuple[int, str, str]] = set()
    rows = bind.execute(
        sa.select(
            players.c.event_id, players.c.player_id, players.c.team_id, players.c.name
        ).order_by(players.c.event_id, players.c.team_id, players.c.player_id)
    ).all()
    for event_id, player_id, team_id, name in rows:
        key = _name_key(name)
        if (event_id, team_id, key) in taken:
            key = f"{key[: 200 - len(player_id) - 1]}#{player_id}"
        taken.add((event_id, team_id, key))
        bind.execute(
            players.update()
            .where(players.c.event_id == event_id, players.c.player_id == player_id)
            .values(name_key=key)
        )
    with op.batch_alter_table("event_player", schema=None) as batch_op:
        batch_op.alter_column(
            "name_key",
            existing_type=sqlmodel.sql.sqltypes.AutoString(length=200),
            nullable=False,
        )
        batch_op.create_unique_constraint(
            "uq_event_player_name", ["event_id", "team_id", "name_key"]
        )


def downgrade() -> None:
    with op.batch_alter_table("event_player", schema=None) as batch_op:
        batch_op.drop_constraint("uq_event_player_name", type_="unique")
        batch_op.drop_column("name_key")
    with op.batch_alter_table("buzz", schema=None) as batch_op:
        batch_op.drop_column("credit")
    op.drop_table("server_process")
    with op.batch_alter_table("match_lease", schema=None) as batch_op:
        batch_op.drop_column("served_until")
        batch_op.drop_column("released")
        batch_op.drop_column("generation")
        batch_op.drop_column("proc")
