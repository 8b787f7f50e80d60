"""``python -m bot`` serving the office desk on the web, as a person starts it: a process,
its printed inbox link, a browser's requests (cookies, forms), and SIGTERM to stop it."""

from __future__ import annotations

import http.cookiejar
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tests.cli.processes import TIMEOUT_SECONDS

INBOX_LINK: Final = re.compile(r"(http://127\.0\.0\.\d+:\d+/i/\S+)")
_CSRF: Final = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Browser:
    """urllib with a cookie jar: what a browser does with the desk's pages."""

    origin: str
    jar: http.cookiejar.CookieJar = field(default_factory=http.cookiejar.CookieJar)

    def __post_init__(self) -> None:
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, url: str) -> tuple[int, str, str]:
        """Status, final URL and body (redirects followed)."""
        return self._open(urllib.request.Request(self._absolute(url)))

    def post(self, url: str, fields: dict[str, str]) -> tuple[int, str, str]:
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(
            self._absolute(url), data=data, headers={"Origin": self.origin}
        )
        return self._open(request)

    def post_bytes(self, url: str, body: bytes, content_type: str) -> tuple[int, str, str]:
        """Post ``body`` as it is (bytes a form would never hold), from this origin."""
        headers = {"Origin": self.origin, "Content-Type": content_type}
        return self._open(urllib.request.Request(self._absolute(url), data=body, headers=headers))

    def csrf(self, url: str) -> str:
        """The CSRF token of the form on ``url`` (its cookie is kept)."""
        _, _, page = self.get(url)
        found = _CSRF.search(page)
        assert found is not None, page
        return found.group(1)

    def submit(self, url: str, fields: dict[str, str]) -> tuple[int, str, str]:
        """Open ``url`` and post its form with its CSRF token and ``fields``."""
        return self.post(url, {"csrf": self.csrf(url), **fields})

    def _absolute(self, url: str) -> str:
        return url if url.startswith("http") else f"{self.origin}{url}"

    def _open(self, request: urllib.request.Request) -> tuple[int, str, str]:
        try:
            with self._opener.open(request, timeout=TIMEOUT_SECONDS) as response:
                return response.status, response.url, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, request.full_url, error.read().decode()


@dataclass
class Served:
    process: subprocess.Popen[str]
    printed: list[str]
    inbox_link: str

    @property
    def origin(self) -> str:
        parts = urllib.parse.urlsplit(self.inbox_link)
        return f"{parts.scheme}://{parts.netloc}"

    def stop(self) -> tuple[int, str, str]:
        """SIGTERM, as a person's Ctrl-C; the exit code, the rest of stdout, stderr."""
        self.process.send_signal(signal.SIGTERM)
        out, err = self.process.communicate(timeout=TIMEOUT_SECONDS)
        return self.process.returncode, out, err


def start_python_m_bot(cwd: Path, env: dict[str, str]) -> Served:
    """Start ``python -m bot`` and read its stdout until it prints the inbox link."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bot"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    printed: list[str] = []
    for line in process.stdout:
        printed.append(line.rstrip("\n"))
        found = INBOX_LINK.search(line)
        if found is not None:
            return Served(process=process, printed=printed, inbox_link=found.group(1))
    _, err = process.communicate(timeout=TIMEOUT_SECONDS)
    raise AssertionError(f"python -m bot printed no inbox link: {printed!r} {err!r}")
