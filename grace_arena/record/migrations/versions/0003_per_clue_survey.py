"""per-clue survey: surveys, their participants and every answer after every clue

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 03:00:39.062315
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "survey",
        sa.Column("code", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("packet_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("title", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("code"),
    )
    with op.batch_alter_table("survey", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_survey_packet_id"), ["packet_id"], unique=False)

    op.create_table(
        "survey_participant",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("survey_code", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("token_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["survey_code"],
            ["survey.code"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("survey_participant", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_survey_participant_survey_code"), ["survey_code"], unique=False
        )

    op.create_table(
        "survey_step",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("participant_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("packet_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("tossup_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("word_index", sa.Integer(), nullable=False),
        sa.Column("guess", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("would_buzz", sa.Boolean(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("judge_directive", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=True),
        sa.Column("client_latency_s", sa.Float(), nullable=True),
        sa.Column("revisions", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("updated_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["participant_id"],
            ["survey_participant.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint(
            "participant_id", "packet_id", "tossup_id", "step", name="uq_survey_step"
        ),
    )
    with op.batch_alter_table("survey_step", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_survey_step_participant_id"), ["participant_id"], unique=False
        )
        batch_op.create_index("ix_survey_step_question", ["packet_id", "tossup_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("survey_step", schema=None) as batch_op:
        batch_op.drop_index("ix_survey_step_question")
        batch_op.drop_index(batch_op.f("ix_survey_step_participant_id"))

    op.drop_table("survey_step")
    with op.batch_alter_table("survey_participant", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_survey_participant_survey_code"))

    op.drop_table("survey_participant")
    with op.batch_alter_table("survey", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_survey_packet_id"))

    op.drop_table("survey")
