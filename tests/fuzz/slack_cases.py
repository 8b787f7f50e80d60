"""Seeded hostile requests for the Slack edge: what the fuzz (``test_slack_edge.py``) sends.

Each case starts from a request Slack sends — an approver's Approve click, a reject or edit
submission, a reply in the question's thread, a mention, a DM, the App Home opened,
``/pending``, the URL check — and breaks it in one of these ways:

* ``wrong-types-*``: signed, the approver's own request, one to three fields that we or Bolt
  read set to a value of another type (a number where a string goes, a list where an object
  goes, a null where one is required), or a required key removed. It must answer nothing.
* ``strangers-*``: signed, from someone who may not answer, with any field changed or removed.
* ``unsigned`` / ``stale`` / ``wrong-secret``: an intact request, badly signed (401).
* ``unreadable``: signed bodies that are not a Slack payload at all.

None of them may answer the waiting question or start work: the fuzz checks that, then answers
the question with an intact click to show that the same world does answer.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlencode

from channels.slack.render import APPROVE_ACTION, EDIT_MODAL, REJECT_MODAL
from channels.slack.render_modal import REASON_ACTION, REASON_BLOCK
from channels.slack.signing import MetadataSigner, ModalMetadata
from tests.slack.conftest import SECRET, interactive_body
from tests.slack.office import APPROVALS, MANAGER, OWNER, STRANGER
from tests.slack.stub import TEAM

FORM: Final = "application/x-www-form-urlencoded"
JSON: Final = "application/json"
Signing = Literal["signed", "unsigned", "stale", "wrong secret"]
Path = tuple[str | int, ...]
Payload = dict[str, Any]

NUMBERS: Final[tuple[Any, ...]] = (0, -1, 7, 1.5, 10**20, True, False)
LISTS: Final[tuple[Any, ...]] = ([], [1], ["x"], [{}], [None])
OBJECTS: Final[tuple[Any, ...]] = ({}, {"id": 7}, {"x": [1]})
STRINGS: Final[tuple[Any, ...]] = ("x", "null", "0")
WRONG_POOL: Final = (*NUMBERS, *LISTS, *OBJECTS, *STRINGS, None)
"""Values of every JSON type; none of them is an id a test knows (no approver, no pause)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SlackCase:
    shape: str
    body: str
    content_type: str
    signing: Signing = "signed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """The waiting question the cases aim at."""

    pause_id: str
    message_ts: str
    """The ts of the question's message: a reply in its thread answers it."""
    response_url: str


# --------------------------------------------------------------------------- Slack's requests


def approve_click(question: Question, user: str = MANAGER) -> Payload:
    return {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "acme"},
        "user": {"id": user, "team_id": TEAM},
        "api_app_id": "A0APP",
        "container": {
            "type": "message",
            "message_ts": question.message_ts,
            "channel_id": APPROVALS,
            "is_ephemeral": False,
        },
        "channel": {"id": APPROVALS, "name": "approvals"},
        "message": {"ts": question.message_ts, "type": "message"},
        "trigger_id": "trigger-1",
        "response_url": question.response_url,
        "actions": [
            {
                "type": "button",
                "action_id": APPROVE_ACTION,
                "block_id": "b",
                "value": question.pause_id,
            }
        ],
    }


def reject_submission(question: Question, user: str = MANAGER) -> Payload:
    sealed = MetadataSigner(SECRET).seal(
        ModalMetadata(kind="reject", pause_id=question.pause_id, user=MANAGER, channel=APPROVALS)
    )
    return _submission(
        REJECT_MODAL, sealed, {REASON_BLOCK: {REASON_ACTION: _typed("too much")}}, user
    )


def edit_submission(question: Question, user: str = MANAGER) -> Payload:
    sealed = MetadataSigner(SECRET).seal(
        ModalMetadata(kind="edit", pause_id=question.pause_id, user=MANAGER, channel=APPROVALS)
    )
    values = {"order_id": {"value": _typed("7")}, "amount": {"value": _typed("20")}}
    return _submission(EDIT_MODAL, sealed, values, user)


def _typed(text: str) -> Payload:
    return {"type": "plain_text_input", "value": text}


