"""A reply interpreter's ``prompt_urls``: read on first use, then kept for the App's lifetime.

``file://`` (a local file), ``data:`` (RFC 2397) and ``http(s)://`` (fetched once, with a
timeout) URLs are read; any other scheme is an error. A URL that cannot be read is not kept, so
the next reading tries again.
"""

from __future__ import annotations

import asyncio
import base64
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote_to_bytes, urlsplit
from urllib.request import url2pathname

import aiohttp

FETCH_TIMEOUT = timedelta(seconds=10)
MAX_PROMPT_BYTES = 1_000_000


class PromptUrlError(ValueError):
    """A prompt URL could not be read (the message names the URL, never its content)."""


class PromptSource:
    """Reads prompt URLs once each; safe to share between concurrent readings."""

    def __init__(self, *, timeout: timedelta = FETCH_TIMEOUT) -> None:
        self._timeout = timeout
        self._texts: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def text(self, url: str) -> str:
        if url in self._texts:
            return self._texts[url]
        async with self._locks.setdefault(url, asyncio.Lock()):  # one read per URL at a time
            if url not in self._texts:
                self._texts[url] = await self._read(url)
        return self._texts[url]

    async def instructions(self, prompt: str | None, urls: tuple[str, ...]) -> str:
        """The prompt, then each URL's text, separated by blank lines."""
        parts = [prompt] if prompt else []
        parts.extend([(await self.text(url)).strip() for url in urls])
        return "\n\n".join(part for part in parts if part)

    async def _read(self, url: str) -> str:
        scheme = urlsplit(url).scheme.lower()
        try:
            if scheme == "file":
                return await asyncio.to_thread(_read_file, url)
            if scheme == "data":
                return _read_data(url)
            if scheme in ("http", "https"):
                return await self._fetch(url)
        except TimeoutError as error:  # before OSError: aiohttp's timeouts are both
            raise PromptUrlError(f"the prompt URL {url} timed out") from error
        except (OSError, UnicodeDecodeError, ValueError, aiohttp.ClientError) as error:
            reason = str(error) or type(error).__name__
            raise PromptUrlError(f"the prompt URL {url} cannot be read: {reason}") from error
        raise PromptUrlError(f"the prompt URL {url} is not a file:, data: or http(s): URL")

    async def _fetch(self, url: str) -> str:
        timeout = aiohttp.ClientTimeout(total=self._timeout.total_seconds())
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url) as response,
        ):
            response.raise_for_status()
            body = await response.content.read(MAX_PROMPT_BYTES + 1)
        if len(body) > MAX_PROMPT_BYTES:
            raise ValueError(f"longer than {MAX_PROMPT_BYTES} bytes")
        return body.decode(response.charset or "utf-8")


def _read_file(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise ValueError("only local files (file:///path)")
    return Path(url2pathname(parts.path)).read_text(encoding="utf-8")


def _read_data(url: str) -> str:
    header, separator, payload = url.split(":", 1)[1].partition(",")
    if not separator:
        raise ValueError("a data: URL needs a ','")
    if header.endswith(";base64"):
        return base64.b64decode(payload, validate=True).decode("utf-8")
    return unquote_to_bytes(payload).decode("utf-8")
