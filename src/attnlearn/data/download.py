"""Verified downloads: stream to a temporary file, retry transient failures
with backoff, check the checksum, then move into place atomically.

A failure names the URL and the HTTP status or the expected and actual
checksum, and leaves no partial file behind. ``file://`` URLs work too (local
mirrors, tests).
"""

from __future__ import annotations

import hashlib
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

from attnlearn.runtime.io import atomic_path

CHUNK = 1 << 20
TRANSIENT_HTTP = {408, 425, 429, 500, 502, 503, 504}


class DownloadError(RuntimeError):
    pass


class ChecksumError(DownloadError):
    pass


class _Transient(Exception):
    pass


def file_digest(path, algorithm: str = "sha256") -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def verify(path, expected: str | None, algorithm: str = "sha256", what: str = "") -> None:
    """Raise ChecksumError naming the file, expected and actual digest."""
    if expected is None:
        return
    actual = file_digest(path, algorithm)
    if actual != expected.lower():
        raise ChecksumError(f"checksum mismatch for {what or path}: expected {algorithm} {expected}, "
                            f"got {actual} ({path})")


def _fetch(url: str, tmp: Path, algorithm: str, timeout: float) -> str:
    """Stream url into tmp; returns the digest. Raises _Transient for retryable failures."""
    h = hashlib.new(algorithm)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as out:
            expected_len = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
            size = 0
            for block in iter(lambda: resp.read(CHUNK), b""):
                out.write(block)
                h.update(block)
                size += len(block)
    except urllib.error.HTTPError as e:
        if e.code in TRANSIENT_HTTP:
            raise _Transient(f"HTTP {e.code} {e.reason}") from e
        raise DownloadError(f"download failed: {url}: HTTP {e.code} {e.reason}") from e
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", e)
        if url.startswith("file:"):
            raise DownloadError(f"download failed: {url}: {reason}") from e
        raise _Transient(str(reason)) from e
    if expected_len is not None and size != int(expected_len):
        raise _Transient(f"truncated transfer: {size} of {expected_len} bytes")
    return h.hexdigest()


def download(url: str, dest, checksum: str | None, algorithm: str = "sha256", allow_unverified: bool = False,
             retries: int = 4, backoff_s: float = 2.0, timeout_s: float = 60.0, log=print) -> Path:
    """Download ``url`` to ``dest`` (atomically) and verify it.

    A source without a checksum is refused unless ``allow_unverified``.
    """
    dest = Path(dest)
    if checksum is None and not allow_unverified:
        raise DownloadError(f"no checksum known for {url}; refusing to download it unverified. Add its "
                            f"{algorithm} to the config, or set allow_unverified: true for this file.")
    last = None
    for attempt in range(retries + 1):
        if attempt:
            wait = backoff_s * 2 ** (attempt - 1)
            log(f"retrying {url} in {wait:.1f}s (attempt {attempt + 1} of {retries + 1}): {last}")
            time.sleep(wait)
        try:
            with atomic_path(dest) as tmp:
                digest = _fetch(url, tmp, algorithm, timeout_s)
                if checksum is not None and digest != checksum.lower():
                    raise ChecksumError(f"checksum mismatch for {url}: expected {algorithm} {checksum}, "
                                        f"got {digest}")
            if checksum is None:
                log(f"WARNING: {url} accepted unverified ({algorithm} {digest})")
            return dest
        except _Transient as e:
            last = e
    raise DownloadError(f"download failed: {url}: {last} (after {retries + 1} attempts)")


def url_filename(url: str) -> str:
    """The file name a URL's path ends with."""
    return PurePosixPath(urllib.parse.urlparse(url).path).name


def download_path(dataset: str, spec: dict) -> str:
    """Where a dataset's download lands (relative to the working directory); place the file
    there by hand to work offline."""
    return f"data/downloads/{dataset}/{url_filename(spec['url'])}"


def refused_downloads(datasets: dict, allow_all: bool) -> list[str]:
    """The downloads not yet on disk that the download job will refuse for want of a checksum,
    as 'datasets.NAME.source.files.KEY (url)': a dry run names them before anything runs."""
    if allow_all:
        return []
    return [f"datasets.{name}.source.files.{key} ({spec['url']})"
            for name, entry in datasets.items()
            for key, spec in entry["source"].get("files", {}).items()
            if "url" in spec and checksum_of(spec)[0] is None and not spec.get("allow_unverified")
            and not Path(download_path(name, spec)).exists()]


def checksum_of(spec: dict) -> tuple[str | None, str]:
    """(digest, algorithm) of a download spec: sha256 preferred, md5 where only that is published."""
    if spec.get("sha256"):
        return spec["sha256"], "sha256"
    if spec.get("md5"):
        return spec["md5"], "md5"
    return None, "sha256"


class FileSpec(dict):
    """A download spec ({url, sha256 | md5, allow_unverified}) whose repr, which Snakemake
    compares to decide whether a job's params changed, is its checksum: the same bytes
    from another URL (a mirror) are the same input and rerun nothing."""

    def __repr__(self):
        digest, algorithm = checksum_of(self)
        return f"FileSpec({algorithm}={digest})" if digest else f"FileSpec(url={self['url']!r})"


def fetch(spec: dict, dest, allow_unverified: bool = False, **kw) -> Path:
    """Download a config file spec ({url, sha256 | md5, allow_unverified})."""
    digest, algorithm = checksum_of(spec)
    return download(spec["url"], dest, digest, algorithm,
                    allow_unverified=allow_unverified or spec.get("allow_unverified", False), **kw)


def verify_spec(spec: dict, path) -> None:
    digest, algorithm = checksum_of(spec)
    verify(path, digest, algorithm, what=f"{spec['url']} (file {path})")