def _submission(callback_id: str, sealed: str, values: Payload, user: str) -> Payload:
    return {
        "type": "view_submission",
        "team": {"id": TEAM, "domain": "acme"},
        "user": {"id": user, "team_id": TEAM},
        "api_app_id": "A0APP",
        "trigger_id": "trigger-submit",
        "view": {
            "id": "V0MODAL",
            "team_id": TEAM,
            "type": "modal",
            "callback_id": callback_id,
            "private_metadata": sealed,
            "state": {"values": values},
            "hash": "h",
        },
    }


def _envelope(event: Payload, event_id: str) -> Payload:
    return {
        "token": "legacy",
        "team_id": TEAM,
        "api_app_id": "A0APP",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1700000000,
        "authorizations": [{"team_id": TEAM, "user_id": "U0BOT", "is_bot": True}],
    }


def thread_reply(question: Question, user: str = MANAGER) -> Payload:
    event = {
        "type": "message",
        "user": user,
        "text": "approve",
        "channel": APPROVALS,
        "channel_type": "channel",
        "ts": "1700000100.000001",
        "thread_ts": question.message_ts,
    }
    return _envelope(event, "Ev0REPLY")


def mention(question: Question, user: str = OWNER) -> Payload:
    event = {
        "type": "app_mention",
        "user": user,
        "text": "<@U0BOT> refund order 8",
        "channel": "C0GENERAL",
        "ts": "1700000200.000001",
    }
    return _envelope(event, "Ev0MENTION")


def direct_message(question: Question, user: str = OWNER) -> Payload:
    event = {
        "type": "message",
        "user": user,
        "text": "refund order 9",
        "channel": "D0OWNER",
        "channel_type": "im",
        "ts": "1700000300.000001",
    }
    return _envelope(event, "Ev0DM")


def home_opened(question: Question, user: str = MANAGER) -> Payload:
    event = {"type": "app_home_opened", "user": user, "channel": "D0HOME", "tab": "home"}
    return _envelope(event, "Ev0HOME")


def url_verification(question: Question, user: str = MANAGER) -> Payload:
    return {"token": "legacy", "challenge": "c" * 20, "type": "url_verification"}


def pending_command(question: Question, user: str = MANAGER) -> Payload:
    return {
        "token": "legacy",
        "team_id": TEAM,
        "team_domain": "acme",
        "channel_id": "C0GENERAL",
        "user_id": user,
        "command": "/pending",
        "text": "",
        "api_app_id": "A0APP",
        "response_url": question.response_url,
        "trigger_id": "trigger-command",
    }


Maker = Callable[[Question, str], Payload]
Fields = dict[Path, tuple[type, ...]]
NONE: Final = type(None)
TEXT: Final = (str, NONE)

CLICK_READS: Final[Fields] = {
    ("type",): (str,),
    ("user",): (dict,),
    ("user", "id"): TEXT,
    ("team",): (dict, NONE),
    ("team", "id"): TEXT,
    ("channel",): (dict, NONE),
    ("channel", "id"): TEXT,
    ("container",): (dict, NONE),
    ("container", "type"): TEXT,
    ("container", "channel_id"): TEXT,
    ("container", "is_ephemeral"): (bool, NONE),
    ("message",): (dict, NONE),
    ("message", "thread_ts"): TEXT,
    ("response_url",): TEXT,
    ("trigger_id",): TEXT,
    ("actions",): (list,),
    ("actions", 0): (dict,),
    ("actions", 0, "action_id"): (str,),
    ("actions", 0, "value"): TEXT,
}
"""The fields of a click that we or Bolt read, and the types Slack sends them in."""
SUBMISSION_READS: Final[Fields] = {
    ("type",): (str,),
    ("user",): (dict,),
    ("user", "id"): TEXT,
    ("team",): (dict, NONE),
    ("view",): (dict,),
    ("view", "callback_id"): TEXT,
    ("view", "private_metadata"): TEXT,
    ("view", "state"): (dict, NONE),
    ("view", "state", "values"): (dict,),
}
REJECT_READS: Final[Fields] = {
    **SUBMISSION_READS,
    ("view", "state", "values", REASON_BLOCK): (dict,),
    ("view", "state", "values", REASON_BLOCK, REASON_ACTION): (dict,),
    ("view", "state", "values", REASON_BLOCK, REASON_ACTION, "value"): TEXT,
}
EDIT_READS: Final[Fields] = {
    **SUBMISSION_READS,
    ("view", "state", "values", "amount"): (dict,),
    ("view", "state", "values", "amount", "value"): (dict,),
    ("view", "state", "values", "amount", "value", "value"): TEXT,
}
ENVELOPE_READS: Final[Fields] = {
    ("type",): (str,),
    ("event",): (dict,),
    ("event_id",): TEXT,
    ("team_id",): TEXT,
    ("event", "type"): (str,),
}
MESSAGE_READS: Final[Fields] = {
    **ENVELOPE_READS,
    **{("event", key): TEXT for key in ("user", "channel", "channel_type", "ts", "text")},
    ("event", "thread_ts"): TEXT,
}
HOME_READS: Final[Fields] = {
    **ENVELOPE_READS,
    ("event", "user"): TEXT,
    ("event", "tab"): TEXT,
}
URL_VERIFICATION_READS: Final[Fields] = {("challenge",): TEXT, ("type",): (str,)}
COMMAND_READS: Final[Fields] = {
    (key,): TEXT for key in ("command", "user_id", "team_id", "channel_id", "text", "response_url")
}

