"""The keyword interpreter's word tables compiled: one lexicon per language.

Emoji and Slack shortcodes (the English table's entries without letters, and ``:shortcodes:``)
are shared by every language; a language's own words are the ones that tell it apart.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import Enum, auto
from functools import cache

from interpreters.languages import Language, language_of


class Kind(Enum):
    APPROVE = auto()
    REJECT = auto()
    APPROVE_HINT = auto()  # "good", "correct": spoils a rejection, never a verdict
    REJECT_HINT = auto()  # "wrong", "too high": spoils an approval, never a verdict
    NEGATOR = auto()
    FILLER = auto()  # greetings, pleasantries, pronouns, idioms like "no problem"
    OBJECT = auto()  # "it", "the", "with": what a verdict verb is about
    CONNECTOR = auto()  # "because": a reason follows
    DOUBT = auto()
    CONDITION = auto()
    CONTRAST = auto()
    CHANGE = auto()
    COMPARE = auto()  # "less", "other": spoils an approval only
    QUESTION = auto()  # "should", "is": a question when it opens the reply
    NUMBER = auto()
    WORD = auto()
    SOFT = auto()  # , . ; !
    HARD = auto()  # : - —
    QMARK = auto()


QUIET_WORDS = frozenset({Kind.FILLER, Kind.OBJECT})
"""Own words that do not tell a language apart by what they mean."""


@dataclass(frozen=True, slots=True)
class Entry:
    kind: Kind
    verb: bool = False  # takes an object ("approve it") and a reason after a comma
    pair: bool = False  # French "ne": closed by the next negator of its clause
    own: bool = True  # a word of the language, not a shared emoji or shortcode


@dataclass(frozen=True, slots=True, kw_only=True)
class Lexicon:
    language: Language
    entries: dict[tuple[str, ...], Entry]
    folded: dict[tuple[str, ...], Entry | None]  # None: two words fold alike and differ
    alone: dict[tuple[str, ...], Entry]
    alone_folded: dict[tuple[str, ...], Entry]
    standalone: frozenset[str]
    longest: int
    pieces: dict[str, int]  # unspaced: the longest piece starting with each character
    starts: frozenset[str]  # the first words of phrases of more than one word (and folded)
    folds: dict[str, str] = field(default_factory=dict)  # words folded so far

    def find(self, words: tuple[str, ...]) -> Entry | None:
        entry = self.entries.get(words)
        if entry is None and self.language.fold_accents:
            entry = self.folded.get(tuple(self.fold(word) for word in words))
        return entry

    def find_alone(self, words: tuple[str, ...]) -> Entry | None:
        entry = self.alone.get(words)
        if entry is None and self.language.fold_accents:
            entry = self.alone_folded.get(tuple(self.fold(word) for word in words))
        return entry

    def starts_a_phrase(self, word: str) -> bool:
        return word in self.starts or (
            self.language.fold_accents and self.fold(word) in self.starts
        )

    def fold(self, word: str) -> str:
        folded = self.folds.get(word)
        if folded is None:
            if len(self.folds) >= _FOLDS_KEPT:  # bounded: replies bring ever new words
                self.folds.clear()
            folded = self.folds[word] = fold(word, self.language)
        return folded


def fold(word: str, language: Language) -> str:
    """``word`` without its accents: "refusé" → "refuse", "não" → "nao"; then spelled as the
    language's plain spellings spell it ("bestaetigt" and "bestätigt" → "bestatigt")."""
    decomposed = unicodedata.normalize("NFD", word)
    folded = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    for spelled, plain in language.spellings:
        folded = folded.replace(spelled, plain)
    return folded


_FOLDS_KEPT = 20_000


@cache
def lexicon_of(code: str) -> Lexicon:
    language = language_of(code)
    entries, alone, standalone = _parse(language.tables)
    shared = {key: entry for key, entry in _parse(language_of("en").tables)[0].items()
              if _is_symbol(key)}  # fmt: skip
    for key, entry in shared.items():
        if key not in entries or code == "en":
            entries[key] = Entry(entry.kind, entry.verb, own=False)
    folded: dict[tuple[str, ...], Entry | None] = {}
    for key, entry in entries.items():
        folded_key = tuple(fold(word, language) for word in key)
        folded[folded_key] = entry if folded.get(folded_key, entry) == entry else None
    pieces: dict[str, int] = {}
    if language.unspaced:
        for word, *rest in entries:
            if not rest:
                pieces[word[0]] = max(pieces.get(word[0], 0), len(word))
    return Lexicon(
        language=language,
        entries=entries,
        folded=folded,
        alone=alone,
        alone_folded={tuple(fold(word, language) for word in key): e for key, e in alone.items()},
        standalone=frozenset(standalone),
        longest=max(len(key) for key in [*entries, *alone]),
        pieces=pieces,
        starts=frozenset(
            word
            for key in [*entries, *alone]
            if len(key) > 1
            for word in (key[0], fold(key[0], language))
        ),
    )


def _parse(
    tables: str,
) -> tuple[dict[tuple[str, ...], Entry], dict[tuple[str, ...], Entry], set[str]]:
    entries: dict[tuple[str, ...], Entry] = {}
    alone: dict[tuple[str, ...], Entry] = {}
    standalone: set[str] = set()
    for table in re.split(r"\n(?=\S)", tables.strip()):
        header, phrases = table.split(" = ", 1)
        kind, *flags = header.split()
        into = alone if "alone" in flags else entries
        for phrase in " ".join(phrases.split()).split("|"):
            key = tuple(phrase.split())
            if key in into:
                raise ValueError(f"{phrase!r} is in two keyword tables")
            into[key] = Entry(Kind[kind], verb="verb" in flags, pair="pair" in flags)
            if "standalone" in flags:
                standalone.add(phrase)
    return entries, alone, standalone


def _is_symbol(key: tuple[str, ...]) -> bool:
    """An emoji, an emoticon or a Slack shortcode: read alike in every language."""
    word = key[0]
    return len(key) == 1 and (word.startswith(":") or not any(c.isalpha() for c in word))
