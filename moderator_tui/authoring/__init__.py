"""Writing tossups against the model player (``grace-arena write``; GRACE §3.1, figure 2).

The writer edits a tossup's sentences and answer line; after every edit the model guesses the
changed prefixes and the screen shows, beside each sentence, its guess, both confidences,
whether the judge accepts it, and where it would buzz. ``make_authoring_app(...)`` builds it.
"""

from moderator_tui.authoring.app import AuthoringApp, AuthoringScreen, make_authoring_app

__all__ = ["AuthoringApp", "AuthoringScreen", "make_authoring_app"]
