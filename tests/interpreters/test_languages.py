"""The keyword interpreter beyond English: each language's set of replies, Slack's markup in
every language, the languages setting, and the hint in the language the reply was read in."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bot.core.dtos import ToolCallApprovalDecision
from bot.core.reply import ReplyInput, ReplyInterpretation
from interpreters import KeywordReplyInterpreter, keyword, reading
from interpreters.keyword import HOW_TO_ANSWER, how_to_answer, reply_help
from interpreters.languages import LANGUAGE_CODES, language_of
from tests.interpreters.score import ASK, SET_LANGUAGES, cases_of, is_misread, score, verdict

INTERPRETER = KeywordReplyInterpreter()
TRICKY = ("negation", "condition", "partial", "question", "irony")


def interpret(
    reply: str, interpreter: KeywordReplyInterpreter = INTERPRETER
) -> ReplyInterpretation[ToolCallApprovalDecision]:
    return interpreter.interpret(ReplyInput(ask=ASK, reply=reply))


@pytest.mark.parametrize(
    ("reply", "meant"),
    [
        pytest.param(reply, meant, id=f"{language}:{kind}:{reply!r}")
        for language in SET_LANGUAGES
        for kind, reply, meant in cases_of(language)
    ],
)
def test_no_reply_of_a_set_is_misread(reply: str, meant: object) -> None:
    result = interpret(reply)

    assert not is_misread(result, meant), result  # type: ignore[arg-type]


@pytest.mark.parametrize("language", SET_LANGUAGES)
def test_each_set_is_large_tricky_and_read_as_meant(language: str) -> None:
    cases = cases_of(language)
    replies = [reply for _, reply, _ in cases]
    kinds = {kind for kind, _, _ in cases}
    result = score(language)
    print(f"{language}: {result.replies} replies, {len(result.misreads)} misreads, "
          f"{result.read_as_meant:.0%} read as meant")  # fmt: skip

    assert len(set(replies)) == len(replies), "a reply is in the set twice"
    assert len(cases) >= 40
    assert set(TRICKY) <= kinds
    assert result.misreads == ()
    assert result.read_as_meant >= 0.85


@pytest.mark.parametrize("language", SET_LANGUAGES)
def test_a_set_read_in_its_language_alone_misreads_nothing(language: str) -> None:
    result = score(language, KeywordReplyInterpreter(languages=[language]))

    assert result.misreads == ()


def test_the_english_set_reads_alike_in_english_alone_and_in_every_language() -> None:
    alone = KeywordReplyInterpreter(languages=["en"])
    for _, reply, _ in cases_of("en"):
        assert interpret(reply, alone).value == interpret(reply).value, reply


# ------------------------------------------------ negations that must never approve

NEVER_APPROVE = {
    "de": ["nicht genehmigt", "ich genehmige das nicht", "nicht freigeben", "kein ok"],
    "fr": [
        "je n'approuve pas",
        "je n’approuve pas",
        "pas approuvé",
        "non validé",
        "ne validez pas",
    ],
    "es": ["no lo apruebo", "no aprobado", "no apruebo", "no, no lo apruebo", "no está bien"],
    "pt": ["não aprovado", "nao aprovado", "não aprovo", "não aprovo não", "não pode"],
    "nl": ["niet goedgekeurd", "ik keur het niet goed", "niet akkoord", "ik accepteer dit niet"],
    "it": ["non approvato", "non lo approvo", "non l'approvo", "non va bene"],
    "ja": ["承認しません", "承認できません", "承認しない", "許可しません", "認めません"],
}


@pytest.mark.parametrize(
    ("language", "reply"),
    [(language, reply) for language, replies in NEVER_APPROVE.items() for reply in replies],
)
def test_a_negated_approval_never_approves(language: str, reply: str) -> None:
    for interpreter in (INTERPRETER, KeywordReplyInterpreter(languages=[language])):
        for shaped in (reply, reply.upper(), f"*{reply}*", f"{reply}!", f"<@U0CFO123> {reply}"):
            assert verdict(interpret(shaped, interpreter)) is not True, shaped


NEGATED_REJECTIONS = {
    "de": ["nicht abgelehnt", "ich lehne das nicht ab"],
    "fr": ["je ne refuse pas", "pas refusé"],
    "es": ["no rechazado", "no lo rechaces"],
    "pt": ["não rejeitado", "não recuse"],
    "nl": ["niet afgekeurd", "ik weiger het niet"],
    "it": ["non rifiutato", "non rifiutarlo"],
    "ja": ["却下しません", "拒否しない"],
}


@pytest.mark.parametrize(
    ("language", "reply"),
    [(language, reply) for language, replies in NEGATED_REJECTIONS.items() for reply in replies],
)
def test_a_negated_rejection_is_not_understood(language: str, reply: str) -> None:
    assert not interpret(reply).is_understood
    assert not interpret(reply, KeywordReplyInterpreter(languages=[language])).is_understood


# ------------------------------------------------------------------ Slack's markup

APPROVALS = {"en": "approved", "de": "genehmigt", "fr": "validé", "es": "aprobado",
             "pt": "aprovado", "nl": "goedgekeurd", "it": "approvato",
             "ja": "承認します"}  # fmt: skip
REJECTIONS = {"en": "rejected", "de": "abgelehnt", "fr": "refusé", "es": "rechazado",
              "pt": "rejeitado", "nl": "afgekeurd", "it": "rifiutato",
              "ja": "却下します"}  # fmt: skip


@pytest.mark.parametrize("language", LANGUAGE_CODES)
@pytest.mark.parametrize(
    ("shape", "meant"),
    [
        ("<@U024BE7LH> {a}", True),  # addressed to someone: the person's own answer
        ("cc <@U0CFO123> {a}", None),  # someone else approved: not the person's answer
        ("{a} :+1::skin-tone-3:", True),
        ("{a} 👍🏽", True),
        ("{r} 👎🏿", False),
        ("*{a}*", True),
        ("_{r}_", False),
        ("`{a}`", True),
        ("~{a}~", None),
        ("&gt; refund 100 to c-17\n{a}", True),  # a quoted question, then the answer
        ("&gt; {r}\n👍", None),  # agreeing with a quoted verdict: not understood
        ("&gt; {a}", None),
        ("{a}: <https://jira.example.com/browse/T-1|T-1>", True),  # a link is no number
        ("{a} &amp; 👍", True),
        ("{a} &lt;3", None),
        ("{a} 🙄", None),
    ],
)
def test_slack_markup_is_read_as_meant_or_not_understood(
    language: str, shape: str, meant: bool | None
) -> None:
    reply = shape.format(a=APPROVALS[language], r=REJECTIONS[language])
    for interpreter in (INTERPRETER, KeywordReplyInterpreter(languages=[language])):
        result = interpret(reply, interpreter)
        if meant is None:
            assert not result.is_understood, (reply, result)
        else:
            assert verdict(result) is meant, (reply, result)


def test_entities_are_read_as_the_characters_they_stand_for_in_a_reason() -> None:
    result = interpret("abgelehnt: Betrag &gt; Limit &amp; Kunde &lt; 18")

    assert result.value == ToolCallApprovalDecision(
        approved=False, reason="Betrag > Limit & Kunde < 18"
    )


def test_a_link_keeps_its_markup_in_the_reason() -> None:
    result = interpret("rechazado: duplicado de <https://jira.example.com/browse/T-1|T-1>")

    assert result.value == ToolCallApprovalDecision(
        approved=False, reason="duplicado de <https://jira.example.com/browse/T-1|T-1>"
    )


@pytest.mark.parametrize("reply", ["¡Aprobado!", "¡sí!", "¡No!", "¿aprobado?", "¿Lo apruebo"])
def test_inverted_marks_read_as_emphasis_and_question(reply: str) -> None:
    expected = {"¡Aprobado!": True, "¡sí!": True, "¡No!": False}.get(reply)

    assert verdict(interpret(reply)) is expected


# ------------------------------------------------------------ the languages setting


def test_by_default_every_language_is_read() -> None:
    for language in LANGUAGE_CODES:
        assert verdict(interpret(APPROVALS[language])) is True, language


def test_languages_narrow_what_is_read() -> None:
    german_and_english = KeywordReplyInterpreter(languages=["de", "en"])

    assert verdict(interpret("genehmigt", german_and_english)) is True
    assert verdict(interpret("approved", german_and_english)) is True
    assert not interpret("validé", german_and_english).is_understood
    assert not interpret("承認します", german_and_english).is_understood


def test_a_role_names_its_languages_on_its_interpreter_class() -> None:
    class FrenchReplies(KeywordReplyInterpreter):
        languages = ("fr",)

    assert verdict(interpret("validé", FrenchReplies())) is True
    assert not interpret("approved", FrenchReplies()).is_understood
    assert verdict(interpret("approved", FrenchReplies(languages=["en"]))) is True


def test_a_subclass_with_an_init_of_its_own_still_reads_its_languages() -> None:
    class WithDeps(KeywordReplyInterpreter):
        languages = ("nl",)

        def __init__(self, context: object = None) -> None:  # no super().__init__()
            self.context = context

    assert verdict(interpret("goedgekeurd", WithDeps())) is True
    assert not interpret("approved", WithDeps()).is_understood


def test_a_region_is_ignored_and_case_too() -> None:
    assert verdict(interpret("aprovado", KeywordReplyInterpreter(languages=["pt-BR"]))) is True
    assert verdict(interpret("genehmigt", KeywordReplyInterpreter(languages=["DE"]))) is True


@pytest.mark.parametrize("languages", [["xx"], [], "de"])
def test_a_language_it_cannot_read_is_refused_where_it_is_named(languages: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        KeywordReplyInterpreter(languages=languages)  # type: ignore[arg-type]


def test_a_role_naming_a_language_it_cannot_read_fails_where_it_is_written() -> None:
    with pytest.raises(ValueError, match="klingon"):

        class KlingonReplies(KeywordReplyInterpreter):
            languages = ("klingon",)


# ----------------------------------------------------- the hint in the person's language


@pytest.mark.parametrize(
    ("reply", "language"),
    [("genehmigt?", "de"), ("oui mais seulement la moitié", "fr"), ("¿lo apruebo?", "es"),
     ("não sei", "pt"), ("misschien", "nl"), ("forse", "it"), ("承認しますか？", "ja"),
     ("approve?", "en")],
)  # fmt: skip
def test_a_reply_not_understood_is_answered_in_its_language(reply: str, language: str) -> None:
    result = interpret(reply)

    assert not result.is_understood
    assert result.language == language
    assert result.reason is not None
    assert result.reason.endswith(language_of(language).hint)


@pytest.mark.parametrize(
    ("reply", "said"),
    [("genehmigen?", "Die Antwort liest sich als Frage. Antworte „genehmigt“"),
     ("oui mais seulement la moitié", "La réponse revient sur quelque chose ou fait une "
      "exception (« mais »). Répondez « approuvé »"),
     ("sí, si el importe es menor", "La respuesta pone una condición («si»). Responde"),
     ("承認しますか", "返信が質問として読めます。「承認」")],
)  # fmt: skip
def test_why_is_said_in_the_language_too(reply: str, said: str) -> None:
    reason = interpret(reply).reason

    assert reason is not None
    assert reason.startswith(said)


def test_every_language_says_every_cause() -> None:
    source = "".join(Path(module.__file__ or "").read_text(encoding="utf-8")
                     for module in (reading, keyword))  # fmt: skip
    english = {cause for _, cause in re.findall(r"""Unreadable\(\s*(['"])(.+?)\1""", source)}
    english |= {cause for _, cause in reading._BLOCKERS}
    for language in LANGUAGE_CODES[1:]:
        causes = language_of(language).causes
        assert set(causes) == english, language
        for cause, said in causes.items():
            assert said.count("{}") == cause.count("{}"), (language, cause)


@pytest.mark.parametrize("reply", ["👀", "lol", "xyz", "no?"])
def test_a_reply_of_no_one_language_is_answered_in_english(reply: str) -> None:
    result = interpret(reply)

    assert result.language is None
    assert result.reason is not None
    assert result.reason.endswith(HOW_TO_ANSWER)


def test_an_understood_reply_names_its_language() -> None:
    assert interpret("abgelehnt: zu teuer").language == "de"
    assert interpret("👍").language is None


@pytest.mark.parametrize("language", LANGUAGE_CODES)
def test_the_replies_shown_to_people_read_as_said(language: str) -> None:
    table = language_of(language)
    help_text = reply_help(language)
    reply, reason = table.rejection_with_reason
    for interpreter in (INTERPRETER, KeywordReplyInterpreter(languages=[language])):
        for word in table.approvals:
            assert word in help_text
            assert verdict(interpret(word, interpreter)) is True, word
        for word in table.rejections:
            assert word in help_text
            assert verdict(interpret(word, interpreter)) is False, word
        assert reply in help_text
        assert interpret(reply, interpreter).value == ToolCallApprovalDecision(
            approved=False, reason=reason
        )
    assert how_to_answer(language) == table.hint


@pytest.mark.parametrize("language", [None, "sv", "", "zh-Hans"])
def test_no_language_or_one_it_does_not_read_means_english(language: str | None) -> None:
    assert how_to_answer(language) == HOW_TO_ANSWER  # another interpreter may name any language
    assert reply_help(language) == reply_help("en")


# ------------------------------------------------------------------------ properties

SET_REPLIES = [
    (reply, meant) for language in SET_LANGUAGES for _, reply, meant in cases_of(language)
]
APPROVING = sorted({reply for reply, meant in SET_REPLIES if meant.approved is True})
REJECTING = sorted({reply for reply, meant in SET_REPLIES if meant.approved is False})
NEGATORS = ["not", "nicht", "kein", "pas", "ne", "n'", "non", "no", "não", "nao", "niet", "geen",
            "ni", "nem", "mai", "nunca", "jamais", "nie", "nooit", "ません", "ない"]  # fmt: skip
QUICK = settings(database=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150)


@QUICK
@given(st.sampled_from(APPROVING), st.sampled_from(NEGATORS), st.sampled_from([" ", ""]))
def test_a_negation_before_an_approval_never_approves(
    approval: str, negator: str, space: str
) -> None:
    assert verdict(interpret(f"{negator}{space}{approval}")) is not True


@QUICK
@given(st.sampled_from(APPROVING), st.sampled_from(NEGATORS), st.sampled_from([" ", ""]))
def test_a_negation_after_an_approval_never_approves(
    approval: str, negator: str, space: str
) -> None:
    assume(space or negator >= "\u3040")  # but for Japanese, "VIPnot" is a word, not a negation
    assume(not negator.endswith("'"))  # an elision with nothing to elide negates nothing
    assert verdict(interpret(f"{approval}{space}{negator}")) is not True


@QUICK
@given(st.sampled_from(REJECTING), st.lists(st.sampled_from(NEGATORS), min_size=1, max_size=3))
def test_negating_a_rejection_in_any_language_never_approves(
    rejection: str, negators: list[str]
) -> None:
    assert verdict(interpret(" ".join([*negators, rejection]))) is not True
    assert verdict(interpret(" ".join([rejection, *negators]))) is not True


@QUICK
@given(st.sampled_from(APPROVING), st.sampled_from(REJECTING), st.sampled_from([" ", ", ", "\n"]))
def test_an_approval_and_a_rejection_together_are_never_an_approval(
    approval: str, rejection: str, between: str
) -> None:
    # a rejection may be a negation: "j'approuve jamais", "mai certo" reject
    assert verdict(interpret(f"{approval}{between}{rejection}")) is not True
    assert verdict(interpret(f"{rejection}{between}{approval}")) is not True


@QUICK
@given(st.sampled_from([reply for reply, _ in SET_REPLIES]))
def test_casing_and_accents_never_turn_a_verdict_around(reply: str) -> None:
    read = verdict(interpret(reply))
    for shaped in (reply.upper(), reply.lower(), unicodedata.normalize("NFD", reply)):
        again = verdict(interpret(shaped))
        assert again is None or read is None or again is read, shaped


VOCABULARY = sorted(
    {word for reply, _ in SET_REPLIES for word in reply.split()}
    | set(NEGATORS)
    | {"?", "¿", "¡", ",", ":", "-", "weil", "parce que", "porque", "omdat", "perché", "mais"}
)
WORDY = st.lists(st.sampled_from(VOCABULARY), max_size=8).map(" ".join)


@QUICK
@given(WORDY)
def test_any_words_are_a_decision_or_not_understood_in_the_language_read(reply: str) -> None:
    result = interpret(reply)

    if result.is_understood:
        assert result.value is not None and result.reason is None
    else:
        assert result.value is None and result.reason is not None
        assert result.reason.endswith(how_to_answer(result.language))


@QUICK
@given(st.tuples(st.sampled_from(REJECTING), st.sampled_from([" ", ": ", ", "]),
                 WORDY).map("".join),
       st.lists(st.sampled_from(NEGATORS), min_size=1, max_size=2))  # fmt: skip
def test_negating_what_rejects_in_any_words_never_approves(reply: str, negators: list[str]) -> None:
    assume(verdict(interpret(reply)) is False)
    for negator in negators:
        assert verdict(interpret(f"{negator} {reply}")) is not True, f"{negator} {reply}"
        assert verdict(interpret(f"{reply} {negator}")) is not True, f"{reply} {negator}"
