"""The record's refusal, below every module of the record that raises or extends it."""

from __future__ import annotations

__all__ = ["RecordError"]


class RecordError(RuntimeError):
    """The record cannot do what was asked (unknown match, corrupt event...)."""
