"""event players registered by the organiser, claimed with a code, removed

``event_player`` gains three columns: ``registered_by`` ("organiser" for a player of the
event's roster, given at ``event create`` or added later; None for one who joined from a phone
by typing a name), ``claim_sha256`` (SHA-256 of the roster player's claim code: a phone takes
that name only with the code) and ``removed_at`` (when the organiser or the TD removed the
player: the row stays, as matches name the player, but the name is free and the player's
token opens nothing). An older record's players keep None everywhere: all of them joined, or
were registered, without codes, and are claimed by their name as before.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 12:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("event_player", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("registered_by", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True)
        )
        batch_op.add_column(
            sa.Column("claim_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.add_column(
            sa.Column("removed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("event_player", schema=None) as batch_op:
        batch_op.drop_column("removed_at")
        batch_op.drop_column("claim_sha256")
        batch_op.drop_column("registered_by")
