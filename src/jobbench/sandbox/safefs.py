"""Host-side access to agent-writable trees without following symbolic links.

Everything under a trial's workspace and home is written by the agent, so every component of
a path below such a root may have been replaced by a symbolic link (to a host file, to the
dataset, to another trial). The helpers here walk from a directory file descriptor with
``openat(2)`` and ``O_NOFOLLOW`` one component at a time (``O_NOFOLLOW``, ``O_DIRECTORY``:
``open(2)``; ``dir_fd``: Python's :mod:`os` "paths relative to directory descriptors"), so a
symbolic link at any component is refused with :class:`UnsafePath` instead of being
followed, and a swap of a component after a check cannot redirect the access. Only the root
itself is opened by path: it is a directory the harness created (the workspace or home
folder, whose parent the agent cannot write), and it must not be a symbolic link either.

This module is the one owner of such access: the builtin agent's file and search tools,
deliverable collection and its manifest, seeding an agent's HOME and the ownership changes
before each sandboxed command go through it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

MAX_DEPTH = 128
"""Deepest directory level :func:`walk` descends to (each level holds a descriptor)."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_SAFE = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class UnsafePath(OSError):
    """A path below an untrusted root was refused: one of its components is a symbolic link
    (never followed), or is not what the operation needs (a file where a directory is needed,
    a special file where a regular file is needed). ``str()`` is a sentence naming the
    component (relative to the root)."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.ELOOP, message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def split_rel(rel: str) -> list[str]:
    """The components of a relative POSIX path (``.`` and empty components dropped).

    Raises:
        UnsafePath: the path is absolute or has a ``..`` component.
    """
    if rel.startswith("/"):
        raise UnsafePath(f"{rel}: absolute path refused")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafePath(f"{rel}: '..' refused")
    return parts


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (not followed)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def _why(dir_fd: int, name: str, shown: str, want: str) -> UnsafePath:
    """The refusal for ``name`` (in ``dir_fd``) that is not ``want``."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        kind = _kind(st.st_mode)
    except OSError:
        kind = "not accessible"
    return UnsafePath(f"{shown}: is {kind}, not {want}")


