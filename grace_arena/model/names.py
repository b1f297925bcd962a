"""Which model names a match can use, checked when an event or a match is set up.

A model team plays from the steps precomputed in the record, so a name that no precompute can
ever produce is a mistake best caught when the team is registered, not when its first match
opens. What can be checked here, without the network:

- the models this program runs itself: ``tfidf`` (offline) and ``local-smollm2``;
- the models whose steps are already in the record (any name ``--name`` gave them);
- litellm's names: a bare name in litellm's own price table (``gpt-4o-mini``), or a
  ``PROVIDER/MODEL`` name whose provider litellm knows (``openai/...``, ``hosted_vllm/...``).
  The model part of such a name is the provider's to know (a server's own model, a new model):
  it is accepted, and ``precompute`` finds out.

Anything else is refused with the closest names. litellm's tables are read from its package
files, without importing it (an import takes seconds).
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path

__all__ = ["LOCAL_MODELS", "litellm_names", "litellm_providers", "model_name_problem"]

#: The models this program runs itself.
LOCAL_MODELS = ("tfidf", "local-smollm2")


def _litellm_file(name: str) -> dict:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@functools.cache
def litellm_names() -> frozenset[str]:
    """The model names in litellm's price table (its package's copy)."""
    table = _litellm_file("model_prices_and_context_window_backup.json")
    return frozenset(k for k, v in table.items() if isinstance(v, dict) and k != "sample_spec")


@functools.cache
def litellm_providers() -> frozenset[str]:
    """The providers litellm routes ``PROVIDER/MODEL`` names to."""
    providers = set(_litellm_file("provider_endpoints_support_backup.json").get("providers", {}))
    providers.update(name.split("/", 1)[0] for name in litellm_names() if "/" in name)
    return frozenset(p for p in providers if "/" not in p)


def model_name_problem(name: str, precomputed: Iterable[str] = ()) -> str | None:
    """None when ``name`` is a model a match can use; else why not, with the closest names.

    ``model_name_problem("tfdif")``: "no model 'tfdif' (did you mean tfidf?); models: tfidf,
    local-smollm2, or a litellm name such as openai/gpt-4o-mini".
    """
    record = sorted(set(precomputed))
    if name in LOCAL_MODELS or name in record or name in litellm_names():
        return None
    provider, slash, rest = name.partition("/")
    providers = litellm_providers()
    if slash and rest and (provider in providers or not providers):
        return None
    ours = [*LOCAL_MODELS, *record]
    close = difflib.get_close_matches(name, ours, n=3, cutoff=0.6)
    if slash and rest and not close:
        near = difflib.get_close_matches(provider, sorted(providers), n=3, cutoff=0.6)
        close = [f"{p}/{rest}" for p in near]
        why = f"no model {name!r}: litellm has no provider {provider!r}"
    else:
        close = close or difflib.get_close_matches(name, sorted(litellm_names()), n=3, cutoff=0.8)
        why = f"no model {name!r}"
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    stored = f"those precomputed in the record ({', '.join(record)})" if record else ""
    listed = ", ".join([*LOCAL_MODELS, *([stored] if stored else [])])
    return f"{why}{hint}; models: {listed}, or a litellm name such as openai/gpt-4o-mini"
