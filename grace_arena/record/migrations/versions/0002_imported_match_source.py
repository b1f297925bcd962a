"""imported match source

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 02:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True)
        )
        batch_op.add_column(
            sa.Column("source_key", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.add_column(sa.Column("source_meta", sa.JSON(), nullable=True))
        batch_op.create_index(batch_op.f("ix_match_source_key"), ["source_key"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_match_source_key"))
        batch_op.drop_column("source_meta")
        batch_op.drop_column("source_key")
        batch_op.drop_column("source")
