"""The reader's voice: each tossup spoken by espeak-ng, with the moment each word begins.

espeak-ng (Debian's ``espeak-ng`` package, through its library ``libespeak-ng.so.1``) speaks
the text as the room hears it: every word shown, with its pronunciation guide spoken after it
(a guide is heard, never shown), and without the power mark. The library's own word events
(``espeakEVENT_WORD``: where in the text a word starts, and at which millisecond of the audio)
give each shown word its onset; the room reveals word ``i`` at that onset of the audio the
display plays (``room.py``), so the word shown and the word heard are one.

Synthesis runs in a worker thread, one text at a time (the library keeps one global state),
and is cached per text. Where the library is missing, :func:`unavailable` says so in words and
the room reads at its pace instead.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import io
import re
import threading
import wave
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from grace_arena.core.commands import Reveal
from grace_arena.core.config import BonusSpec
from grace_arena.core.errors import IllegalCommand
from grace_arena.core.tokenize import POWER_MARK, Tokenized, tokenize
from grace_arena.protocol import VoiceCue

#: The command that installs the engine, for the message where it is missing.
INSTALL = "apt-get install espeak-ng"

# espeak-ng's speak_lib.h
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_RATE = 1


class _Id(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),  # 1-based, in characters
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),  # milliseconds from the start of the text
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _Id),
    ]


_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event)
)


@dataclass(frozen=True)
class Speech:
    """One text spoken: its audio (a WAV file) and, for each shown word, the millisecond of
    the audio at which it begins; ``end_ms``: when the last word has been said."""

    wav: bytes
    onsets_ms: tuple[int, ...]
    end_ms: int

    def word_at(self, ms: float) -> int:
        """The shown word being spoken ``ms`` into the audio (-1 before the first)."""
        heard = -1
        for i, onset in enumerate(self.onsets_ms):
            if onset > ms:
                break
            heard = i
        return heard


def reading_guides(tossup: Tokenized) -> dict[int, str]:
    """Word index -> what the text has between that word and the next one that is not a word
    (a pronunciation guide and the punctuation after it, a lone dash), for the moderator who
    reads aloud: ``Raskolnikov ("ras-KOHL-nee-kuff"), uses`` -> ``{0: '("ras-KOHL-nee-kuff"),'}``.
    The power mark is left out (the moderator's screen marks it from ``power_index``)."""
    out: dict[int, str] = {}
    words = tossup.words
    for i, word in enumerate(words):
        end = words[i + 1].start if i + 1 < len(words) else len(tossup.text)
        between = " ".join(tossup.text[word.end : end].replace(POWER_MARK, " ").split())
        if between:
            out[i] = between
    return out


def bonus_part_words(bonus: BonusSpec, part: int) -> tuple[list[str], dict[int, str]]:
    """What the voice says when part ``part`` of ``bonus`` is up (the lead-in before the
    first part): its words and their guides."""
    text = bonus.parts[part].text
    if part == 0 and bonus.leadin:
        text = f"{bonus.leadin} {text}"
    tokenized = tokenize(text)
    return [w.text for w in tokenized.words], reading_guides(tokenized)


_GUIDE_MARKS = re.compile(r"[()\[\]\"“”‘’']")


def spoken_text(words: list[str], guides: dict[int, str]) -> tuple[str, list[int]]:
    """The text the voice says and where each shown word starts in it: each word, then the
    pronunciation guide the packet gives after it (its brackets, quotes and syllable hyphens
    dropped: ``("ras-KOHL-nee-kuff"),`` is said ``ras KOHL nee kuff,``). The power mark is not
    in ``words`` nor ``guides`` (``arena.reading_guides`` leaves it out).

    >>> spoken_text(["Raskolnikov", "uses"], {0: '("ras-KOHL-nee-kuff"),'})
    ('Raskolnikov ras KOHL nee kuff, uses', [0, 31])
    """
    parts: list[str] = []
    starts: list[int] = []
    at = 0
    for i, word in enumerate(words):
        starts.append(at)
        piece = word
        guide = guides.get(i)
        if guide:
            said = " ".join(_GUIDE_MARKS.sub(" ", guide).replace("-", " ").split())
            said = re.sub(r"\s+([,.;:!?])", r"\1", said)
            if said:
                piece = f"{word} {said}"
        parts.append(piece)
        at += len(piece) + 1
    return " ".join(parts), starts


def onsets_of(starts: list[int], events: list[tuple[int, int]], end_ms: int) -> tuple[int, ...]:
    """Each shown word's onset from the engine's word events ``(char position, ms)``: the
    first event inside the word's stretch of the spoken text (its guide included). A shown
    word the engine said no word for (a lone dash) begins with the next word heard (or, the
    last, when the speech ends); onsets never go back.

    >>> onsets_of([0, 6, 8], [(0, 10), (6, 300), (12, 400)], 900)
    (10, 300, 400)
    >>> onsets_of([0, 4, 6], [(0, 0), (6, 200)], 500)
    (0, 200, 200)
    """
    n = len(starts)
    found: list[int | None] = [None] * n
    w = 0
    for pos, ms in sorted(events):
        while w + 1 < n and starts[w + 1] <= pos:
            w += 1
        if found[w] is None:
            found[w] = ms
    out: list[int] = [0] * n
    later = end_ms
    for i in range(n - 1, -1, -1):
        later = found[i] if found[i] is not None else later  # type: ignore[assignment]
        out[i] = later
    for i in range(1, n):  # never back in time
        out[i] = max(out[i], out[i - 1])
    return tuple(out)


class Engine:
    """espeak-ng's library, loaded once. Raises ``OSError`` where it is missing."""

    def __init__(self, voice: str = "en-us", wpm: int = 175) -> None:
        path = ctypes.util.find_library("espeak-ng")
        if path is None:
            raise OSError(f"espeak-ng is not installed ({INSTALL})")
        self._lib = ctypes.CDLL(path)
        self._lib.espeak_Initialize.restype = ctypes.c_int
        self._lib.espeak_Initialize.argtypes = [
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
        ]
        self._lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        self._lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self._lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.rate = self._lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 500, None, 0)
        if self.rate <= 0:
            raise OSError("espeak-ng could not start (its data files are missing?)")
        if self._lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise OSError(f"espeak-ng has no voice {voice!r}")
        self._lib.espeak_SetParameter(_RATE, wpm, 0)
        self._lock = threading.Lock()
        self._samples: list[bytes] = []
        self._events: list[tuple[int, int]] = []
        self._callback = _CALLBACK(self._heard)  # kept: the library holds a pointer to it
        self._lib.espeak_SetSynthCallback(self._callback)

    def _heard(self, wav, count: int, events) -> int:
        if count > 0 and wav:
            self._samples.append(ctypes.string_at(wav, count * 2))
        i = 0
        while events[i].type != _EVENT_LIST_TERMINATED:
            ev = events[i]
            if ev.type == _EVENT_WORD:
                self._events.append((ev.text_position - 1, ev.audio_position))
            i += 1
        return 0

    def say(self, words: list[str], guides: dict[int, str]) -> Speech:
        """Speak the shown ``words`` (with their ``guides``): the audio and each word's onset."""
        text, starts = spoken_text(words, guides)
        data = text.encode() + b"\0"
        with self._lock:
            self._samples, self._events = [], []
            self._lib.espeak_Synth(data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
            self._lib.espeak_Synchronize()
            samples, events = b"".join(self._samples), self._events
        end_ms = len(samples) // 2 * 1000 // self.rate
        buffer = io.BytesIO()
        with wave.open(buffer, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(self.rate)
            out.writeframes(samples)
        return Speech(buffer.getvalue(), onsets_of(starts, events, end_ms), end_ms)


_engine_lock = threading.Lock()


@lru_cache(maxsize=1)
def _engine() -> Engine | str:
    try:
        return Engine()
    except OSError as exc:
        return f"no voice: {exc}; the words are shown at the reading pace"


def unavailable() -> str | None:
    """Why the voice cannot speak here (in words), or None where it can."""
    with _engine_lock:
        engine = _engine()
    return engine if isinstance(engine, str) else None


@lru_cache(maxsize=512)
def _say(words: tuple[str, ...], guides: tuple[tuple[int, str], ...]) -> Speech:
    with _engine_lock:
        engine = _engine()
    if isinstance(engine, str):
        raise OSError(engine)
    return engine.say(list(words), dict(guides))


def speak(words: list[str], guides: dict[int, str]) -> Speech:
    """The speech of one question (cached: a text is synthesised once per process). Raises
    ``OSError`` (saying so) where espeak-ng is missing; blocking: call it in a worker thread."""
    return _say(tuple(words), tuple(sorted(guides.items())))


# -- the room's reading by the voice -----------------------------------------------------------

#: Seconds between a cue and the first word it says: the display's time to fetch and decode the
#: tossup's audio (the first cue of a tossup), or to start it again (a resume).
FIRST_LEAD = 0.6
RESUME_LEAD = 0.25


class Reader(Protocol):
    """What the voice's reading needs of its room (``room.Room``)."""

    @property
    def match(self) -> Any: ...

    words: dict[str, list[str]]
    guides: dict[str, dict[int, str]]
    #: Grows each time the reading stops (a buzz, a pause): a run of the voice is one value.
    reading_run: int

    def reading_now(self) -> bool: ...

    def cue(self, cue: VoiceCue) -> None: ...

    def voice_url(self, tossup_id: str) -> str: ...

    async def command(self, command: Reveal) -> Any: ...


async def speech_of(room: Reader, tossup_id: str) -> Speech:
    """The speech of tossup ``tossup_id`` (synthesised in a worker thread, once)."""
    words = room.words.get(tossup_id) or []
    return await asyncio.to_thread(speak, words, room.guides.get(tossup_id, {}))


async def read_aloud(room: Reader, *, first: bool) -> None:
    """Say the current tossup from the word after the last one shown, revealing each word at
    its onset in the audio the displays play (cued ``delay`` seconds ahead, the server's
    clock timing both), until the reading stops (a buzz, a pause), a word is shown by other
    means (the moderator's key) or the tossup is read: then return (the room cues again when
    it reads again, from where it stopped)."""
    game = room.match.game
    tossup_id = game.tossup_id
    if tossup_id is None:
        return
    speech = await speech_of(room, tossup_id)
    if not room.reading_now() or room.match.game.tossup_id != tossup_id:
        return
    n = len(speech.onsets_ms)
    run = room.reading_run
    start = room.match.game.position + 1
    # the word after the last one shown, and the end of the speech (the reading finishes)
    marks = [*speech.onsets_ms, speech.end_ms]
    offset = marks[min(start, n)]
    loop = asyncio.get_running_loop()
    lead = FIRST_LEAD if first else RESUME_LEAD
    t0 = loop.time() + lead
    room.cue(
        VoiceCue(
            url=room.voice_url(tossup_id),
            from_ms=offset,
            delay=lead,
            first_word=start,
            onsets_ms=list(speech.onsets_ms),
        )
    )
    for i in range(start, n + 1):
        await asyncio.sleep(max(0.0, t0 + (marks[i] - offset) / 1000 - loop.time()))
        g = room.match.game
        if (
            room.reading_run != run  # stopped and read again meanwhile: cued again from here
            or not room.reading_now()
            or g.tossup_id != tossup_id
            or g.position != i - 1
        ):
            return
        try:
            await room.command(Reveal(to=i, paced=True, source="speech"))
        except IllegalCommand:
            return  # paused (or moved on) while the word waited its turn


async def say_words(room: Reader, tossup_id: str, first: int, last: int) -> None:
    """Say words ``first``..``last`` of the tossup alone: the moderator's step while the
    reading is paused (the voice then stops again, at the next word)."""
    speech = await speech_of(room, tossup_id)
    marks = [*speech.onsets_ms, speech.end_ms]
    if not 0 <= first <= last < len(speech.onsets_ms):
        return
    room.cue(
        VoiceCue(
            url=room.voice_url(tossup_id),
            from_ms=marks[first],
            until_ms=marks[last + 1],
            delay=RESUME_LEAD,
            first_word=first,
            onsets_ms=list(speech.onsets_ms),
        )
    )


async def say_bonus_part(room: Reader, bonus: BonusSpec, part: int, url: str) -> None:
    """Say a bonus part as it comes up (its lead-in first, for the first part): the words
    are all shown at once, so nothing is timed by it."""
    words, guides = bonus_part_words(bonus, part)
    speech = await asyncio.to_thread(speak, words, guides)
    room.cue(
        VoiceCue(
            url=url,
            from_ms=0,
            delay=RESUME_LEAD,
            first_word=0,
            onsets_ms=list(speech.onsets_ms),
            bonus_part=part,
        )
    )
