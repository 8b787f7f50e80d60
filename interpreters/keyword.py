"""Reads approve / reject from a person's free-text reply with word tables, no model.

It reads English, German, French, Spanish, Portuguese, Dutch, Italian and (basic) Japanese
(``interpreters.languages``, one table module each; ``languages=`` narrows them). The reply is
read in each language; it is understood only when the languages that know the most of its
meaningful words understand it, no language that knows as many sees a question, a condition or
a negation in it, and every language that reads a verdict reads the same one.

The reading is narrow on purpose: it never guesses. A reply is understood only when
every verdict in it points the same way and nothing in it makes the verdict uncertain:

* Verdicts are whole words, phrases, emoji and Slack shortcodes, case-insensitive
  ("approve", "lgtm", "go ahead", "👍", ":+1:" / "reject", "no way", "disallow", "👎").
* A negation flips an approval into a rejection ("not approved", "I don't approve",
  "do not proceed"); "never" / "don't" alone reject. A negated rejection or two
  negations ("not rejected", "not not approved") are not understood.
* Idioms are no verdicts ("no problem, go ahead" approves; "not sure" is unsure).
* Not understood: a question, a condition ("if", "unless", "once"), a correction
  ("but", "actually", struck-out ``~text~``), a change ("only", "half"), doubt
  ("maybe", "wait"), a contradiction ("yes and no"), no verdict at all; an approval
  that carries a negation, a number or a comparison (it may change the call).
* The reason is what follows the verdict after ":", "-" or "because"
  ("reject: amount too high" → "amount too high"), cut to 3000 characters. A rejection
  verb may also take it after a comma, a full stop or a line break ("rejected, wrong
  customer"); a bare "no" may not, since it can answer another question, and neither may
  an approval. Pleasantries alone are dropped ("approved, thanks" → no reason).
* Slack's markup: ``&amp;`` / ``&lt;`` / ``&gt;`` are read as the characters they stand for;
  a quoted line (``&gt; ...``) is no part of the answer, and a quote that holds a verdict makes
  the reply not understood; mentions are no words, a link (``<https://…|T-1>``) is no number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from bot.components.decorators import reply_interpreter
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import DecidedBy
from bot.core.reply import ReplyInput, ReplyInterpretation
from interpreters.languages import LANGUAGE_CODES, Language, language_of
from interpreters.languages.en import HOW_TO_ANSWER
from interpreters.lexicon import Kind, Lexicon, lexicon_of
from interpreters.reading import Reading, Unreadable, read
from interpreters.slack_markup import unquoted

__all__ = [
    "APPROVALS_UNDERSTOOD",
    "HOW_TO_ANSWER",
    "REJECTIONS_UNDERSTOOD",
    "REJECTION_WITH_REASON",
    "KeywordReplyInterpreter",
    "how_to_answer",
    "reply_help",
    "verdict_words",
]

APPROVALS_UNDERSTOOD = ("approve", "yes", "ok", "lgtm", "go ahead", "👍")
"""Replies that approve, to show people (a test reads each as an approval)."""
REJECTIONS_UNDERSTOOD = ("reject", "no", "deny", "👎")
"""Replies that reject, to show people (a test reads each as a rejection)."""
REJECTION_WITH_REASON = "reject: wrong customer"
"""How to give a reason, to show people (a test reads it with the reason "wrong customer")."""


def verdict_words(*, approve: bool, language: str = "en") -> tuple[str, ...]:
    """The words and phrases read as an approval (or a rejection), in table order; emoji and
    Slack shortcodes left out (``python -m bot demo`` shows them when asked for help)."""
    wanted = Kind.APPROVE if approve else Kind.REJECT
    lexicon = lexicon_of(_code(language))
    return tuple(
        " ".join(key)
        for key, entry in lexicon.entries.items()
        if entry.kind is wanted and entry.own
        and all(part.replace("'", "").isalpha() for part in key)
    )  # fmt: skip


def how_to_answer(language: str | None) -> str:
    """The hint that ends a not-understood reason, in ``language`` (English when ``None`` or a
    language the keyword interpreter does not read: another interpreter may name any)."""
    return _said_in(language).hint


def reply_help(language: str | None) -> str:
    """What a thread reply that was not understood is told, in ``language``: the words
    understood and the buttons (English when ``None`` or a language it does not read)."""
    return _said_in(language).reply_help


def _said_in(language: str | None) -> Language:
    code = _code(language or "en")
    return language_of(code if code in LANGUAGE_CODES else "en")


@reply_interpreter(
    name="keyword-reply-interpreter",
    description="Reads approve / reject from a free-text reply by whole words and "
    "emoji; anything uncertain is not understood",
    decided_by=DecidedBy.CODE,
)
class KeywordReplyInterpreter:
    """Reads an approval reply by word tables; never sets ``override_arguments``.

    ``languages`` are the languages it reads (codes of ``LANGUAGE_CODES``: "en", "de", "fr",
    "es", "pt", "nl", "it", "ja"; a region is ignored, "pt-BR" is "pt"); ``None``, the default,
    reads them all. A role's interpreter names them as a class attribute
    (``languages = ("de", "en")``), or an instance takes them: ``KeywordReplyInterpreter(
    languages=["fr"])``. The interpretation names the language the reply was read in
    (``ReplyInterpretation.language``) when one language knew it best.
    """

    languages: ClassVar[Sequence[str] | None] = None

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        _lexicons(cls.languages)  # a language it cannot read fails where the role is written

    def __init__(self, *, languages: Sequence[str] | None = None) -> None:
        self._lexicons = _lexicons(languages if languages is not None else type(self).languages)

    def interpret(self, input: ReplyInput) -> ReplyInterpretation[ToolCallApprovalDecision]:
        # a subclass's own __init__ may not call this one's: then its class's languages
        lexicons = getattr(self, "_lexicons", None) or _lexicons(type(self).languages)
        reading, language = _weigh(input.reply, lexicons)
        if reading.decision is None:
            assert reading.unreadable is not None
            said = _said_in(language)
            cause = reading.unreadable.said_in(said.causes)
            space = "" if cause.endswith("。") else " "
            return ReplyInterpretation.not_understood(
                reason=f"{cause}{space}{said.hint}", language=language
            )
        return ReplyInterpretation.understood(reading.decision, language=language)


def _code(language: str) -> str:
    return language.strip().lower().replace("_", "-").split("-")[0]


def _lexicons(languages: Sequence[str] | None) -> tuple[Lexicon, ...]:
    if isinstance(languages, str):
        raise TypeError(f"languages is a list of language codes, not the string {languages!r}")
    codes = LANGUAGE_CODES if languages is None else tuple(dict.fromkeys(map(_code, languages)))
    if not codes:
        raise ValueError("the keyword interpreter needs at least one language")
    return tuple(lexicon_of(code) for code in codes)


def _weigh(reply: str, lexicons: Sequence[Lexicon]) -> tuple[Reading, str | None]:
    """The reading to answer with and the language it was recognised in (``None``: none, or
    several alike)."""
    said, quoted = unquoted(reply)
    readings = [read(said, quoted, lexicon) for lexicon in lexicons]
    understood = [r for r in readings if r.decision is not None]
    if understood:
        best = max(understood, key=_weight)
        blocking = [r for r in readings if _blocks(r, best)]
        if blocking:
            chosen = max(blocking, key=_weight)
            return chosen, _recognised(chosen, readings)
        if len({r.decision.approved for r in understood if r.decision is not None}) > 1:
            return _both_ways(best), None
        foreign = _foreign_doubt(said, best, readings)
        return foreign or best, _recognised(best, readings)
    chosen = max(readings, key=_weight)  # the first of those alike: the order of the languages
    return chosen, _recognised(chosen, readings)


def _blocks(reading: Reading, best: Reading) -> bool:
    """Whether ``reading``, not understood, knows the reply as well as ``best`` does and sees
    something in the way (a lone negation only when it knows it better)."""
    unreadable = reading.unreadable
    if unreadable is None or not unreadable.blocking:
        return False
    if unreadable.lone_negation:
        return _weight(reading) > _weight(best)
    return _weight(reading) >= _weight(best)


def _foreign_doubt(said: str, best: Reading, readings: Sequence[Reading]) -> Reading | None:
    """``best`` not understood after all when another language finds, in words ``best`` does
    not know (or knows only as "the", "of": Portuguese "no" is "in the", Spanish "no" is
    no), what its own reading would not let pass: the other verdict, or a negation or a
    comparison in an approval ("approuvé : client VIP not", "承認：VIP顧客 afgekeurd")."""
    assert best.decision is not None
    approve = best.decision.approved
    spoiling = _SPOIL_APPROVAL if approve else _SPOIL_REJECTION
    known = [(start, end) for start, end, kind in best.spans if kind is not Kind.OBJECT]
    for reading in readings:
        for start, end, kind in reading.spans:
            if kind in spoiling and not _covered(said, start, end, known):
                if kind in (Kind.NEGATOR, Kind.COMPARE):
                    cause = Unreadable('An approval cannot carry "{}": it may change the call.',
                                       said[start:end])  # fmt: skip
                else:
                    cause = Unreadable("The reply both approves and rejects.")
                return Reading(code=best.code, decision=None, unreadable=cause,
                               meaningful=best.meaningful, own=best.own)  # fmt: skip
    return None


def _covered(said: str, start: int, end: int, known: Sequence[tuple[int, int]]) -> bool:
    """Whether every letter of ``said[start:end]`` is in a word ``known`` spans."""
    return all(
        any(s <= i < e for s, e in known) for i in range(start, end) if not said[i].isspace()
    )


_SPOIL_APPROVAL = frozenset({Kind.REJECT, Kind.REJECT_HINT, Kind.NEGATOR, Kind.COMPARE})
_SPOIL_REJECTION = frozenset({Kind.APPROVE, Kind.APPROVE_HINT})


def _weight(reading: Reading) -> tuple[int, int]:
    return (reading.own, reading.meaningful)


def _recognised(chosen: Reading, readings: Sequence[Reading]) -> str | None:
    if chosen.meaningful == 0 or sum(_weight(r) == _weight(chosen) for r in readings) > 1:
        return None
    return chosen.code


def _both_ways(reading: Reading) -> Reading:
    unreadable = Unreadable(
        "The reply reads as an approval in one language, a rejection in another."
    )
    return Reading(code=reading.code, decision=None, unreadable=unreadable,
                   meaningful=reading.meaningful, own=reading.own)  # fmt: skip
