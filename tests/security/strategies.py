"""Hypothesis strategies for forged and malformed Slack requests and for decisions.

The pause id is only known once a test has made its pause, so strategies write it as the marker
``{pause}`` (``{PAUSE}`` for its upper-case spelling) inside strings; :func:`with_pause` puts
the real id in before a request is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, overload
from urllib.parse import urlencode

from hypothesis import strategies as st

from channels.slack.render import (
    APPROVE_ACTION,
    APPROVE_ALL_ACTION,
    EDIT_ACTION,
    EDIT_MODAL,
    PENDING_PAGE_ACTION,
    REJECT_ACTION,
    REJECT_MODAL,
)
from tests.slack.conftest import interactive_body
from tests.slack.office import ACCOUNTANT, APPROVALS, MANAGER, OWNER, STRANGER
from tests.slack.stub import TEAM

PAUSE = "{pause}"
PAUSE_UPPER = "{PAUSE}"
OTHER_TEAM = "T0OTHERTEAM"
FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


@overload
def with_pause(tree: str, pause_id: str) -> str: ...
@overload
def with_pause(tree: Any, pause_id: str) -> Any: ...
def with_pause(tree: Any, pause_id: str) -> Any:
    """``tree`` with the pause markers replaced by ``pause_id`` in every string."""
    if isinstance(tree, str):
        return tree.replace(PAUSE, pause_id).replace(PAUSE_UPPER, pause_id.upper())
    if isinstance(tree, Mapping):
        return {with_pause(k, pause_id): with_pause(v, pause_id) for k, v in tree.items()}
    if isinstance(tree, list | tuple):
        return [with_pause(item, pause_id) for item in tree]
    return tree


# ------------------------------------------------------------------------------- text and JSON

lone_surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
adversarial_text = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(st.one_of(st.characters(), lone_surrogates), max_size=10),
    st.sampled_from(["", " ", "\x00", "null", "{}", "<@U0MANAGER>", "'; drop table pauses;--"]),
    st.builds(lambda n: "x" * n, st.integers(3000, 40_000)),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=30),
    st.text(st.one_of(st.characters(), lone_surrogates), max_size=10),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=12), json_values, max_size=6)

# ------------------------------------------------------------------------------- Slack fields

slack_users = st.sampled_from([MANAGER, STRANGER, OWNER, ACCOUNTANT]) | st.text(max_size=12)
slack_teams = st.sampled_from([TEAM, TEAM, OTHER_TEAM])
action_ids = st.sampled_from(
    [
        APPROVE_ACTION,
        f"{APPROVE_ACTION}:2",
        REJECT_ACTION,
        EDIT_ACTION,
        PENDING_PAGE_ACTION,
        APPROVE_ALL_ACTION,
        f"{APPROVE_ACTION}:../x",
        APPROVE_ACTION.upper(),
        "approve",
    ]
) | st.text(max_size=30)
pause_id_lookalikes = st.one_of(
    st.text("0123456789abcdef", min_size=32, max_size=32),  # valid-looking, not a pause
    st.sampled_from(
        [PAUSE_UPPER, f"{PAUSE} ", f" {PAUSE}", f"{PAUSE}{PAUSE}", f"{PAUSE}0", "0" * 32, "g" * 32]
    ),
    st.text("0123456789abcdefxyz-", min_size=0, max_size=64),
    adversarial_text,
)
button_values = st.one_of(st.just(PAUSE), pause_id_lookalikes)


@dataclass(frozen=True, slots=True, kw_only=True)
class Click:
    """A block_actions click; ``allowed`` when it must approve the pause."""

    user: str
    team: str
    action_id: str
    value: str
    home: bool
    ephemeral: bool

    def payload(self, response_url: str) -> dict[str, Any]:
        container: dict[str, Any] = (
            {"type": "view", "view_id": "V0HOME"}
            if self.home
            else {
                "type": "message",
                "message_ts": "1700000000.000001",
                "channel_id": APPROVALS,
                "is_ephemeral": self.ephemeral,
            }
        )
        return {
            "type": "block_actions",
            "team": {"id": self.team, "domain": "acme"},
            "user": {"id": self.user, "team_id": self.team},
            "api_app_id": "A0APP",
            "container": container,
            "channel": {"id": APPROVALS},
            "trigger_id": "trigger-1",
            "response_url": response_url,
            "actions": [
                {
                    "type": "button",
                    "action_id": self.action_id,
                    "value": self.value,
                    "block_id": "b",
                }
            ],
        }


clicks = st.builds(
    Click,
    user=slack_users,
    team=slack_teams,
    action_id=action_ids,
    value=button_values,
    home=st.booleans(),
    ephemeral=st.booleans(),
)

Tampering = Literal[
    "random", "pause swapped", "mac changed", "other secret", "other kind", "other user", "stranger"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Submission:
    """A view_submission whose ``private_metadata`` is tampered with as ``tampering`` says."""

    user: str
    callback_id: str
    tampering: Tampering
    random_metadata: str
    values: dict[str, Any]


edit_like_values = st.fixed_dictionaries(
    {
        "order_id": st.fixed_dictionaries({"value": st.fixed_dictionaries({"value": json_values})}),
        "amount": st.fixed_dictionaries({"value": st.fixed_dictionaries({"value": json_values})}),
        "reason": st.fixed_dictionaries({"reason": st.fixed_dictionaries({"value": json_values})}),
    }
)
submissions = st.builds(
    Submission,
    user=slack_users,
    callback_id=st.sampled_from([REJECT_MODAL, EDIT_MODAL]) | st.text(max_size=20),
    tampering=st.sampled_from(
        [
            "random",
            "pause swapped",
            "mac changed",
            "other secret",
            "other kind",
            "other user",
            "stranger",
        ]
    ),
    random_metadata=pause_id_lookalikes,
    values=edit_like_values | json_objects,
)

# ----------------------------------------------------------------------- whole request bodies


@dataclass(frozen=True, slots=True, kw_only=True)
class Body:
    """A request body as sent (``{pause}`` markers still in), with its content type."""

    text: str
    content_type: str


def _interactive(payload: dict[str, Any]) -> Body:
    return Body(text=interactive_body(payload), content_type=FORM)


def _payload_shaped(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "team": {"id": TEAM}, "user": {"id": MANAGER, "team_id": TEAM}, **extra}


interactive_payload_types = st.sampled_from(
    [
        "block_actions",
        "view_submission",
        "view_closed",
        "shortcut",
        "message_action",
        "block_suggestion",
    ]
) | st.text(max_size=15)
shaped_interactive_bodies = st.builds(
    lambda kind, extra: _interactive(_payload_shaped(kind, extra)),
    interactive_payload_types,
    json_objects,
)
click_bodies = st.builds(lambda click: _interactive(click.payload("http://127.0.0.1:9/x")), clicks)
event_bodies = st.builds(
    lambda event, extra: Body(
        text=json.dumps(
            {
                "type": "event_callback",
                "team_id": TEAM,
                "event_id": "Ev0001",
                "event": event,
                **extra,
            }
        ),
        content_type=JSON,
    ),
    json_objects
    | st.just(
        {
            "type": "message",
            "user": MANAGER,
            "text": "approve",
            "ts": "1.2",
            "thread_ts": "1700000000.000001",
            "channel": APPROVALS,
        }
    ),
    json_objects,
)
command_bodies = st.builds(
    lambda command, text, extra: Body(
        text=urlencode(
            {"command": command, "text": text, "team_id": TEAM, "user_id": MANAGER, **extra},
            errors="surrogatepass",
        ),
        content_type=FORM,
    ),
    st.sampled_from(["/pending", "/approve"]) | st.text(max_size=10),
    st.text(max_size=40) | button_values,
    st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=4),
)
random_json_bodies = st.builds(
    lambda value: Body(text=json.dumps(value), content_type=JSON), json_values
)
random_form_bodies = st.builds(
    lambda fields: Body(text=urlencode(fields), content_type=FORM),
    st.dictionaries(st.text(max_size=10), st.text(max_size=30), max_size=6),
)
slack_shaped_bodies = st.one_of(
    click_bodies, shaped_interactive_bodies, event_bodies, command_bodies
)
any_bodies = st.one_of(slack_shaped_bodies, random_json_bodies, random_form_bodies)
random_bytes = st.binary(max_size=300)

BadSignature = Literal[
    "missing", "wrong secret", "stale", "future", "another body", "garbage", "no timestamp"
]
bad_signatures: st.SearchStrategy[BadSignature] = st.sampled_from(
    ["missing", "wrong secret", "stale", "future", "another body", "garbage", "no timestamp"]
)

# ------------------------------------------------------------------------------- decisions

override_arguments = st.one_of(
    st.none(),
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "order_id": json_values,
            "amount": st.one_of(st.floats(), st.integers(), st.text(max_size=8)),
            "email": json_values,
            "unknown": json_values,
        },
    ),
)
decision_shaped_dicts = st.fixed_dictionaries(
    {},
    optional={
        "approved": st.one_of(st.booleans(), json_values, st.sampled_from(["true", "yes", 1, 0])),
        "reason": st.one_of(st.none(), adversarial_text, json_values),
        "override_arguments": override_arguments,
        "extra": json_values,
    },
)
decisions = st.one_of(decision_shaped_dicts, json_values, st.builds(object))
answered_by_values = st.sampled_from([MANAGER, "api"]) | st.text(max_size=12)

# ------------------------------------------------------------------------------- the raw edge

RUNS = {'{"a":': ("}", 1), "[": ("]", 1), '{"a":[': ("]}", 2), '[{"b":': ("}]", 2)}
"""An opening run, its closing, and how many levels of nesting it opens."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Nested:
    """A body nesting ``repeat`` runs, as raw JSON, inside an event, or as a form payload."""

    run: str
    repeat: int
    wrapper: Literal["json", "event", "form"]

    @property
    def levels(self) -> int:
        """How deep the JSON that Bolt would parse nests."""
        return self.repeat * RUNS[self.run][1] + (1 if self.wrapper == "event" else 0)

    def body(self) -> Body:
        closing = RUNS[self.run][0]
        inner = self.run * self.repeat + "1" + closing * self.repeat
        match self.wrapper:
            case "json":
                return Body(text=inner, content_type=JSON)
            case "event":
                text = f'{{"type": "event_callback", "team_id": "{TEAM}", "event": {inner}}}'
                return Body(text=text, content_type=JSON)
            case "form":
                return Body(text=urlencode({"payload": inner}), content_type=FORM)


