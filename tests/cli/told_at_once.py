"""``python -m bot serve`` with one settings problem after another, in one fresh process: what
each said, and which modules had loaded by then.

Reads JSON lines on stdin, ``{"folder": ..., "env": {...}}``; for each, calls the command line
as the process would (``python_m_bot_in_process``: ``env`` alone, in ``folder``) and prints a
JSON line ``{"code", "out", "err", "loaded"}``, ``loaded`` the top-level names of every module
imported so far. A problem whose check loaded Bolt, LangGraph or LangChain shows it in its own
line (and every later one). One process for every problem: a process each would pay the
interpreter's start and the light imports each time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.processes import python_m_bot_in_process


def main() -> None:
    for line in sys.stdin:
        case = json.loads(line)
        ran = python_m_bot_in_process("serve", cwd=Path(case["folder"]), env=case["env"])
        loaded = sorted({name.split(".")[0] for name in sys.modules})
        said = {"code": ran.code, "out": ran.out, "err": ran.err, "loaded": loaded}
        print(json.dumps(said), flush=True)


if __name__ == "__main__":
    main()
