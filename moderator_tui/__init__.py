"""The moderator's terminal UI (Textual): set up a match, run it live, see the summary.

It talks to a running game server only through the wire protocol
(``grace_arena.protocol``): the HTTP API to create a match, and one websocket as the
``moderator`` role. ``make_tui(...)`` builds the app; ``grace-arena moderate`` and
``grace-arena demo`` run it.
"""

from moderator_tui.app import ModeratorApp, ServerTarget, make_tui

__all__ = ["ModeratorApp", "ServerTarget", "make_tui"]
