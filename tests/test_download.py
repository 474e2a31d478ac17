"""Downloads: verified, retried on transient faults, atomic; failures say why and leave nothing."""

import hashlib
import socket

import pytest

from attnlearn.data.download import ChecksumError, DownloadError, download, fetch
from httpserver import serve

FAST = dict(retries=2, backoff_s=0.01, timeout_s=5, log=lambda *_: None)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    data = b"payload " * 5000
    (root / "file.bin").write_bytes(data)
    return root, hashlib.sha256(data).hexdigest(), data


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_verifies_and_moves_into_place(site, tmp_path):
    root, sha, data = site
    dest = tmp_path / "out" / "file.bin"
    with serve(root) as (url, _):
        download(f"{url}/file.bin", dest, sha, **FAST)
    assert dest.read_bytes() == data
    assert leftovers(dest.parent) == ["file.bin"]


def test_a_killed_downloads_leftover_is_removed(site, tmp_path):
    """A download killed mid-transfer leaves its hidden temporary file; the next download of
    the file removes it (this version's name and the older mkstemp one)."""
    root, sha, data = site
    dest = tmp_path / "out" / "file.bin"
    dest.parent.mkdir()
    (dest.parent / ".file.bin.tmp-0a1b2c3d.tmp").write_bytes(data[:100])
    (dest.parent / ".file.bin.q8w_2e4r.tmp").write_bytes(data[:100])
    with serve(root) as (url, _):
        download(f"{url}/file.bin", dest, sha, **FAST)
    assert leftovers(dest.parent) == ["file.bin"]


def test_wrong_checksum_names_url_expected_and_actual(site, tmp_path):
    root, sha, _ = site
    dest = tmp_path / "out" / "file.bin"
    with serve(root) as (url, _), pytest.raises(ChecksumError) as err:
        download(f"{url}/file.bin", dest, "0" * 64, **FAST)
    assert f"{url}/file.bin" in str(err.value) and "0" * 64 in str(err.value) and sha in str(err.value)
    assert leftovers(dest.parent) == []


def test_http_500_then_success_is_retried(site, tmp_path):
    root, sha, data = site
    dest = tmp_path / "out" / "file.bin"
    with serve(root, {"/file.bin": [500, 503]}) as (url, handler):
        download(f"{url}/file.bin", dest, sha, **FAST)
        assert handler.hits["/file.bin"] == 3
    assert dest.read_bytes() == data


def test_truncated_transfer_is_retried_then_reported(site, tmp_path):
    root, sha, data = site
    dest = tmp_path / "out" / "file.bin"
    with serve(root, {"/file.bin": ["truncate"]}) as (url, _):
        download(f"{url}/file.bin", dest, sha, **FAST)
    assert dest.read_bytes() == data
    with serve(root, {"/file.bin": ["truncate"] * 3}) as (url, _), pytest.raises(DownloadError) as err:
        download(f"{url}/file.bin", tmp_path / "again" / "file.bin", sha, **FAST)
    assert "after 3 attempts" in str(err.value) and f"{url}/file.bin" in str(err.value)
    assert leftovers(tmp_path / "again") == []


def test_404_fails_at_once_with_the_status(site, tmp_path):
    root, sha, _ = site
    dest = tmp_path / "out" / "missing.bin"
    with serve(root) as (url, handler), pytest.raises(DownloadError) as err:
        download(f"{url}/missing.bin", dest, sha, **FAST)
    assert "HTTP 404" in str(err.value) and f"{url}/missing.bin" in str(err.value)
    assert handler.hits["/missing.bin"] == 1
    assert leftovers(dest.parent) == []


def test_connection_refused_is_retried_then_reported(tmp_path):
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/file.bin"
    with pytest.raises(DownloadError) as err:
        download(url, tmp_path / "out" / "file.bin", "0" * 64, **FAST)
    assert url in str(err.value) and "refused" in str(err.value).lower()
    assert leftovers(tmp_path / "out") == []


def test_unverified_source_is_refused_unless_opted_in(site, tmp_path):
    root, _, data = site
    with serve(root) as (url, _):
        spec = {"url": f"{url}/file.bin", "sha256": None}
        with pytest.raises(DownloadError, match="no checksum known"):
            fetch(spec, tmp_path / "a" / "file.bin", **FAST)
        assert leftovers(tmp_path / "a") == []
        fetch(spec, tmp_path / "b" / "file.bin", allow_unverified=True, **FAST)
        fetch({**spec, "allow_unverified": True}, tmp_path / "c" / "file.bin", **FAST)
    assert (tmp_path / "b" / "file.bin").read_bytes() == data == (tmp_path / "c" / "file.bin").read_bytes()


def test_md5_is_used_where_only_md5_is_published(site, tmp_path):
    root, _, data = site
    with serve(root) as (url, _):
        fetch({"url": f"{url}/file.bin", "md5": hashlib.md5(data).hexdigest()}, tmp_path / "file.bin", **FAST)
        with pytest.raises(ChecksumError, match="md5"):
            fetch({"url": f"{url}/file.bin", "md5": "0" * 32}, tmp_path / "x" / "file.bin", **FAST)


def test_file_urls_work(site, tmp_path):
    root, sha, data = site
    download((root / "file.bin").as_uri(), tmp_path / "file.bin", sha, **FAST)
    assert (tmp_path / "file.bin").read_bytes() == data


def test_refused_downloads_are_named_before_the_download_job(tmp_path, monkeypatch):
    """A dry run warns about the downloads that the job will refuse (no checksum, no opt-in),
    not about verified ones, opted-in ones, or files already placed by hand."""
    from attnlearn.data.download import refused_downloads

    monkeypatch.chdir(tmp_path)
    files = {"a": {"url": "https://x/a.tgz"}, "b": {"url": "https://x/b.tgz", "sha256": "0" * 64},
             "c": {"url": "https://x/c.tgz", "allow_unverified": True}, "d": {"path": "local.csv"},
             "e": {"url": "https://x/e.tgz"}}
    datasets = {"mine": {"source": {"files": files}}}
    (tmp_path / "data/downloads/mine").mkdir(parents=True)
    (tmp_path / "data/downloads/mine/e.tgz").write_text("placed by hand")
    assert refused_downloads(datasets, allow_all=False) == ["datasets.mine.source.files.a (https://x/a.tgz)"]
    assert refused_downloads(datasets, allow_all=True) == []
