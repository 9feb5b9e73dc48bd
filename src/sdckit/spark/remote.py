"""Outputs at URIs of Hadoop file systems (``hdfs://``, ``s3a://``, ``gs://``, ``viewfs://``):
the :class:`~sdckit.core.io.RemoteFiles` of a Spark session, reached through py4j.

Every file system the session's Hadoop configuration knows (``fs.<scheme>.impl``, or one
Hadoop finds by its service loader) is written: a file is copied from the driver to its
staging name beside the target (``<target>.sdckit-tmp-<run_id>``,
:func:`sdckit.core.io.staging_uri`), a release folder is written there by Spark, and at the
output set's commit each is renamed into place with ``FileSystem.rename`` -- an existing
target first renamed aside, then removed, so the target is the old or the new output.
``rename`` is atomic on HDFS (a metadata operation of the NameNode); on object stores
(S3A, GCS) it is a copy and a delete, so a reader may see a half-renamed folder there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdckit.core.uri import uri_scheme
from sdckit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

__all__ = ["HadoopFiles"]


class HadoopFiles:
    """The Hadoop file systems of a Spark session (``session()``, started on first use) as
    :class:`sdckit.core.io.RemoteFiles`: the session's ``hadoopConfiguration`` decides which
    schemes are written and how (credentials, endpoints: ``spark.hadoop.*`` settings)."""

    def __init__(self, session: Callable[[], SparkSession]) -> None:
        self._start = session
        self._spark: SparkSession | None = None

    def _session(self) -> SparkSession:
        """The session (started, or joined, on first use)."""
        if self._spark is None:
            self._spark = self._start()
        return self._spark

    def _fs(self, uri: str) -> tuple[Any, Any]:
        """Hadoop's ``Path`` of ``uri`` and the ``FileSystem`` that holds it."""
        spark = self._session()
        jvm = spark.sparkContext._jvm
        assert jvm is not None
        path = jvm.org.apache.hadoop.fs.Path(uri)
        return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def check(self, uri: str, where: str) -> None:
        """ConfigError naming ``where`` and the scheme when the session's Hadoop has no file
        system for ``uri`` (``No FileSystem for scheme``, a missing connector class), when
        the file system cannot be reached, or when ``uri`` is a folder that holds other files
        than a previous release's (:data:`sdckit.core.io.RELEASE_FILE_PREFIXES`): an output
        replaces a file or a release, never another folder."""
        scheme = uri_scheme(uri)
        try:
            path, fs = self._fs(uri)
        except Exception as exc:  # py4j's Py4JJavaError, or a malformed URI
            raise ConfigError(
                f"{where} {uri!r}: the Spark session's Hadoop has no file system for the "
                f"scheme {scheme}:// ({_said(exc)}); add its connector to Spark (e.g. "
                f"spark.jars.packages) and set spark.hadoop.fs.{scheme}.impl, or write to a "
                "scheme it has (hdfs://, file://)"
            ) from None
        try:
            foreign = fs.exists(path) and not _is_release_folder(fs, path)
        except Exception as exc:  # an unreachable name node, missing credentials ...
            raise ConfigError(
                f"{where} {uri!r}: cannot reach it through the {scheme}:// file system "
                f"({_said(exc)}); check the URI and the spark.hadoop.* settings"
            ) from None
        if foreign:
            raise ConfigError(
                f"{where} {uri!r} is a folder with other files than a release's part files; "
                "an output replaces only a file or a previous release: choose a new path"
            )

    def upload(self, local: Path, uri: str) -> None:
        """Copy the driver's file ``local`` to ``uri`` (``copyFromLocalFile``, replacing)."""
        path, fs = self._fs(uri)
        jvm = self._session().sparkContext._jvm
        assert jvm is not None
        fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(local.as_uri()), path)

    def commit(self, staged: Sequence[tuple[str, str]]) -> None:
        """Rename each staged ``(temporary, target)`` into place: an existing target is first
        renamed aside (``<temporary>-old``) and removed after the rename. ``FileSystem.rename``
        answers False instead of raising; that is an OSError naming both, the old target
        put back."""
        for tmp, dest in staged:
            src, fs = self._fs(tmp)
            target, _ = self._fs(dest)
            aside = None
            if fs.exists(target):
                aside, _ = self._fs(f"{tmp}-old")
                fs.delete(aside, True)
                if not fs.rename(target, aside):
                    raise OSError(f"cannot move {dest!r} aside to replace it; nothing replaced")
            if not fs.rename(src, target):
                if aside is not None:
                    fs.rename(aside, target)
                raise OSError(f"cannot rename {tmp!r} to {dest!r}; the target was not replaced")
            if aside is not None:
                fs.delete(aside, True)

    def discard(self, uris: Sequence[str]) -> None:
        """Delete ``uris`` recursively (missing ones, and a file system that cannot be
        reached any more, are no error: this runs while a failed job is cleaned up)."""
        for uri in uris:
            try:
                path, fs = self._fs(uri)
                fs.delete(path, True)
            except Exception:  # noqa: BLE001,S110 - clean-up of a run that already failed
                pass


def _said(exc: BaseException) -> str:
    """What a (Java) exception says, on one line, shortened for a message."""
    return " ".join(str(getattr(exc, "java_exception", exc)).split())[:300]


def _is_release_folder(fs: Any, path: Any) -> bool:
    """True for a file, an empty folder, or a folder holding only a Spark release's files,
    at its top or in Hive partition folders (``key=value/``), as
    :func:`sdckit.core.io.check_output_paths` judges a local folder."""
    from sdckit.core.io import RELEASE_FILE_PREFIXES

    if not fs.getFileStatus(path).isDirectory():
        return True
    for status in fs.listStatus(path):
        name = status.getPath().getName()
        if name.startswith(RELEASE_FILE_PREFIXES):
            continue
        if "=" in name and status.isDirectory() and _is_release_folder(fs, status.getPath()):
            continue
        return False
    return True