ESSENTIAL: Final[dict[str, tuple[Path, ...]]] = {
    "click": (("type",), ("user",), ("user", "id"), ("actions",), ("actions", 0, "value")),
    "reject": (("type",), ("user",), ("view",), ("view", "private_metadata")),
    "edit": (("type",), ("user",), ("view",), ("view", "private_metadata")),
    "reply": (("event",), ("event", "user"), ("event", "thread_ts"), ("event", "text")),
    "mention": (("event",), ("event", "user"), ("event", "channel"), ("event", "ts")),
    "dm": (("event",), ("event", "user"), ("event", "channel_type"), ("event", "text")),
}
"""Keys without which a request of the kind can neither answer nor start anything."""


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    make: Maker
    reads: Fields
    body: Literal["interactive", "json", "form"]
    answers: bool
    """Whether the intact request answers the question or starts work (an approver's click,
    submission, reply; a mention; a DM): only broken in its read fields, never by noise."""


KINDS: Final = (
    Kind("click", approve_click, CLICK_READS, "interactive", answers=True),
    Kind("reject", reject_submission, REJECT_READS, "interactive", answers=True),
    Kind("edit", edit_submission, EDIT_READS, "interactive", answers=True),
    Kind("reply", thread_reply, MESSAGE_READS, "json", answers=True),
    Kind("mention", mention, MESSAGE_READS, "json", answers=True),
    Kind("dm", direct_message, MESSAGE_READS, "json", answers=True),
    Kind("home", home_opened, HOME_READS, "json", answers=False),
    Kind("url-verification", url_verification, URL_VERIFICATION_READS, "json", answers=False),
    Kind("command", pending_command, COMMAND_READS, "form", answers=False),
)
STRANGERS_MAY_SEND: Final = ("click", "reject", "edit", "reply", "home", "command")
"""The kinds a stranger's intact request is harmless in (a stranger's mention starts work)."""


# --------------------------------------------------------------------------- breaking them


def wrong_values(allowed: tuple[type, ...]) -> list[Any]:
    """The pool's values of a type ``allowed`` does not take (``bool`` is not a number)."""
    return [value for value in WRONG_POOL if not _of_type(value, allowed)]


def _of_type(value: Any, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in allowed
    return isinstance(value, allowed)


def _set(tree: Any, path: Path, value: Any) -> bool:
    """Set ``path`` in ``tree`` (dicts and lists) if its parent is there; whether it was."""
    node = tree
    for key in path[:-1]:
        node = _child(node, key)
        if node is None:
            return False
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str):
        node[last] = value
        return True
    if isinstance(node, list) and isinstance(last, int) and last < len(node):
        node[last] = value
        return True
    return False


def _remove(tree: Any, path: Path) -> bool:
    node = tree
    for key in path[:-1]:
        node = _child(node, key)
        if node is None:
            return False
    last = path[-1]
    if isinstance(node, dict) and last in node:
        del node[last]
        return True
    if isinstance(node, list) and isinstance(last, int) and last < len(node):
        del node[last]
        return True
    return False


def _child(node: Any, key: str | int) -> Any:
    if isinstance(node, dict) and isinstance(key, str):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


def _paths(tree: Any, prefix: Path = ()) -> list[Path]:
    """Every path in ``tree``, parents before children."""
    found: list[Path] = []
    items: list[tuple[str | int, Any]] = []
    if isinstance(tree, dict):
        items = [(key, value) for key, value in tree.items()]
    elif isinstance(tree, list):
        items = list(enumerate(tree))
    for key, value in items:
        path = (*prefix, key)
        found.append(path)
        found.extend(_paths(value, path))
    return found


