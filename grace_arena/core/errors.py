"""The one domain error of the match engine."""

from __future__ import annotations


class IllegalCommand(ValueError):
    """A command that the match cannot take in its current state.

    The message says what was asked, why it is not allowed now, and what is allowed instead;
    the server turns it into an ``error`` reply and the TUI shows it. Nothing is recorded.
    """