nested_bodies = st.builds(
    Nested,
    run=st.sampled_from(sorted(RUNS)),
    repeat=st.one_of(st.integers(1, 40), st.integers(28, 70), st.integers(900, 5000)),
    wrapper=st.sampled_from(["json", "event", "form"]),
)

KNOWN_CHARSETS = ("utf-8", "UTF-8", "utf8", " utf-8 ", "us-ascii", "ascii")
charsets = st.one_of(
    st.sampled_from([*KNOWN_CHARSETS, "latin-1", "utf-16", "utf-7", "cp1252", "no-such", ""]),
    st.text(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='";,\\'),
        max_size=60,
    ),
)

header_text = st.one_of(
    st.text(st.characters(exclude_characters="\r\n\x00"), max_size=80),
    st.builds(lambda n, c: c * n, st.integers(65, 7000), st.sampled_from(["0", "a", "é", "9"])),
    st.builds(lambda tail: "v0=" + tail, st.text("0123456789abcdefABCDEF", max_size=80)),
    st.builds(lambda tail: "v0=" + "0" * 63 + tail, st.text(max_size=3).map(lambda t: t.strip())),
)
timestamps = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.builds(lambda n: "9" * n, st.integers(10, 6000)),
    st.sampled_from(["", " 1", "1 ", "+1", "-0", "0x10", "1e9", "١٧٠٠٠٠٠٠٠٠", "１７"]),
    header_text,
)
header_encodings = st.sampled_from(["utf-8", "latin-1"])

