"""refused presses counted: a refused buzz's row counts the presses that repeated it

A player's later presses that repeat a refusal of the same tossup (same reason, same holder of
the floor) are no longer stored as events and buzz rows of their own: the first refusal's row
counts them (``repeats``) and keeps the wall clock at the last one (``last_repeat_wall``). An
older record's buzzes repeated nothing: 0 and none.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 23:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("buzz", schema=None) as batch_op:
        batch_op.add_column(sa.Column("repeats", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("last_repeat_wall", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("buzz", schema=None) as batch_op:
        batch_op.drop_column("last_repeat_wall")
        batch_op.drop_column("repeats")
