"""The command line: ``python -m bot [serve | demo | keygen | reencrypt]``.

Only the parser lives here, so ``python -m bot --help`` answers at once: each command imports
what it needs (LangChain, LangGraph, Slack's libraries) when it runs. A settings problem is one
line on standard error and exit code 2, whatever the command.

- ``serve``: the Slack bot (``bot.cli.serve``); a missing Slack setting is exit code 2.
- no command: ``serve`` when the Slack settings are there, else it names the missing ones and
  serves the office desk on the web, on 127.0.0.1 (``bot.cli.web``: the first run of a fresh
  clone; it prints the inbox link).
- ``demo``: the office desk in the terminal (``bot.cli.terminal``).
- ``keygen`` / ``reencrypt``: encryption keys (``bot.cli.keys``).
- ``grants list`` / ``grants revoke``: standing grants (``bot.cli.grants``).
- ``delegations list`` / ``add`` / ``end``: standing delegations (``bot.cli.delegations``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bot.cli import delegations, grants, keys
from bot.core.errors import SettingsError

DEMO_DATABASE_URL: Final = "sqlite+aiosqlite:///countersign-demo.db"
EXIT_SETTINGS: Final = 2
ENCRYPTION_KEYS: Final = keys.SETTING

Command = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    args = _parser().parse_args(argv)
    command: Command = args.handler
    try:
        return command(args)
    except SettingsError as error:
        print(error.message, file=sys.stderr)
        return EXIT_SETTINGS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description="Countersign: people approve, in Slack, what AI agents are about to do.",
        epilog="With no command: 'serve' when the Slack settings are set, else the settings it "
        "misses and the office desk on the web (http://127.0.0.1:PORT/, the inbox link printed). "
        "The terminal demo: python -m bot demo",
    )
    parser.set_defaults(handler=_serve_slack_or_web)
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    serve = commands.add_parser(
        "serve",
        help="serve the Slack bot (a missing Slack setting is exit code 2)",
        description="Serve the Slack bot: HTTP on PORT at /slack/events, or Socket Mode with "
        "SLACK_APP_TOKEN. Reads SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, COUNTERSIGN_GRAPH (your "
        "LangGraph graphs, module:attr, comma-separated) or COUNTERSIGN_APP (default: "
        "the Slack office desk, which needs COUNTERSIGN_APPROVAL_CHANNEL, and a model: "
        "COUNTERSIGN_DESK_MODEL=offline for the scripted demo model) and the model settings "
        "from the environment or .env.",
    )
    serve.set_defaults(handler=_serve)
    demo = commands.add_parser(
        "demo",
        help="run the office desk example in the terminal, with an offline model",
        description="Run the office desk example: an agent asks to refund a card and to book "
        "an expense, both at once; answer each at the prompt (or pipe the answers in; '?' "
        f"shows the words understood). On PostgreSQL it reads {ENCRYPTION_KEYS} like serve.",
    )
    demo.add_argument(
        "--database-url",
        type=_database_url,
        default=DEMO_DATABASE_URL,
        metavar="URL",
        help=f"where executions and pauses are kept (default: {DEMO_DATABASE_URL})",
    )
    demo.add_argument(
        "--answers",
        type=_answers_file,
        metavar="FILE",
        help="read the answers from FILE, one a line, instead of from standard input",
    )
    demo.set_defaults(handler=_demo)
    keys.register(commands)
    grants.register(commands)
    delegations.register(commands)
    return parser


def _database_url(text: str) -> str:
    from bot.store.database import DatabaseUrl, DatabaseUrlError

    try:
        DatabaseUrl.parse(text)
    except DatabaseUrlError:
        raise argparse.ArgumentTypeError(  # the text is not repeated: it may hold a password
            "not a database URL (e.g. sqlite+aiosqlite:///demo.db)"
        ) from None
    return text


def _answers_file(path: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise argparse.ArgumentTypeError(f"cannot read {path}: {error}") from None


# ------------------------------------------------------------------------------- commands


def _demo(args: argparse.Namespace) -> int:
    return run_demo(args.database_url, answers=args.answers)


def run_demo(database_url: str = DEMO_DATABASE_URL, *, answers: Sequence[str] | None = None) -> int:
    """The terminal demo, with the encryption keys of the environment (or ``.env``)."""
    from bot.security.key_source import key_source
    from bot.settings import environment
    from bot.store.database import database_url_problem

    problem = database_url_problem(database_url)
    if problem is not None:
        raise SettingsError(f"--database-url: {problem}")
    keys_setting = environment().get(ENCRYPTION_KEYS)
    key_source(database_url, keys_setting)  # a settings problem, before LangChain loads

    from bot.cli.terminal import run_demo as run_terminal_demo

    return run_terminal_demo(database_url, answers=answers, encryption_keys=keys_setting)


def _serve(args: argparse.Namespace) -> int:
    missing = missing_settings(slack_settings_required())
    if missing:
        print(one_line(missing), file=sys.stderr)
        return EXIT_SETTINGS
    return _serve_slack()


def _serve_slack_or_web(args: argparse.Namespace) -> int:
    """No command: serve Slack when it is set up; else say what is missing and serve the desk
    on the web."""
    missing = missing_settings(slack_settings_required())
    if not missing:
        return _serve_slack()
    for setting in missing:
        print(f"{setting.name} is missing: {setting.how_to_get}", file=sys.stderr)
    from bot.cli.preflight import check_web_desk

    check_web_desk()  # its problems are told before LangGraph and LangChain load
    from bot.served.targets import GRAPH_SETTING
    from bot.settings import environment

    what = "your graph" if environment().get(GRAPH_SETTING) else "the office desk"
    print(
        f"Serving {what} on the web instead (the terminal demo: python -m bot demo).",
        flush=True,
    )
    from bot.cli.web import serve_web_desk

    return serve_web_desk()


def _serve_slack() -> int:
    from bot.cli.preflight import check_slack_serve

    check_slack_serve()  # its problems are told before Bolt, LangGraph and LangChain load

    from bot.cli.serve import serve_slack

    return serve_slack()


# ------------------------------------------------------------------------------- Slack settings


@dataclass(frozen=True, slots=True)
class RequiredSetting:
    name: str
    how_to_get: str


SLACK_SETTINGS: Final = (
    RequiredSetting(
        "SLACK_BOT_TOKEN",
        "create the Slack app from manifest.yml and copy its Bot User OAuth Token "
        "(OAuth & Permissions, xoxb-...) into .env",
    ),
    RequiredSetting(
        "SLACK_SIGNING_SECRET",
        "copy the Signing Secret from the Slack app's Basic Information page into .env",
    ),
)


OAUTH_SETTINGS: Final = (
    RequiredSetting(
        "SLACK_CLIENT_ID",
        "copy the Client ID from the Slack app's Basic Information page into .env",
    ),
    RequiredSetting(
        "SLACK_CLIENT_SECRET",
        "copy the Client Secret from the Slack app's Basic Information page into .env",
    ),
    RequiredSetting(
        "SLACK_STATE_SECRET",
        "put a long random string of your own into .env (openssl rand -hex 32 makes one)",
    ),
)
"""Installed by OAuth in several workspaces: these instead of ``SLACK_BOT_TOKEN``."""


def slack_settings_required(
    environ: Mapping[str, str] | None = None, env_file: Path = Path(".env")
) -> tuple[RequiredSetting, ...]:
    """What serving Slack needs: a bot token, or (once one of them is given and no bot token)
    the three OAuth settings."""
    from bot.settings import environment

    values = environment(environ, env_file=str(env_file))
    oauth = "SLACK_BOT_TOKEN" not in values and any(s.name in values for s in OAUTH_SETTINGS)
    return (*OAUTH_SETTINGS, *SLACK_SETTINGS[1:]) if oauth else SLACK_SETTINGS


def missing_settings(
    required: Sequence[RequiredSetting],
    environ: Mapping[str, str] | None = None,
    env_file: Path = Path(".env"),
) -> list[RequiredSetting]:
    """The settings neither the environment nor ``env_file`` gives a non-blank value."""
    from bot.settings import environment

    values = environment(environ, env_file=str(env_file))
    return [s for s in required if s.name not in values]


def one_line(missing: Sequence[RequiredSetting]) -> str:
    """The missing settings as one line: which, and how to get each."""
    names = " and ".join(s.name for s in missing)
    verb = "is" if len(missing) == 1 else "are"
    hows = "; ".join(s.how_to_get for s in missing)
    return f"{names} {verb} missing: {hows} (or try the terminal demo: python -m bot demo)"
