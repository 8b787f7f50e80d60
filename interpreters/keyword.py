"""Reads approve / reject from a person's free-text reply with word tables, no model.

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
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum, auto

from bot.components.decorators import reply_interpreter
from bot.core.dtos import ToolCallApprovalDecision
from bot.core.enums import DecidedBy
from bot.core.reply import ReplyInput, ReplyInterpretation

HOW_TO_ANSWER = 'Reply "approve" or "reject: <reason>", or use the buttons.'
APPROVALS_UNDERSTOOD = ("approve", "yes", "ok", "lgtm", "go ahead", "👍")
"""Replies that approve, to show people (a test reads each as an approval)."""
REJECTIONS_UNDERSTOOD = ("reject", "no", "deny", "👎")
"""Replies that reject, to show people (a test reads each as a rejection)."""
REJECTION_WITH_REASON = "reject: wrong customer"
"""How to give a reason, to show people (a test reads it with the reason "wrong customer")."""
_MAX_REASON = 3000


class _Kind(Enum):
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


@dataclass(frozen=True, slots=True)
class _Entry:
    kind: _Kind
    verb: bool = False  # takes an object ("approve it") and a reason after a comma


# One table a line: KIND [verb] = phrase|phrase|...; indented lines continue it.
_TABLES = """
NEGATOR = not|never|don't|dont|do not|doesn't|does not|didn't|did not|won't|wont|will not|
    wouldn't|would not|can't|cant|cannot|can not|couldn't|could not|shouldn't|should not|
    mustn't|must not|isn't|is not|aren't|haven't|hasn't|ain't|neither|nor
APPROVE verb = approve|approved|approving|accept|accepted|allow|allowed|authorize|authorized|
    authorise|authorised|confirm|confirmed|proceed|go ahead|grant|granted|approval granted|
    permission granted
APPROVE = yes|yep|yeah|yup|affirmative|ok|okay|sure|alright|all right|fine|lgtm|agree|agreed|go|
    sounds good|looks good|all good|good to go|ship it|do it|go for it|of course|fine by me|
    works for me|hell yes|hell yeah|no objection|no objections|thumbs up|+1|👍|✅|✔|☑|👌|🆗|🟢|:+1:|
    :thumbsup:|:white_check_mark:|:heavy_check_mark:|:ok_hand:|:ok:|:ballot_box_with_check:|
    :green_circle:
REJECT verb = reject|rejected|rejecting|deny|denied|decline|declined|disallow|disallowed|
    disapprove|disapproved|refuse|refused|veto|vetoed|cancel|cancelled|canceled|abort|stop|halt
REJECT = no|nope|nah|nay|negative|no way|no-go|no go|no thanks|no thank you|no good|hell no|
    no chance|not a chance|absolutely not|definitely not|certainly not|of course not|
    don't think so|thumbs down|-1|👎|❌|❎|✖|🚫|⛔|🛑|🔴|:-1:|:thumbsdown:|:x:|
    :heavy_multiplication_x:|:no_entry_sign:|:no_entry:|:octagonal_sign:|
    :negative_squared_cross_mark:|:red_circle:
APPROVE_HINT = good|great|perfect|correct|right|valid|legit|nice|cool|awesome
REJECT_HINT = wrong|incorrect|bad|invalid|mistake|too high|too much|too many|too expensive|
    too risky|risky|suspicious|fraud|duplicate|rejection|denial|refusal
