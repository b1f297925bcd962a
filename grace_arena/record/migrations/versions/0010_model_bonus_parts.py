"""a model's answers to bonus parts

``model_bonus_part`` holds, per model, packet, bonus and part, the model's guess with its
confidences and the judge's verdict, as ``model_step`` does for the clue prefixes of tossups.
An older record has none: precompute fills them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 10:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "model_bonus_part",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("packet_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("bonus_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("guess", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("confidence_logit", sa.Float(), nullable=True),
        sa.Column("confidence_logit_geo", sa.Float(), nullable=True),
        sa.Column("sequence_prob", sa.Float(), nullable=True),
        sa.Column("confidence_verbal", sa.Float(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=True),
        sa.Column("judge_directive", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
        sa.Column("confident", sa.Boolean(), nullable=True),
        sa.Column("latency_s", sa.Float(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("exemplars", sa.JSON(), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("model", "packet_id", "bonus_id", "part", name="uq_model_bonus_part"),
    )
    with op.batch_alter_table("model_bonus_part", schema=None) as batch_op:
        batch_op.create_index("ix_model_bonus_part_bonus", ["packet_id", "bonus_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("model_bonus_part", schema=None) as batch_op:
        batch_op.drop_index("ix_model_bonus_part_bonus")
    op.drop_table("model_bonus_part")