def open_root(root: str | os.PathLike[str]) -> int:
    """A descriptor of the trusted root directory (its last component is not followed).

    Raises:
        UnsafePath: ``root`` is a symbolic link or not a directory.
        FileNotFoundError: it does not exist.
    """
    try:
        return os.open(root, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePath(f"{root}: not a directory or a symbolic link (not followed)") from None
        raise


def open_dir(
    root_fd: int, parts: list[str], *, create: bool = False, mode: int = 0o755, shown: str = ""
) -> int:
    """A new descriptor of the directory ``root/parts…``, every component opened with
    ``O_NOFOLLOW`` relative to the previous one.

    Args:
        root_fd: descriptor of the root (not closed).
        parts: components below the root (from :func:`split_rel`).
        create: make missing directories (with ``mode``).
        shown: prefix of the paths named in errors.

    Raises:
        UnsafePath: a component is a symbolic link or not a directory.
        FileNotFoundError: a component is missing and ``create`` is false.
    """
    fd = os.dup(root_fd)
    done: list[str] = []
    try:
        for part in parts:
            done.append(part)
            where = "/".join(x for x in (shown, *done) if x)
            try:
                nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise FileNotFoundError(errno.ENOENT, f"{where}: no such directory") from None
                try:
                    os.mkdir(part, mode, dir_fd=fd)
                except FileExistsError:
                    pass
                try:
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        raise _why(fd, part, where, "a directory") from None
                    raise
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _why(fd, part, where, "a directory") from None
                raise
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_file(
    root: str | os.PathLike[str] | int,
    rel: str,
    *,
    write: bool = False,
    create_parents: bool = False,
    mode: int = 0o644,
) -> int:
    """A descriptor of the regular file ``root/rel`` opened without following any symbolic
    link on the way.

    Reading opens ``O_RDONLY``; writing opens ``O_WRONLY | O_CREAT`` and truncates only once
    the descriptor is known to be a regular file with a single link (so a named pipe, a
    device or a hard link to some other file is never written). The descriptor is blocking.

    Args:
        root: the trusted root (path or descriptor, not closed).
        rel: relative POSIX path below it.
        write: open for writing (created with ``mode``, truncated).
        create_parents: make missing parent directories (writing only).

    Raises:
        UnsafePath: a component is a symbolic link, a parent is not a directory, or the file
            is not a regular file.
        FileNotFoundError: missing (reading, or a parent without ``create_parents``).
        IsADirectoryError: the path names a directory.
    """
    parts = split_rel(rel)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, f"{rel or '.'}: is a directory")
    own = not isinstance(root, int)
    rfd = root if isinstance(root, int) else open_root(root)
    try:
        dfd = open_dir(rfd, parts[:-1], create=write and create_parents, shown="", mode=0o755)
    finally:
        if own:
            os.close(rfd)
    name = parts[-1]
    shown = "/".join(parts)
    try:
        flags = (os.O_WRONLY | os.O_CREAT) if write else os.O_RDONLY
        try:
            fd = os.open(name, flags | _SAFE, mode, dir_fd=dfd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.ENOTDIR):
                raise _why(dfd, name, shown, "a regular file") from None
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(errno.ENOENT, f"{shown}: no such file") from None
            if exc.errno == errno.EISDIR:
                raise IsADirectoryError(errno.EISDIR, f"{shown}: is a directory") from None
            raise
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{shown}: is {_kind(st.st_mode)}, not a regular file")
        if write:
            if st.st_nlink > 1:
                raise UnsafePath(f"{shown}: has other hard links; not overwritten")
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_bytes(root: str | os.PathLike[str] | int, rel: str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``root/rel`` (at most ``limit``), see :func:`open_file`."""
    fd = open_file(root, rel)
    with os.fdopen(fd, "rb") as f:
        return f.read() if limit is None else f.read(limit)


def write_bytes(
    root: str | os.PathLike[str] | int,
    rel: str,
    data: bytes,
    *,
    create_parents: bool = True,
    mode: int = 0o644,
) -> int:
    """Create or overwrite the regular file ``root/rel`` with ``data`` (parents created);
    returns the bytes written. See :func:`open_file` for what is refused."""
    fd = open_file(root, rel, write=True, create_parents=create_parents, mode=mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return len(data)


def walk(
    root: str | os.PathLike[str] | int,
    rel: str = "",
    *,
    prune: Callable[[str, str], bool] | None = None,
    max_depth: int = MAX_DEPTH,
) -> Iterator[tuple[str, os.stat_result | None, str | None]]:
    """Every entry below the directory ``root/rel``, depth first in name order, never
    following a symbolic link (a link is reported, not entered).

    Yields:
        ``(path, lstat, problem)``: ``path`` is relative to ``root/rel`` (POSIX); ``problem``
        is None, or a reason the entry could not be entered (``lstat`` may then be None).
        Directories are yielded before their contents.

    Args:
        prune: ``prune(path, name)`` true for a directory not to enter (it is still yielded).
        max_depth: directories deeper than this are yielded with a problem, not entered.

    Raises:
        UnsafePath: a component of ``rel`` itself is a symbolic link or not a directory.
        FileNotFoundError: ``rel`` does not exist.
    """
    own = not isinstance(root, int)
    rfd = root if isinstance(root, int) else open_root(root)
    try:
        top = open_dir(rfd, split_rel(rel), shown=rel)
    finally:
        if own:
            os.close(rfd)
    try:
        for path, st, problem, _dfd, _name in walk_fd(top, prune=prune, max_depth=max_depth):
            yield path, st, problem
    finally:
        os.close(top)


def walk_fd(
    dfd: int, prefix: str = "", prune=None, max_depth: int = MAX_DEPTH, depth: int = 1
) -> Iterator[tuple[str, os.stat_result | None, str | None, int, str]]:
    """:func:`walk` below the open directory ``dfd``, also yielding for each entry the
    descriptor of its directory and its name (valid only until the next item), for
    ``*at`` operations on it."""
    try:
        with os.scandir(dfd) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield prefix.rstrip("/") or ".", None, f"cannot be listed ({exc.strerror})", dfd, "."
        return
    for e in entries:
        path = f"{prefix}{e.name}"
        try:
            st = e.stat(follow_symlinks=False)
        except OSError as exc:
            yield path, None, f"cannot be examined ({exc.strerror})", dfd, e.name
            continue
        if not stat.S_ISDIR(st.st_mode):
            yield path, st, None, dfd, e.name
            continue
        if depth >= max_depth:
            yield path, st, f"nested more than {max_depth} directories deep", dfd, e.name
            continue
        yield path, st, None, dfd, e.name
        if prune is not None and prune(path, e.name):
            continue
        try:
            cfd = os.open(e.name, _DIR_FLAGS, dir_fd=dfd)
        except OSError as exc:
            yield path, st, f"cannot be entered ({exc.strerror})", dfd, e.name
            continue
        try:
            cst = os.fstat(cfd)
            if (cst.st_dev, cst.st_ino) != (st.st_dev, st.st_ino):
                yield path, st, "changed while being listed", dfd, e.name
                continue
            yield from walk_fd(cfd, path + "/", prune, max_depth, depth + 1)
        finally:
            os.close(cfd)


def lchown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``uid:gid`` every entry of the tree at ``root`` (itself included), changing
    symbolic links themselves and never following one (best effort: errors are ignored)."""
    try:
        rfd = open_root(root)
    except OSError:
        return
    try:
        try:
            os.chown(rfd, uid, gid)
        except OSError:
            pass
        for _path, _st, _problem, dfd, name in walk_fd(rfd):
            if name == ".":
                continue
            try:
                os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                pass
    finally:
        os.close(rfd)


def put_file(root: str | os.PathLike[str] | int, rel: str, data: bytes) -> list[str]:
    """Write ``data`` to ``root/rel`` for the harness (a configuration file in HOME),
    whatever the agent left on the way: a symbolic link or file where a directory belongs,
    or a symbolic link, special file or hard link where the file belongs, is unlinked
    (never followed) and replaced.

    Returns:
        ``"<path>: replaced <what>"`` for every entry replaced.

    Raises:
        IsADirectoryError: a directory is where the file belongs.
    """
    parts = split_rel(rel)
    notes: list[str] = []
    own = not isinstance(root, int)
    rfd = root if isinstance(root, int) else open_root(root)
    try:
        dfd = _replace_dirs(rfd, parts[:-1], notes)
    finally:
        if own:
            os.close(rfd)
    try:
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, f"{rel}: is a directory")
        if st is not None and (not stat.S_ISREG(st.st_mode) or st.st_nlink > 1):
            os.unlink(name, dir_fd=dfd)
            notes.append(f"{rel}: replaced {_kind(st.st_mode)}")
        write_bytes(dfd, name, data, create_parents=False)
    finally:
        os.close(dfd)
    return notes


