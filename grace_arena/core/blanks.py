"""Characters that show nothing by themselves: the format characters (Unicode category Cf:
zero-width spaces and joiners, the soft hyphen, bidirectional marks, tags...), the rest of
Unicode's default-ignorable code points (the combining grapheme joiner, variation selectors,
Hangul and Khmer fillers, Mongolian selectors, unassigned ones), and the blanks that are not
(the blank Braille pattern, the Khitan filler).

One list for the two places that need it: a name must have something visible in it
(:mod:`grace_arena.protocol`), and two names that differ only by such characters are one
player's (:func:`grace_arena.record.store.player_name_key`).
"""

from __future__ import annotations

import re
import unicodedata

_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U00016fe4\U000e0000-\U000e0fff]"
)


def shows_nothing(char: str) -> bool:
    """Whether ``char`` (one character) is drawn as nothing by itself."""
    return unicodedata.category(char) == "Cf" or _IGNORABLE.match(char) is not None