# ----------------------------------------------------------------- signed, fields mistyped

FieldPath = tuple[str | int, ...]
OBJECT, TEXT, ITEMS, FLAG = dict, str, list, bool

CLICK_FIELDS: dict[FieldPath, tuple[type, ...]] = {
    ("user",): (OBJECT,),
    ("user", "id"): (TEXT, type(None)),
    ("team",): (OBJECT, type(None)),
    ("team", "id"): (TEXT, type(None)),
    ("channel",): (OBJECT, type(None)),
    ("channel", "id"): (TEXT, type(None)),
    ("container",): (OBJECT, type(None)),
    ("container", "channel_id"): (TEXT, type(None)),
    ("container", "is_ephemeral"): (FLAG, type(None)),
    ("response_url",): (TEXT, type(None)),
    ("trigger_id",): (TEXT, type(None)),
    ("actions",): (ITEMS,),
    ("actions", 0): (OBJECT,),
    ("actions", 0, "action_id"): (TEXT,),
    ("actions", 0, "value"): (TEXT, type(None)),
}
SUBMISSION_FIELDS: dict[FieldPath, tuple[type, ...]] = {
    ("user",): (OBJECT,),
    ("user", "id"): (TEXT, type(None)),
    ("view",): (OBJECT,),
    ("view", "private_metadata"): (TEXT, type(None)),
    ("view", "callback_id"): (TEXT, type(None)),
    ("view", "state"): (OBJECT, type(None)),
    ("view", "state", "values"): (OBJECT,),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Mistyped:
    """An approver's approve click, or reject submission, with one field of a wrong type."""

    kind: Literal["click", "submission"]
    path: FieldPath
    value: Any

    def apply(self, payload: dict[str, Any]) -> dict[str, Any]:
        changed: dict[str, Any] = json.loads(json.dumps(payload))
        node: Any = changed  # dicts and lists on the way down, by str keys and int indices
        for key in self.path[:-1]:
            node = node[key]
        node[self.path[-1]] = self.value
        return changed


def _wrong(allowed: tuple[type, ...]) -> st.SearchStrategy[Any]:
    return json_values.filter(lambda value: not isinstance(value, allowed))


def _mistyped(
    kind: Literal["click", "submission"], fields: dict[FieldPath, tuple[type, ...]]
) -> st.SearchStrategy[Mistyped]:
    return st.sampled_from(sorted(fields, key=str)).flatmap(
        lambda path: st.builds(
            Mistyped, kind=st.just(kind), path=st.just(path), value=_wrong(fields[path])
        )
    )


mistyped = _mistyped("click", CLICK_FIELDS) | _mistyped("submission", SUBMISSION_FIELDS)
