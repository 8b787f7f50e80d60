"""What a reply interpreter's model reads, through the application's and the workflow's PII
policies (``bot.core.pii``), and how its answer is revealed again.

``shield`` gives the question and the reply as the model reads them (sensitive fields masked,
values tokenised, or ``PiiRefusedError``); ``Shielded.reveal`` puts the real values back into the
model's answer before it is validated, or raises ``UnknownTokenError`` for a token the reading
never gave out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from bot.core.errors import PiiRefusedError
from bot.core.pii import PiiAction, PiiDetector, PiiPolicy, SensitiveFields
from bot.core.reply import ReplyInput
from bot.core.sensitive import MASK
from bot.runtime.assembly import Assembly
from bot.store.records import ExecutionRow

TOKEN = re.compile(r"<([A-Z][A-Z_]*)_(\d+)>")
_STRICTNESS = {
    PiiAction.ALLOW_UNMASKED: 0,
    PiiAction.REPLACE_WITH_TOKEN: 1,
    PiiAction.BLOCK_WITH_REFUSAL: 2,
}


class UnknownTokenError(ValueError):
    """The model's answer holds a token no value was replaced with: a decline."""


@dataclass(slots=True)
class TokenMap:
    """Tokens given out in one reading: the same value is the same token."""

    labels: set[str] = field(default_factory=set)
    reserved: set[str] = field(default_factory=set)  # token-like texts that were in the input
    values: dict[str, Any] = field(default_factory=dict)
    _by_value: dict[tuple[str, str], str] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)

    def token_for(self, label: str, value: Any) -> str:
        self.labels.add(label)
        key = (label, repr(value))
        token = self._by_value.get(key)
        if token is None:
            token = self._next(label)
            self._by_value[key] = token
            self.values[token] = value
        return token

    def _next(self, label: str) -> str:
        while True:
            self._counts[label] = self._counts.get(label, 0) + 1
            token = f"<{label}_{self._counts[label]}>"
            if token not in self.reserved:
                return token

    def reveal(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._reveal_text(value)
        if isinstance(value, dict):
            return {key: self.reveal(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.reveal(item) for item in value]
        return value

    def _reveal_text(self, text: str) -> Any:
        if text in self.values:
            return self.values[text]  # the whole value: its original type too
        return TOKEN.sub(self._revealed, text)

    def _revealed(self, match: re.Match[str]) -> str:
        token = match.group()
        if token in self.values:
            return str(self.values[token])
        if token in self.reserved or match.group(1) not in self.labels:
            return token  # a literal text, not one of ours
        raise UnknownTokenError(f"the model answered with {token}, a token this reading never gave")


@dataclass(frozen=True, slots=True, kw_only=True)
class Shielded:
    """The question (``ask``, as JSON-ready data) and the reply as the model reads them."""

    ask: dict[str, Any]
    reply: str
    tokens: TokenMap
    masked: Mapping[str, Any]  # sensitive fields the model read as a mask → their values

    def reveal(self, answer: Any) -> Any:
        """The model's answer with the real values back (``UnknownTokenError`` for a decline)."""
        revealed = self.tokens.reveal(answer)
        overrides = revealed.get("override_arguments") if isinstance(revealed, dict) else None
        if isinstance(overrides, dict):
            revealed["override_arguments"] = {
                key: (self.masked[key] if value == MASK and key in self.masked else value)
                for key, value in overrides.items()
            }
        return revealed


def shield(
    policies: Sequence[PiiPolicy], reply_input: ReplyInput, sensitive: frozenset[str]
) -> Shielded:
    """The question and the reply through ``policies``; ``PiiRefusedError`` if one blocks."""
    field_action = _sensitive_action(policies)
    texts = [p for p in policies if not isinstance(p.detector, SensitiveFields)]
    tokens = TokenMap(reserved=set(_token_like(reply_input)))
    arguments: dict[str, Any] = {}
    masked: dict[str, Any] = {}
    for key, value in reply_input.ask.arguments.items():
        if key not in sensitive:
            arguments[key] = _walk(value, texts, tokens, f"the question's argument '{key}'")
            continue
        match field_action:
            case None:
                arguments[key] = MASK
                masked[key] = value
            case PiiAction.ALLOW_UNMASKED:
                arguments[key] = _walk(value, texts, tokens, f"the question's argument '{key}'")
            case PiiAction.REPLACE_WITH_TOKEN:
                arguments[key] = tokens.token_for(SensitiveFields().label, value)
            case PiiAction.BLOCK_WITH_REFUSAL:
                raise _refused("a sensitive field", f"the question's argument '{key}'")
            case _:
                assert_never(field_action)
    hidden = {
        str(value): str(arguments[key])
        for key, value in reply_input.ask.arguments.items()
        if key in sensitive and len(str(value)) >= 3 and str(value) != str(arguments[key])
    }
    reply = _scrub(_hide_verbatim(reply_input.reply, hidden), texts, tokens, "the reply")
    ask = {**reply_input.ask.model_dump(mode="json"), "arguments": arguments}
    return Shielded(ask=ask, reply=reply, tokens=tokens, masked=masked)


def _sensitive_action(policies: Sequence[PiiPolicy]) -> PiiAction | None:
    actions = [p.action for p in policies if isinstance(p.detector, SensitiveFields)]
    return max(actions, key=_STRICTNESS.__getitem__) if actions else None


def _token_like(reply_input: ReplyInput) -> list[str]:
    found = TOKEN.findall(reply_input.reply)
    found += TOKEN.findall(repr(reply_input.ask.arguments))
    return [f"<{label}_{number}>" for label, number in found]


def _walk(value: Any, policies: Sequence[PiiPolicy], tokens: TokenMap, where: str) -> Any:
    if isinstance(value, str):
        return _scrub(value, policies, tokens, where)
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
        scrubbed = _scrub(text, policies, tokens, where, whole=value)
        return value if scrubbed == text else scrubbed
    if isinstance(value, dict):
        return {key: _walk(item, policies, tokens, where) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, policies, tokens, where) for item in value]
    return value


def _scrub(
    text: str,
    policies: Sequence[PiiPolicy],
    tokens: TokenMap,
    where: str,
    *,
    whole: Any = None,
) -> str:
    """``text`` with each value a replace policy finds as a token (``whole``: the original)."""
    found: list[tuple[int, int, str]] = []
    for policy in policies:
        detector = policy.detector
        assert isinstance(detector, PiiDetector)
        for match in detector.find(text):
            match policy.action:
                case PiiAction.BLOCK_WITH_REFUSAL:
                    raise _refused(detector.label, where)
                case PiiAction.REPLACE_WITH_TOKEN:
                    found.append((match.start, match.end, detector.label))
                case PiiAction.ALLOW_UNMASKED:
                    pass
                case _:
                    assert_never(policy.action)
    pieces: list[str] = []
    position = 0
    for start, end, label in sorted(found, key=lambda f: (f[0], f[0] - f[1])):
        if start < position:
            continue  # overlaps a longer match found first
        value = whole if whole is not None and (start, end) == (0, len(text)) else text[start:end]
        pieces += [text[position:start], tokens.token_for(label, value)]
        position = end
    return "".join([*pieces, text[position:]])


def _hide_verbatim(reply: str, hidden: Mapping[str, str]) -> str:
    for value in sorted(hidden, key=len, reverse=True):
        reply = reply.replace(value, hidden[value])
    return reply


def _refused(label: str, where: str) -> PiiRefusedError:
    return PiiRefusedError(
        f"a PII policy blocks {label} in {where}: the reply interpreter's model was not "
        "called and the pause still waits; answer with a decision instead"
    )


def policies_of(assembly: Assembly, chain: Sequence[ExecutionRow]) -> list[PiiPolicy]:
    """The application's policies, then each workflow's from the root down to the execution."""
    policies = list(assembly.application.pii_policies)
    workflows = {spec.name: spec for spec in assembly.workflows.values()}
    for row in reversed(chain):
        spec = workflows.get(row.workflow)
        if spec is not None:
            policies.extend(spec.pii_policies)
    return [policy for policy in policies if isinstance(policy, PiiPolicy)]