def copy_tree_into(src: Path, root: Path) -> list[str]:
    """Copy the directories and regular files of the trusted tree ``src`` into the
    untrusted directory ``root`` with :func:`put_file` (existing files are overwritten;
    whatever is in the way is replaced, never followed). Symbolic links and special files
    of ``src`` are skipped, and so is a file where ``root`` has a directory.

    Returns:
        ``"<path>: <reason>"`` for every skipped or replaced entry.
    """
    notes: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        rel_dir = Path(dirpath).relative_to(src).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        if prefix:
            rfd = open_root(root)
            try:
                os.close(_replace_dirs(rfd, split_rel(rel_dir), notes))
            finally:
                os.close(rfd)
        for name in sorted(filenames):
            s = Path(dirpath) / name
            if not stat.S_ISREG(os.lstat(s).st_mode):
                notes.append(f"{prefix}{name}: not a regular file in the seed, skipped")
                continue
            try:
                notes += put_file(root, prefix + name, s.read_bytes())
            except IsADirectoryError:
                notes.append(f"{prefix}{name}: a directory is in the way, skipped")
    return notes


def _replace_dirs(rfd: int, parts: list[str], notes: list[str]) -> int:
    """``open_dir(create=True)`` that unlinks a symbolic link or file in the way."""
    fd = os.dup(rfd)
    try:
        for i, part in enumerate(parts):
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and not stat.S_ISDIR(st.st_mode):
                os.unlink(part, dir_fd=fd)
                notes.append(f"{'/'.join(parts[: i + 1])}: replaced {_kind(st.st_mode)}")
            nfd = open_dir(fd, [part], create=True)
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


__all__ = [
    "MAX_DEPTH",
    "UnsafePath",
    "copy_tree_into",
    "lchown_tree",
    "open_dir",
    "open_file",
    "open_root",
    "put_file",
    "read_bytes",
    "split_rel",
    "walk",
    "walk_fd",
    "write_bytes",
]
