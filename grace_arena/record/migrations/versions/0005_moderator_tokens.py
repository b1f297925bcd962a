"""moderator tokens: the SHA-256 of each moderator token issued for a match

Tokens are random per match; the record keeps only their hashes, so a restarted server still
knows the moderator who was running the match. Matches of older records get a token when a
server first opens them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 16:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.add_column(sa.Column("moderator_tokens", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("match", schema=None) as batch_op:
        batch_op.drop_column("moderator_tokens")
