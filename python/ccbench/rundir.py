"""Where a run may be written, and how it is put there without losing anyone's files.

Rules (``docs/results-format.md``, "Writing a run"):

* an absent path or an **empty directory** receives a run;
* a directory holding a **ccbench run** (a ``manifest.json`` of ours) is replaced only
  with ``overwrite``; **anything else** (a file, a non-empty directory that is not a
  run, the working directory full of the user's files) is refused, even with
  ``overwrite``, with a message saying what is there;
* a **symbolic link** is never followed nor replaced: it is refused;
* replacement is **atomic**: the new run is written completely beside the target and
  swapped in with one ``renameat2(RENAME_EXCHANGE)`` where the kernel offers it, else
  with two renames whose interruption is repaired on the next write (the old run is
  put back). At every instant the target, or a sibling named after it, holds a
  complete run: a crash loses neither the old nor the new one;
* temporary siblings are named ``.<name>.tmp-<host>-<pid>-<random>`` (and ``.old-``);
  those left by a process of this host that no longer exists are removed.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import socket
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path

from .errors import OutputDirError

__all__ = [
    "MANIFEST",
    "check_target",
    "clean_stale_siblings",
    "describe_dir",
    "is_run_dir",
    "place",
    "recover",
    "temp_sibling",
]

MANIFEST = "manifest.json"
#: A manifest larger than this is not ours (ours are a few hundred kB at most).
_MAX_MANIFEST_BYTES = 64 * 2**20
_HOST = f"{zlib.crc32(socket.gethostname().encode()):08x}"
_SIBLING = re.compile(r"^\.(?P<name>.+)\.(?P<kind>tmp|old)-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-(?P<rand>[0-9a-f]{12})$")


#: Test hook: called with a step name ("exchanged", "between-renames") in the middle of
#: a replacement, so a test can inject a crash exactly there.
def _no_crash(step: str) -> None:
    return None


crash_point: Callable[[str], None] = _no_crash


def _is_empty_dir(path: Path) -> bool:
    with os.scandir(path) as it:
        return next(it, None) is None


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_run_dir(path: Path) -> bool:
    """Whether ``path`` is a real directory whose ``manifest.json`` is a ccbench manifest
    (a JSON object with ``format_version`` and ``status``)."""
    m = path / MANIFEST
    try:
        if path.is_symlink() or not path.is_dir() or m.is_symlink() or not m.is_file():
            return False
        if m.stat().st_size > _MAX_MANIFEST_BYTES:
            return False
        data = json.loads(m.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "format_version" in data and "status" in data


def describe_dir(path: Path, limit: int = 5) -> str:
    """A short description of what a directory holds, for a refusal message."""
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        return f"unreadable ({e.strerror})"
    shown = ", ".join(_short(n, 40) for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"{len(names)} entr{'y' if len(names) == 1 else 'ies'}: {shown}{more}"


def check_target(target: Path, *, overwrite: bool) -> None:
    """Raise unless a run may be written to ``target`` (see the module rules).

    :class:`FileExistsError` when it holds a run and ``overwrite`` is not set;
    :class:`~ccbench.errors.OutputDirError` when it must not be replaced at all.
    """
    if target.is_symlink():
        raise OutputDirError(
            f"{target} is a symbolic link (to {_short(os.readlink(target))}); ccbench neither follows nor replaces "
            "links for results: give the directory the link points to, or a new path"
        )
    if not target.exists():
        for parent in target.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise OutputDirError(f"{parent} is not a directory, so {target} cannot be created")
                break
        return
    if not target.is_dir():
        raise OutputDirError(f"{target} exists and is not a directory; refusing to replace it: choose another path")
    if _is_empty_dir(target):
        return  # an empty directory receives the run
    if not is_run_dir(target):
        raise OutputDirError(
            f"{target} is not a ccbench run directory (no ccbench {MANIFEST}; it holds {describe_dir(target)}); "
            "refusing to write there, even with --overwrite: choose a new or empty directory"
        )
    if not overwrite:
        raise FileExistsError(f"{target} already exists (a ccbench run); choose another directory or overwrite it")


def temp_sibling(target: Path, kind: str = "tmp") -> Path:
    """A fresh hidden sibling path of ``target`` naming this host and process."""
    return target.parent / f".{target.name}.{kind}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:12]}"


def _proc_state(pid: int) -> tuple[str, int] | None:
    """Process ``pid``'s state letter and start time (ns since the epoch) from /proc,
    or ``None`` where there is no /proc to read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot_s = next(
            float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime ")
        )
    except (OSError, StopIteration, ValueError, IndexError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
    ticks = int(fields[19])  # field 22 of proc(5): starttime, in clock ticks since boot
    return fields[0], int((boot_s + ticks / os.sysconf("SC_CLK_TCK")) * 1e9)


def _pid_alive(pid: int, created_ns: int | None = None) -> bool:
    """Whether the process that made a sibling created at ``created_ns`` may still
    be running. A zombie is dead (a killed worker whose parent died too stays one in
    a container whose PID 1 reaps nothing); so is a live process that started after
    the sibling was made (its pid was reused)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    proc = _proc_state(pid)
    if proc is None:
        return True
    state, start_ns = proc
    if state in ("Z", "X"):
        return False
    # 2 s of slack: btime and starttime are coarse (whole seconds, clock ticks).
    return created_ns is None or start_ns <= created_ns + 2_000_000_000


def _created_ns(path: Path) -> int | None:
    try:
        return path.lstat().st_mtime_ns
    except OSError:
        return None


def _stale_siblings(target: Path) -> list[tuple[str, Path]]:
    """(kind, path) of this target's siblings left by dead processes of this host."""
    out: list[tuple[str, Path]] = []
    try:
        with os.scandir(target.parent) as it:
            entries = list(it)
    except OSError:
        return out
    for entry in entries:
        m = _SIBLING.match(entry.name)
        if m is None or m["name"] != target.name or m["host"] != _HOST:
            continue
        if int(m["pid"]) == os.getpid() or _pid_alive(int(m["pid"]), _created_ns(Path(entry.path))):
            continue
        out.append((m["kind"], Path(entry.path)))
    return out


def recover(target: Path) -> Path | None:
    """Repair a replacement interrupted between its two renames: when ``target`` is
    missing and a dead process left the old run aside, put it back. Returns the
    restored sibling's former path, or ``None``."""
    if target.exists() or target.is_symlink():
        return None
    olds = [p for kind, p in _stale_siblings(target) if kind == "old" and is_run_dir(p)]
    if not olds:
        return None
    newest = max(olds, key=lambda p: p.stat().st_mtime_ns)
    os.rename(newest, target)
    return newest


def clean_stale_siblings(target: Path) -> list[Path]:
    """Remove temporary siblings of ``target`` left by dead processes (after
    :func:`recover` had its chance). Returns what was removed."""
    removed = []
    for _kind, p in _stale_siblings(target):
        if p.is_symlink() or not p.is_dir():
            continue  # not something we created; leave it
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with Linux's ``renameat2(RENAME_EXCHANGE)``. Returns
    ``False`` when the platform or file system does not offer it."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fill_in_place(tmp: Path, target: Path) -> None:
    """Move the finished files of ``tmp`` into the empty directory ``target`` (the
    working directory or a mount point, which cannot be renamed over), manifest last,
    so the directory is a run only once everything is in it."""
    names = sorted(os.listdir(tmp), key=lambda n: n == MANIFEST)
    for name in names:
        os.rename(tmp / name, target / name)
    _fsync_dir(target)
    os.rmdir(tmp)


def _unrenamable(target: Path) -> bool:
    try:
        return os.path.ismount(target) or os.path.samefile(target, os.getcwd())
    except OSError:
        return False


def place(tmp: Path, target: Path, *, overwrite: bool) -> None:
    """Put the finished run directory ``tmp`` (a sibling from :func:`temp_sibling`) at
    ``target``, atomically, after checking again that ``target`` may be replaced."""
    check_target(target, overwrite=overwrite)
    parent = target.parent
    if not target.exists():
        os.rename(tmp, target)
    elif _is_empty_dir(target):
        if _unrenamable(target):
            _fill_in_place(tmp, target)
        else:
            os.rename(tmp, target)  # rename(2) replaces an empty directory atomically (ENOTEMPTY if it filled up)
    elif _exchange(tmp, target):
        crash_point("exchanged")  # target: the new run; tmp: the old one
        _fsync_dir(parent)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    else:
        old = temp_sibling(target, "old")
        os.rename(target, old)
        crash_point("between-renames")  # target missing; old: the old run; tmp: the new one
        os.rename(tmp, target)
        _fsync_dir(parent)
        shutil.rmtree(old, ignore_errors=True)
        return
    _fsync_dir(parent)