FILLER = hi|hey|hello|yo|bye|thanks|thank you|thank|thx|ty|cheers|please|pls|plz|sir|mate|boss|
    team|all|everyone|i|we|i'm|im|we're|i'll|we'll|i've|we've|will|have|has|am|already|hereby|
    just|then|so|well|now|oh|ah|really|totally|absolutely|definitely|certainly|indeed|very|much|
    a lot|again|no problem|no problems|not a problem|no prob|no probs|np|no worries|no worry|
    don't worry|no rush|no hurry|no doubt|no issue|no issues|no concerns|no complaints|
    no brainer|no-brainer|with it|with that|with this|with me|by me|from me|to me|for me|
    on my end|on my side|from my side|🙏|🎉|🚀|🙂|😊|😀|😄|💪|🙌|👏|💯|:pray:|:tada:|:rocket:|
    :slightly_smiling_face:|:smile:|:smiley:|:muscle:|:raised_hands:|:clap:|:100:|:)|:-)|:d|:p|
    ;)|:(|:-(
OBJECT = it|this|that|these|those|them|the|a|an|my|your|our|their|his|her|with|of|for|and|it's|
    that's|this one
CONNECTOR = because|because of|since|due to|bc|cuz|coz
DOUBT = maybe|perhaps|probably|possibly|unsure|dunno|idk|hmm|hm|hmmm|um|umm|uh|wait|later|tbd|
    not sure|not certain|don't know|do not know|no idea|no clue|hold on|hang on|hold off|let me|
    let's see|not yet|not now|not at all|i guess|guess so|i think|think so|kind of|kinda|
    sort of|sorta|never mind|nevermind|nvm|scratch that|oh no|🤔|🤷|:thinking_face:|:shrug:
CONDITION = if|only if|unless|once|provided|providing|assuming|as long as|so long as|in case|
    otherwise|depending|depends|whether|pending|subject to|contingent
CONTRAST = but|however|though|although|actually|except|instead|rather|nevertheless|correction|
    on second thought|then again
CHANGE = change|changed|changing|half|halve|only|modify|modified|adjust|adjusted|edit|reduce|
    reduced|lower|lowered|raise|increase|decrease|double|twice|partial|partially|partly|replace|
    switch|swap|update|make it|set it
QUESTION = what|why|how|who|whom|whose|which|where|when|should|shall|can|could|would|is|are|was|
    were|do|does|did|may|might|must
COMPARE = less|more|fewer|smaller|bigger|larger|higher|cheaper|different|other|another|else|
    extra|max|maximum|min|minimum|limit|cap|capped|up to
"""


def _parse_tables(tables: str) -> dict[tuple[str, ...], _Entry]:
    lexicon: dict[tuple[str, ...], _Entry] = {}
    for table in re.split(r"\n(?=\S)", tables.strip()):
        header, phrases = table.split(" = ", 1)
        kind, *flags = header.split()
        for phrase in " ".join(phrases.split()).split("|"):
            key = tuple(phrase.split())
            if key in lexicon:
                raise ValueError(f"{phrase!r} is in two keyword tables")
            lexicon[key] = _Entry(_Kind[kind], verb="verb" in flags)
    return lexicon


_K = _Kind
_LEXICON = _parse_tables(_TABLES)
_LONGEST = max(len(key) for key in _LEXICON)
_STANDALONE_REJECTIONS = frozenset({"never", "don't", "dont", "do not"})
_MARKS = {"?": _K.QMARK, "？": _K.QMARK, "¿": _K.QMARK, ":": _K.HARD, "-": _K.HARD,
          "–": _K.HARD, "—": _K.HARD, ",": _K.SOFT, ".": _K.SOFT, ";": _K.SOFT,
          "!": _K.SOFT, "…": _K.SOFT, "\n": _K.SOFT, "~": _K.CONTRAST}  # fmt: skip
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


def verdict_words(*, approve: bool) -> tuple[str, ...]:
    """The words and phrases read as an approval (or a rejection), in table order; emoji and
    Slack shortcodes left out (``python -m bot demo`` shows them when asked for help)."""
    wanted = _K.APPROVE if approve else _K.REJECT
    return tuple(
        " ".join(key)
        for key, entry in _LEXICON.items()
        if entry.kind is wanted and all(part.replace("'", "").isalpha() for part in key)
    )


_TOKEN = re.compile(
    r"(?P<skip>[^\S\n]+|[\u200d\ufe0e\ufe0f\u2640\u2642\U0001f3fb-\U0001f3ff]|:skin-tone-\d:)"
    r"|(?P<mention><[@#!][^>]*>)"
    r"|(?P<symbol>:[\w+-]+:|(?<!\w)[+-]1(?!\w)|[:;]-?[()dp](?!\w))"
    r"|(?P<word>[^\W_]+(?:['’ʼ-][^\W_]+)*)"
    r"|(?P<mark>.)",
    re.IGNORECASE | re.DOTALL,
)


class _Unreadable(Exception):
    """Raised inside the reading when a reply cannot be read with certainty."""


class _Sep(IntEnum):
    NONE = 0
    SOFT = 1  # a comma or a full stop
    EXPLICIT = 2  # ":", "-" or "because"


@dataclass(frozen=True, slots=True)
class _Token:
    group: str
    text: str
    start: int


@dataclass(frozen=True, slots=True)
class _Term:
    kind: _Kind
    verb: bool
    text: str
    start: int


@dataclass(frozen=True, slots=True)
class _Atom:
    """One verdict with its negation applied; spans terms ``first`` to ``last``."""

    approve: bool
    strong: bool
    verb: bool
    first: int
    last: int


@reply_interpreter(
    name="keyword-reply-interpreter",
    description="Reads approve / reject from a free-text reply by whole words and "
    "emoji; anything uncertain is not understood",
    decided_by=DecidedBy.CODE,
)
class KeywordReplyInterpreter:
    """Reads an approval reply by word tables; never sets ``override_arguments``."""

    def interpret(self, input: ReplyInput) -> ReplyInterpretation[ToolCallApprovalDecision]:
        try:
            decision = _read(input.reply)
        except _Unreadable as unreadable:
            return ReplyInterpretation.not_understood(reason=f"{unreadable} {HOW_TO_ANSWER}")
        return ReplyInterpretation.understood(decision)


def _read(reply: str) -> ToolCallApprovalDecision:
    terms = _terms(_tokens(reply))
    if all(term.kind in _BOUNDARIES for term in terms):
        raise _Unreadable("The reply has no words.")
    _check_question(terms)
    _check_blockers(terms)
    atoms = _atoms(terms)
    if len({atom.approve for atom in atoms}) > 1:
        raise _Unreadable("The reply both approves and rejects.")
    head, start, sep = _split(terms, atoms)
    approve = head[0].approve
    if approve:
        _check_unaltered(terms)
    reason = _reason(reply, terms[start:], sep, approve=approve, verb=any(a.verb for a in head))
    return ToolCallApprovalDecision(approved=approve, reason=reason)


def _tokens(reply: str) -> list[_Token]:
    return [
        _Token(match.lastgroup or "mark", _normalize(match.group()), match.start())
        for match in _TOKEN.finditer(reply)
        if match.lastgroup != "skip"
    ]


def _normalize(text: str) -> str:
    return text.lower().replace("’", "'").replace("ʼ", "'")


def _terms(tokens: Sequence[_Token]) -> list[_Term]:
    """Groups tokens into terms, the longest phrase of the lexicon first."""
    terms: list[_Term] = []
    i = 0
    while i < len(tokens):
        size, entry = _longest_phrase(tokens, i)
        entry = entry or _single(tokens[i])
        if entry is not None:
            text = " ".join(token.text for token in tokens[i : i + size])
            terms.append(_Term(entry.kind, entry.verb, text, tokens[i].start))
        i += size
    return terms


def _longest_phrase(tokens: Sequence[_Token], i: int) -> tuple[int, _Entry | None]:
    for size in range(min(_LONGEST, len(tokens) - i), 0, -1):
        entry = _LEXICON.get(tuple(token.text for token in tokens[i : i + size]))
        if entry is not None:
            return size, entry
    return 1, None


def _single(token: _Token) -> _Entry | None:
    if token.group == "mention":
        return _Entry(_K.FILLER)
    if token.group == "word":
        return _Entry(_K.NUMBER if any(c.isdigit() for c in token.text) else _K.WORD)
    if token.group == "mark" and token.text in _MARKS:
        return _Entry(_MARKS[token.text])
    if token.group == "symbol" or unicodedata.category(token.text) == "So":
        return _Entry(_K.WORD)  # an emoji or a shortcode we do not know
    return None  # other punctuation: quotes, brackets, Slack's * _ ` formatting


def _check_question(terms: Sequence[_Term]) -> None:
    first = next((term for term in terms if term.kind not in _QUIET), None)
    is_question = first is not None and first.kind is _K.QUESTION
    if is_question or any(term.kind is _K.QMARK for term in terms):
        raise _Unreadable("The reply reads as a question.")


def _check_blockers(terms: Sequence[_Term]) -> None:
    for kind, cause in _BLOCKERS:
        found = next((term for term in terms if term.kind is kind), None)
        if found is not None:
            raise _Unreadable(cause.format(found.text))


def _check_unaltered(terms: Sequence[_Term]) -> None:
    altering = frozenset({_K.NEGATOR, _K.NUMBER, _K.COMPARE})
    found = next((term for term in terms if term.kind in altering), None)
    if found is not None:
        raise _Unreadable(f'An approval cannot carry "{found.text}": it may change the call.')


def _atoms(terms: Sequence[_Term]) -> list[_Atom]:
    """Finds the verdicts; a negator binds to the next verdict of its clause."""
    atoms: list[_Atom] = []
    pending: list[int] = []
    for i, term in enumerate(terms):
        if term.kind is _K.NEGATOR:
            pending.append(i)
        elif term.kind in _SIDES:
            atoms.append(_atom(terms, i, pending))
            pending = []
        elif term.kind in _BOUNDARIES:
            atoms.extend(_standalone(terms, pending))
            pending = []
    atoms.extend(_standalone(terms, pending))
    return atoms


def _atom(terms: Sequence[_Term], i: int, negators: Sequence[int]) -> _Atom:
    approve, strong = _SIDES[terms[i].kind]
    if not negators:
        return _Atom(approve, strong, terms[i].verb, i, i)
    if len(negators) > 1 or not approve:
        raise _Unreadable("The reply negates a negation.")
    return _Atom(False, strong, terms[i].verb, negators[0], i)


def _standalone(terms: Sequence[_Term], negators: Sequence[int]) -> list[_Atom]:
    """A lone "never" / "don't" rejects: "please don't!" but not "don't worry about it"."""
    if len(negators) != 1 or terms[negators[0]].text not in _STANDALONE_REJECTIONS:
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
        raise _Unreadable(
            f'Cannot tell what "{found}" refers to.' if negation else "No verdict found."
        )
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
    if sep is _Sep.NONE:
        word = next(term.text for term in rest if term.kind not in _QUIET)
        raise _Unreadable(f'Cannot tell what "{word}" after the verdict means.')
    if sep is _Sep.SOFT and (approve or not verb):
        raise _Unreadable('Put a reason after a colon: "reject: <reason>".')
    return reply[rest[0].start :].strip()[:_MAX_REASON]
