"""The word tables of the keyword reply interpreter, one small module per language.

A module holds data only (``LANGUAGE``): its tables in the keyword interpreter's format, how its
negation works, and the "how to answer" hint in that language. ``interpreters.keyword`` compiles
them; emoji and Slack shortcodes are shared by every language (the English table holds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["LANGUAGE_CODES", "Language", "language_of"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Language:
    """One language's word tables and how its replies are shaped.

    ``tables``: one table a line, ``KIND [flags] = phrase|phrase|...`` (flags: ``verb`` takes
    an object and a reason after a comma; ``alone`` is the kind only when nothing but
    punctuation, an emoji or the end follows, as "si" alone says yes where "si ..." says if;
    ``standalone`` negators reject on their own, as "never"; ``pair`` negators, as French "ne",
    are closed by the next negator of their clause). ``negation_after``: a negator after a verdict
    of its clause negates it ("ich genehmige das nicht", 承認しません). ``fold_accents``: a word
    is also found without its accents ("refuse" for "refusé"; ``spellings``
    for plain spellings, "ae" for "ä"). ``elisions``: prefixes split off a
    word ("n'approuve" → "n'" "approuve"). ``unspaced``: words are written without spaces and
    found by the longest phrase of the table (Japanese).
    """

    code: str
    name: str
    tables: str
    hint: str
    """How to answer, in this language: it ends every reason a reply was not understood."""
    reply_help: str
    """What a thread reply that was not understood is told: the words understood."""
    approvals: tuple[str, ...] = ()
    """Replies that approve, shown in ``reply_help`` (a test reads each as an approval)."""
    rejections: tuple[str, ...] = ()
    """Replies that reject, shown in ``reply_help`` (a test reads each as a rejection)."""
    rejection_with_reason: tuple[str, str] = ("", "")
    """A rejection with its reason and the reason read from it, shown in ``reply_help``."""
    causes: Mapping[str, str] = field(default_factory=dict)
    """Why a reply was not understood, in this language, by the English cause ("{}" where the
    words go); a cause not in it is said in English."""
    negation_after: bool = False
    fold_accents: bool = True
    elisions: frozenset[str] = frozenset()
    spellings: tuple[tuple[str, str], ...] = ()
    """Plain spellings a word is also found by, after its accents: ("ae", "a") finds
    "bestätigt" as "bestaetigt"."""
    unspaced: bool = False


LANGUAGE_CODES = ("en", "de", "fr", "es", "pt", "nl", "it", "ja")
"""Every language the keyword interpreter reads, English first."""


def language_of(code: str) -> Language:
    """The tables of the language ``code`` (one of ``LANGUAGE_CODES``)."""
    from importlib import import_module

    if code not in LANGUAGE_CODES:
        known = ", ".join(LANGUAGE_CODES)
        raise ValueError(f"the keyword interpreter reads no language {code!r} (it reads {known})")
    language = import_module(f"interpreters.languages.{code}").LANGUAGE
    assert isinstance(language, Language)
    return language
