"""Downloading one file over HTTP: progress, cancelling, size and checksum checks, and a
file that appears whole or not at all.

Python's HTTP modules are imported by the first download, not with this module: they take a
noticeable part of the app's start-up, which never downloads."""

from __future__ import annotations

import hashlib
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.core.base.files import atomic_file

CHUNK = 1 << 16
"""Bytes read at a time; between reads the stop event is checked."""


class DownloadError(Exception):
    """A download failed. ``reason`` is one of ``cancelled``, ``connection`` (no connection,
    or it broke off), ``http`` (the server refused), ``truncated`` or ``damaged``; the message
    is a phrase for a person, without a full stop."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def file_digest(path: Path, algorithm: str) -> str:
    """The hex digest of a file's bytes, e.g. ``file_digest(path, "sha256")``."""
    with Path(path).open("rb") as handle:
        return hashlib.file_digest(handle, algorithm).hexdigest()


def _open_url(url: str, timeout: float) -> Any:
    import urllib.request

    return urllib.request.urlopen(url, timeout=timeout)


def _connect(url: str, host: str, timeout: float) -> Any:
    import http.client
    import urllib.error

    try:
        return _open_url(url, timeout)
    except urllib.error.HTTPError as exc:
        raise DownloadError("http", f"{host} answered {exc.code} {exc.reason}") from None
    except (OSError, http.client.HTTPException):
        raise DownloadError("connection", f"no connection to {host}") from None


def _read(response: Any, host: str) -> bytes:
    import http.client

    try:
        return response.read(CHUNK)
    except http.client.IncompleteRead:
        return b""  # counted as a download that stopped early
    except (OSError, http.client.HTTPException):
        raise DownloadError("connection", f"the connection to {host} broke off") from None


def download(url: str, target: Path, on_progress: Callable[[int, int], None],
             stop: threading.Event, *, size: int | None = None,
             checksum: tuple[str, str] | None = None,
             verify: Callable[[Path], bool] | None = None, timeout: float = 30.0) -> None:
    """Download ``url`` into ``target``, which appears only once the whole file is checked.

    ``on_progress(done, total)`` reports bytes (``total`` is ``size``, else what the server
    announces, else 0). ``size`` is the exact size expected in bytes; ``checksum`` is
    ``(algorithm, hex digest)``, e.g. ``("sha256", "…")``; ``verify(path)`` may check the
    downloaded file further. Raise DownloadError if the download fails, is cancelled by
    ``stop`` or is not the expected file; errors writing ``target`` raise OSError. Either way
    nothing is left behind.
    """
    target = Path(target)
    host = urllib.parse.urlsplit(url).hostname or url
    if stop.is_set():
        raise DownloadError("cancelled", "the download was cancelled")
    damaged = DownloadError("damaged", f"{target.name} arrived damaged (it is not the "
                                       "expected file)")
    with atomic_file(target) as out:
        digest = hashlib.new(checksum[0]) if checksum else None
        with _connect(url, host, timeout) as response:
            announced = int(response.headers.get("Content-Length") or 0)
            expected = size or announced
            done = 0
            on_progress(done, expected)
            while chunk := _read(response, host):
                if stop.is_set():
                    raise DownloadError("cancelled", "the download was cancelled")
                done += len(chunk)
                if size and done > size:
                    raise damaged
                out.write(chunk)
                if digest:
                    digest.update(chunk)
                on_progress(done, expected)
        if done < max(expected, announced):
            raise DownloadError("truncated", f"the download from {host} stopped after "
                                             f"{done:,} of {max(expected, announced):,} bytes")
        out.flush()
        if (digest and digest.hexdigest() != checksum[1].lower()) or (
                verify and not verify(Path(out.name))):
            raise damaged
