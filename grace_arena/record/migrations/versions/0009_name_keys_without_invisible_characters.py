"""event players' name keys leave out the characters that show nothing

A name's key (``event_player.name_key``: what makes two names one player of a team) now also
leaves out Unicode's default-ignorable characters and a few blanks (zero-width spaces and
joiners, the soft hyphen, variation selectors, fillers, the blank Braille pattern): names that
look the same on every screen are one player. The keys of an older record are computed again;
a player whose new key another player of the team has already (two players that looked the
same) gets a key of its own (the key and its player id), so that nothing is merged; a new join
of that name finds the first. Downgrading keeps the keys as they are.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 05:20:00.000000
"""

import re
import unicodedata
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# as grace_arena.record.store.player_name_key at the time of this migration
_SHOWS_NOTHING = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U00016fe4\U000e0000-\U000e0fff]"
)


def _name_key(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return " ".join(_SHOWS_NOTHING.sub("", text).split())[:200]


def upgrade() -> None:
    players = sa.table(
        "event_player",
        sa.column("event_id", sa.Integer()),
        sa.column("player_id", sa.String()),
        sa.column("team_id", sa.String()),
        sa.column("name", sa.String()),
        sa.column("name_key", sa.String()),
    )
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(
            players.c.event_id, players.c.player_id, players.c.team_id, players.c.name,
            players.c.name_key,
        ).order_by(players.c.event_id, players.c.team_id, players.c.player_id)
    ).all()  # fmt: skip

    # keys that stay as they are first (a key of its own, "key#id", stays too)
    def kept(player_id: str, name: str, key: str) -> bool:
        return key == _name_key(name) or key.endswith(f"#{player_id}")

    taken = {(e, t, key) for e, p, t, name, key in rows if kept(p, name, key)}
    for event_id, player_id, team_id, name, key in rows:
        if kept(player_id, name, key):
            continue
        new = _name_key(name)
        if (event_id, team_id, new) in taken:
            new = f"{new[: 200 - len(player_id) - 1]}#{player_id}"
        taken.add((event_id, team_id, new))
        bind.execute(
            players.update()
            .where(players.c.event_id == event_id, players.c.player_id == player_id)
            .values(name_key=new)
        )


def downgrade() -> None:
    pass  # the keys stay: a key without invisible characters finds the same names as before