class SlackCases:
    """Cases drawn from one seed: the same seed gives the same requests, in the same order."""

    def __init__(self, seed: int, question: Question) -> None:
        self._rng = random.Random(seed)
        self._question = question
        self._events = 0

    def draw(self, count: int) -> Iterator[SlackCase]:
        shapes = (
            (self._wrong_types, 6),
            (self._strangers, 3),
            (self._badly_signed, 2),
            (self._unreadable, 1),
        )
        makers = [maker for maker, weight in shapes for _ in range(weight)]
        for _ in range(count):
            yield self._rng.choice(makers)()

    def _wrong_types(self) -> SlackCase:
        kind = self._rng.choice(KINDS)
        payload = self._payload(kind, MANAGER if kind.name not in ("mention", "dm") else OWNER)
        broken = 0
        for _ in range(self._rng.randint(1, 3)):
            if kind.name in ESSENTIAL and self._rng.random() < 0.25:
                broken += _remove(payload, self._rng.choice(ESSENTIAL[kind.name]))
            elif kind.reads:
                path = self._rng.choice(sorted(kind.reads, key=str))
                broken += _set(payload, path, self._rng.choice(wrong_values(kind.reads[path])))
        if not broken:  # every path it drew was already gone: remove a required key
            _remove(payload, ESSENTIAL.get(kind.name, (("type",),))[0])
        return self._case(f"wrong-types-{kind.name}", kind, payload)

    def _strangers(self) -> SlackCase:
        kind = self._rng.choice([k for k in KINDS if k.name in STRANGERS_MAY_SEND])
        payload = self._payload(kind, STRANGER)
        for _ in range(self._rng.randint(1, 4)):
            paths = _paths(payload)
            if not paths:
                break
            path = self._rng.choice(paths)
            if self._rng.random() < 0.3:
                _remove(payload, path)
            else:
                _set(payload, path, copy.deepcopy(self._rng.choice(WRONG_POOL)))
        return self._case(f"strangers-{kind.name}", kind, payload)

    def _badly_signed(self) -> SlackCase:
        kind = self._rng.choice(KINDS)
        signing: Signing = self._rng.choice(["unsigned", "stale", "wrong secret"])
        case = self._case(signing.replace(" ", "-"), kind, self._payload(kind, MANAGER))
        return SlackCase(
            shape=case.shape, body=case.body, content_type=case.content_type, signing=signing
        )

    def _unreadable(self) -> SlackCase:
        click = json.dumps(approve_click(self._question))
        body, content_type = self._rng.choice(
            [
                ("", JSON),
                ("null", JSON),
                ("[1, 2]", JSON),
                ('"approve"', JSON),
                ("{", JSON),
                (click[:-1], JSON),
                (f"payload={click[:40]}", FORM),
                ("payload=%5B1%5D", FORM),
                ("payload=7", FORM),
                ("payload=null", FORM),
                ("payload=" + "%7B" * 80, FORM),
                ("command=%2Fpending&command=%2Fpending&user_id=U0STRANGER", FORM),
                ("\x00\x01\x02", "application/octet-stream"),
                (click, "text/plain; charset=utf-16"),
            ]
        )
        return SlackCase(shape="unreadable", body=body, content_type=content_type)

    def _payload(self, kind: Kind, user: str) -> Payload:
        payload = kind.make(self._question, user)
        if payload.get("type") == "event_callback":
            self._events += 1  # a new event each time: never dropped as a retry
            payload["event_id"] = f"Ev{self._events:08d}"
        return payload

    def _case(self, shape: str, kind: Kind, payload: Payload) -> SlackCase:
        match kind.body:
            case "interactive":
                return SlackCase(shape=shape, body=interactive_body(payload), content_type=FORM)
            case "json":
                return SlackCase(shape=shape, body=json.dumps(payload), content_type=JSON)
            case "form":
                if all(isinstance(v, str) for v in payload.values()):
                    return SlackCase(shape=shape, body=urlencode(payload), content_type=FORM)
                # a command is a form: a field of another type can only come as JSON
                return SlackCase(shape=shape, body=json.dumps(payload), content_type=JSON)
