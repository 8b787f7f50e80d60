"""Reads one reply in one language's lexicon: a decision, or why it cannot be read.

The reading never guesses: see ``interpreters.keyword`` for the rules. This module applies
them to the terms of one language; the interpreter weighs the readings of every language.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum

from bot.core.dtos import ToolCallApprovalDecision
from interpreters.lexicon import QUIET_WORDS, Entry, Kind, Lexicon

MAX_REASON = 3000

_K = Kind
_MARKS = {"?": _K.QMARK, "？": _K.QMARK, "¿": _K.QMARK, ":": _K.HARD, "-": _K.HARD,
          "–": _K.HARD, "—": _K.HARD, ",": _K.SOFT, ".": _K.SOFT, ";": _K.SOFT,
          "!": _K.SOFT, "…": _K.SOFT, "\n": _K.SOFT, "~": _K.CONTRAST, "¡": _K.SOFT,
          "：": _K.HARD, "、": _K.SOFT, "。": _K.SOFT, "！": _K.SOFT, "，": _K.SOFT,
          "；": _K.SOFT, "〜": _K.CONTRAST}  # fmt: skip
_SIDES = {_K.APPROVE: (True, True), _K.REJECT: (False, True),
          _K.APPROVE_HINT: (True, False), _K.REJECT_HINT: (False, False)}  # fmt: skip
_BOUNDARIES = frozenset({_K.SOFT, _K.HARD, _K.CONNECTOR, _K.QMARK})
_QUIET = frozenset({_K.FILLER, _K.SOFT, _K.HARD, _K.CONNECTOR})
_BLOCKERS = (
    (_K.DOUBT, 'The reply is unsure or asks to wait ("{}").'),
    (_K.CONDITION, 'The reply sets a condition ("{}").'),
    (_K.CONTRAST, 'The reply takes something back or makes an exception ("{}").'),
    (_K.CHANGE, 'The reply asks for a change ("{}").'),
)
_VERDICT_LIKE = frozenset({*_SIDES, _K.NEGATOR})

_TOKEN = re.compile(
    r"(?P<skip>[^\S\n]+|[\u200d\ufe0e\ufe0f\u2640\u2642\U0001f3fb-\U0001f3ff]|:skin-tone-\d:)"
    r"|(?P<link><(?:https?|mailto|tel|ftp):[^>]*>)"
    r"|(?P<mention><[@#!][^>]*>)"
    r"|(?P<symbol>:[\w+-]+:|(?<!\w)[+-]1(?!\w)|[:;]-?[()dp](?!\w))"
    r"|(?P<word>[^\W_]+(?:['’ʼ-][^\W_]+)*)"
    r"|(?P<mark>.)",
    re.IGNORECASE | re.DOTALL,
)
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]")


class Unreadable(Exception):
    """A reply that cannot be read with certainty; ``blocking`` when something in it stands in
    the way (a question, a negation, ...), not merely no verdict of this language or words it
    does not know."""

    def __init__(
        self, cause: str, *words: str, blocking: bool = True, lone_negation: bool = False
    ) -> None:
        super().__init__(cause.format(*words))
        self.cause = cause  # in English, "{}" where the words go: a language's table says it
        self.words = words
        self.blocking = blocking
        self.lone_negation = lone_negation  # a negation with no verdict to negate

    def said_in(self, causes: Mapping[str, str]) -> str:
        """The cause in the words of ``causes`` (a language's), else in English."""
        return causes.get(self.cause, self.cause).format(*self.words)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """One language's reading: a decision or why not, and how many of its words it found
    (``meaningful``: verdicts, negations, conditions...; ``own``: every word of its own)."""

    code: str
    decision: ToolCallApprovalDecision | None
    unreadable: Unreadable | None
    meaningful: int
    own: int
    spans: tuple[tuple[int, int, Kind], ...] = ()  # where its own words are, and what they are


class _Sep(IntEnum):
    NONE = 0
    SOFT = 1  # a comma or a full stop
    EXPLICIT = 2  # ":", "-" or "because"


@dataclass(frozen=True, slots=True)
class _Token:
    group: str
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Term:
    kind: Kind
    verb: bool
    pair: bool
    text: str
    start: int
    own: bool
    size: int  # tokens
    end: int


@dataclass(frozen=True, slots=True)
class _Atom:
    """One verdict with its negation applied; spans terms ``first`` to ``last``."""

    approve: bool
    strong: bool
    verb: bool
    first: int
    last: int
    negated: bool = False


def read(said: str, quoted: str, lexicon: Lexicon) -> Reading:
    """Reads ``said`` (a quoted message, ``quoted``, only stops it when it holds a verdict)."""
    terms = _terms(_tokens(said, lexicon), lexicon)
    meaningful = sum(term.size for term in terms if term.own and term.kind not in QUIET_WORDS)
    own = sum(term.size for term in terms if term.own)
    spans = tuple((term.start, term.end, term.kind) for term in terms if term.own)
    try:
        if any(term.kind in _VERDICT_LIKE for term in _terms(_tokens(quoted, lexicon), lexicon)):
            raise Unreadable("The reply quotes a verdict: answer without the quote.")
        decision = _decide(said, terms, lexicon)
    except Unreadable as unreadable:
        return Reading(code=lexicon.language.code, decision=None, unreadable=unreadable,
                       meaningful=meaningful, own=own, spans=spans)  # fmt: skip
    return Reading(code=lexicon.language.code, decision=decision, unreadable=None,
                   meaningful=meaningful, own=own, spans=spans)  # fmt: skip


def _decide(reply: str, terms: list[_Term], lexicon: Lexicon) -> ToolCallApprovalDecision:
    if all(term.kind in _BOUNDARIES for term in terms):
        raise Unreadable("The reply has no words.", blocking=False)
    _check_question(terms)
    _check_blockers(terms)
    atoms = _atoms(terms, lexicon)
    if len({atom.approve for atom in atoms}) > 1:
        raise Unreadable("The reply both approves and rejects.")
    head, start, sep = _split(terms, atoms)
    approve = head[0].approve
    if approve:
        _check_unaltered(terms)
    reason = _reason(reply, terms[start:], sep, approve=approve, verb=any(a.verb for a in head))
    return ToolCallApprovalDecision(approved=approve, reason=reason)


def _tokens(reply: str, lexicon: Lexicon) -> list[_Token]:
    tokens: list[_Token] = []
    for match in _TOKEN.finditer(reply):
        group = match.lastgroup or "mark"
        if group == "skip":
            continue
        token = _Token(group, _normalize(match.group()), match.start(), match.end())
        if group != "word":
            tokens.append(token)
        elif lexicon.language.unspaced and _UNSPACED.search(token.text):
            tokens.extend(_pieces(token, lexicon))
        else:
            tokens.extend(_elided(token, lexicon))
    return tokens


def _normalize(text: str) -> str:
    return text.lower().replace("’", "'").replace("ʼ", "'")


def _elided(token: _Token, lexicon: Lexicon) -> list[_Token]:
    """ "n'approuve" → "n'" "approuve", unless the whole word is in the tables ("d'accord")."""
    head, apostrophe, rest = token.text.partition("'")
    prefix = head + apostrophe
    if not rest or prefix not in lexicon.language.elisions or lexicon.find((token.text,)):
        return [token]
    split = token.start + len(prefix)
    return [_Token("word", prefix, token.start, split),
            *_elided(_Token("word", rest, split, token.end), lexicon)]  # fmt: skip


def _pieces(token: _Token, lexicon: Lexicon) -> list[_Token]:
    """An unspaced run cut into the longest pieces of the tables, else single characters."""
    pieces: list[_Token] = []
    text, i = token.text, 0
    while i < len(text):
        size = 1
        for length in range(min(lexicon.pieces.get(text[i], 1), len(text) - i), 1, -1):
            if lexicon.find((text[i : i + length],)) is not None:
                size = length
                break
        pieces.append(_Token("word", text[i : i + size], token.start + i, token.start + i + size))
        i += size
    return pieces


def _terms(tokens: Sequence[_Token], lexicon: Lexicon) -> list[_Term]:
    """Groups tokens into terms, the longest phrase of the lexicon first."""
    terms: list[_Term] = []
    i = 0
    while i < len(tokens):
        size, entry = _longest_phrase(tokens, i, lexicon)
        words = tuple(token.text for token in tokens[i : i + size])
        if _alone(tokens, i + size, lexicon):
            entry = lexicon.find_alone(words) or entry
        elif entry is None and lexicon.find_alone(words) is not None:
            entry = Entry(Kind.WORD)
        entry = entry or _single(tokens[i])
        if entry is not None:
            text = " ".join(words)
            own = entry.own and tokens[i].group == "word"
            end = tokens[i + size - 1].end
            terms.append(
                _Term(entry.kind, entry.verb, entry.pair, text, tokens[i].start, own, size, end)
            )
        i += size
    return terms


def _alone(tokens: Sequence[_Token], after: int, lexicon: Lexicon) -> bool:
    """Nothing but punctuation, an emoji, a "because" or the end follows."""
    if after == len(tokens) or tokens[after].group != "word":
        return True
    entry = _longest_phrase(tokens, after, lexicon)[1]
    return entry is not None and entry.kind is _K.CONNECTOR


def _longest_phrase(tokens: Sequence[_Token], i: int, lexicon: Lexicon) -> tuple[int, Entry | None]:
    longest = lexicon.longest if lexicon.starts_a_phrase(tokens[i].text) else 1
    for size in range(min(longest, len(tokens) - i), 0, -1):
        entry = lexicon.find(tuple(token.text for token in tokens[i : i + size]))
        if entry is not None:
            return size, entry
    return 1, None


def _single(token: _Token) -> Entry | None:
    if token.group == "mention":
        return Entry(_K.FILLER, own=False)
    if token.group == "link":
        return Entry(_K.WORD, own=False)  # a link's label is no number that changes the call
    if token.group == "word":
        return Entry(_K.NUMBER if any(c.isdigit() for c in token.text) else _K.WORD, own=False)
    if token.group == "mark" and token.text in _MARKS:
        return Entry(_MARKS[token.text], own=False)
    if token.group == "symbol" or unicodedata.category(token.text) == "So":
        return Entry(_K.WORD, own=False)  # an emoji or a shortcode we do not know
    return None  # other punctuation: quotes, brackets, Slack's * _ ` formatting


def _check_question(terms: Sequence[_Term]) -> None:
    first = next((term for term in terms if term.kind not in _QUIET), None)
    is_question = first is not None and first.kind is _K.QUESTION
    if is_question or any(term.kind is _K.QMARK for term in terms):
        raise Unreadable("The reply reads as a question.")


def _check_blockers(terms: Sequence[_Term]) -> None:
    for kind, cause in _BLOCKERS:
        found = next((term for term in terms if term.kind is kind), None)
        if found is not None:
            raise Unreadable(cause, found.text)


def _check_unaltered(terms: Sequence[_Term]) -> None:
    altering = frozenset({_K.NEGATOR, _K.NUMBER, _K.COMPARE})
    found = next((term for term in terms if term.kind in altering), None)
    if found is not None:
        raise Unreadable('An approval cannot carry "{}": it may change the call.', found.text)


def _atoms(terms: Sequence[_Term], lexicon: Lexicon) -> list[_Atom]:
    """Finds the verdicts; a negator binds to the next verdict of its clause (or, in a language
    that negates after, to the verdict before it: "ich genehmige das nicht")."""
    after = lexicon.language.negation_after
    atoms: list[_Atom] = []
    pending: list[int] = []
    clause: int | None = None  # the index in atoms of this clause's last verdict
    paired = False  # that verdict's negation opened by "ne", closed by the next negator
    closed = False  # a pending "ne" already closed ("ne pas valider")
    for i, term in enumerate(terms):
        if term.kind is _K.NEGATOR:
            if clause is None and pending and terms[pending[-1]].pair and not closed:
                closed = True  # "ne pas" before the verdict is one negation
            elif clause is not None and paired:
                paired = False  # "ne ... pas" is one negation
                atoms[clause] = replace(atoms[clause], last=i)
            elif clause is not None and after and atoms[clause].verb:
                atoms[clause] = _negated_after(atoms[clause], i)
                pending.append(i)  # a verdict after it leaves unclear which one it negates
            else:
                pending.append(i)
        elif term.kind in _SIDES:
            if pending and clause is not None and after:
                raise Unreadable('Cannot tell which verdict "{}" negates.', terms[pending[0]].text)
            paired = bool(pending) and terms[pending[-1]].pair and not closed
            atoms.append(_atom(terms, i, pending))
            clause = len(atoms) - 1
            pending, closed = [], False
        elif term.kind in _BOUNDARIES:
            atoms.extend(_standalone(terms, pending, lexicon))
            pending, clause, paired, closed = [], None, False, False
    atoms.extend(_standalone(terms, pending, lexicon))
    return atoms


def _atom(terms: Sequence[_Term], i: int, negators: Sequence[int]) -> _Atom:
    approve, strong = _SIDES[terms[i].kind]
    if not negators:
        return _Atom(approve, strong, terms[i].verb, i, i)
    if len(negators) > 1 or not approve:
        raise Unreadable("The reply negates a negation.")
    return _Atom(False, strong, terms[i].verb, negators[0], i, negated=True)


def _negated_after(atom: _Atom, i: int) -> _Atom:
    if atom.negated or not atom.approve:
        raise Unreadable("The reply negates a negation.")
    return _Atom(False, atom.strong, atom.verb, atom.first, i, negated=True)


def _standalone(terms: Sequence[_Term], negators: Sequence[int], lexicon: Lexicon) -> list[_Atom]:
    """A lone "never" / "don't" rejects: "please don't!" but not "don't worry about it"."""
    if len(negators) != 1 or terms[negators[0]].text not in lexicon.standalone:
        return []
    i = negators[0]
    alone_before = i == 0 or terms[i - 1].kind in _QUIET
    alone_after = i + 1 == len(terms) or terms[i + 1].kind in _BOUNDARIES
    return [_Atom(False, True, False, i, i)] if alone_before and alone_after else []


def _split(terms: Sequence[_Term], atoms: Sequence[_Atom]) -> tuple[list[_Atom], int, _Sep]:
    """Reads the verdicts at the start; returns them, where the rest starts, its separator."""
    by_first = {atom.first: atom for atom in atoms}
    head: list[_Atom] = []
    i, start, sep = 0, 0, _Sep.NONE  # the rest starts after the last verdict or separator
    while i < len(terms):
        atom, kind = by_first.get(i), terms[i].kind
        if atom is not None and (atom.strong or (head and head[0].approve)):
            head.append(atom)
            i = start = _skip_object(terms, atom)
            sep = _Sep.NONE
        elif kind is _K.FILLER or (not head and kind in _BOUNDARIES):
            i += 1
        elif kind is _K.SOFT:
            i = start = i + 1
            sep = _Sep.SOFT
        else:
            break
    if not head:
        found = terms[i].text if i < len(terms) else ""
        negation = i < len(terms) and terms[i].kind is _K.NEGATOR
        if negation:
            raise Unreadable('Cannot tell what "{}" refers to.', found, lone_negation=True)
        raise Unreadable("No verdict found.", blocking=False)
    while i < len(terms) and terms[i].kind in _BOUNDARIES:
        sep = max(sep, _Sep.SOFT if terms[i].kind is _K.SOFT else _Sep.EXPLICIT)
        i = start = i + 1
    return head, start, sep


def _skip_object(terms: Sequence[_Term], atom: _Atom) -> int:
    i = atom.last + 1
    if not atom.verb or i == len(terms) or terms[i].kind is not _K.OBJECT:
        return i
    while i < len(terms) and terms[i].kind not in _BOUNDARIES:
        i += 1
    return i


def _reason(
    reply: str, rest: Sequence[_Term], sep: _Sep, *, approve: bool, verb: bool
) -> str | None:
    if all(term.kind in _QUIET for term in rest):
        return None
    unknown = all(not term.own for term in rest if term.kind not in _QUIET)  # words of no table
    if sep is _Sep.NONE:
        word = next(term.text for term in rest if term.kind not in _QUIET)
        raise Unreadable(
            'Cannot tell what "{}" after the verdict means.', word, blocking=not unknown
        )
    if sep is _Sep.SOFT and (approve or not verb):
        raise Unreadable('Put a reason after a colon: "reject: <reason>".', blocking=not unknown)
    return reply[rest[0].start :].strip()[:MAX_REASON]
