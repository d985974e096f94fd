"""The extraction worker: a child process that parses untrusted files one at a time.

Run as ``python -m jobbench.extract._worker MEMORY_MB [TMPDIR]``; every temporary file
(copies for LibreOffice, its profiles) goes under TMPDIR, which the parent removes. It limits its
own address space
(RLIMIT_AS soft limit), then reads length-prefixed JSON requests on stdin and answers on
the original stdout (stray library output is sent to stderr). The parent kills it (its
whole process group) when a file exceeds its time budget; LibreOffice conversions it
starts are killed by its SIGTERM handler. It exits when stdin closes (parent gone).

Protocol (both directions): 8-byte big-endian length, then a UTF-8 JSON object.
Requests: ``{"op": "extract" | "workbook" | "ping", "path", "rel", "limits", "timeout",
"sha256", "size", "workbook": bool}`` (``workbook``: an ``extract`` reply carries the
workbook values; default true; the parent asks for them only when it caches them). Replies
(:func:`encode_reply`): ``{"ok": true, "cacheable": …, "extraction": <Extraction JSON>,
"workbook": <WorkbookValues JSON> | null}``, the model JSON texts sent once as raw parts
after the reply's own JSON, or ``{"ok": false, "error": "…", "refused": bool}``.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys

HEADER = struct.Struct("!Q")
MAX_REQUEST = 16 << 20


def write_raw(stream, data: bytes) -> None:
    """Write ``data`` as one length-prefixed frame and flush."""
    stream.write(HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def encode_reply(reply: dict) -> bytes:
    """A reply frame's body: its JSON (ASCII, one line), then, when ``reply["_raw"]`` names
    keys whose values are JSON texts (a model's ``model_dump_json``), a newline and those
    texts' UTF-8 bytes one after another, their byte lengths listed in the JSON as
    ``"parts": [[key, length], ...]`` (a None value is left out). So a model is encoded
    once, never escaped again as a JSON string."""
    raw = reply.pop("_raw", ())
    head = {k: v for k, v in reply.items() if k not in raw}
    blobs = [(k, reply[k].encode("utf-8")) for k in raw if reply.get(k) is not None]
    head["parts"] = [[k, len(b)] for k, b in blobs]
    return (
        json.dumps(head, ensure_ascii=True).encode("ascii") + b"\n" + b"".join(b for _k, b in blobs)
    )


def decode_reply(body: bytes) -> dict:
    """The reply :func:`encode_reply` wrote: raw parts come back as ``str`` under their keys
    (absent parts as None).

    Raises:
        ValueError: malformed body.
    """
    head, sep, rest = body.partition(b"\n")
    reply = json.loads(head)
    if not isinstance(reply, dict):
        raise ValueError("reply is not an object")
    pos = 0
    for key, length in reply.pop("parts", []) or []:
        if not sep or pos + length > len(rest):
            raise ValueError("reply part out of range")
        reply[key] = rest[pos : pos + length].decode("utf-8")
        pos += length
    return reply


def _read_exact(stream, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _limit_memory(memory_mb: int) -> None:
    if memory_mb <= 0:
        return
    import resource

    soft = memory_mb << 20
    _old_soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and soft > hard:
        soft = hard
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _handle(req: dict) -> dict:
    from ._base import ExtractionError, Refused
    from ._dispatch import run_one, run_workbook
    from ._limits import ExtractLimits

    op = req.get("op")
    if op == "ping":  # also warms up the imports every request needs
        return {"ok": True, "pid": os.getpid()}
    limits = ExtractLimits.model_validate(req["limits"])
    if op == "extract":
        ext, cacheable, wb = run_one(
            req["path"],
            req["rel"],
            limits,
            timeout=req.get("timeout"),
            sha256=req.get("sha256", ""),
            size=req.get("size", 0),
            limit_resources=True,
            want_workbook=bool(req.get("workbook", True)),
        )
        return {
            "ok": True,
            "cacheable": cacheable,
            "extraction": ext.model_dump_json(),
            "workbook": wb.model_dump_json() if wb is not None else None,
            "_raw": ("extraction", "workbook"),
        }
    if op == "workbook":
        try:
            wv, cacheable = run_workbook(
                req["path"],
                req["rel"],
                limits,
                timeout=req.get("timeout"),
                sha256=req.get("sha256", ""),
                limit_resources=True,
            )
        except Refused as exc:
            return {"ok": False, "error": str(exc), "refused": True}
        except ExtractionError as exc:
            return {"ok": False, "error": str(exc), "refused": False}
        return {
            "ok": True,
            "cacheable": cacheable,
            "workbook": wv.model_dump_json(),
            "_raw": ("workbook",),
        }
    return {"ok": False, "error": f"unknown op {op!r}", "refused": False}


def main(argv: list[str] | None = None) -> int:
    """Worker loop (see module docstring)."""
    argv = sys.argv[1:] if argv is None else argv
    memory_mb = int(argv[0]) if argv else 0
    if len(argv) > 1:  # a private temporary directory owned (and removed) by the parent
        import tempfile

        tempfile.tempdir = argv[1]
        os.environ["TMPDIR"] = argv[1]
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    stdin = sys.stdin.buffer
    os.environ.setdefault("TQDM_DISABLE", "1")

    def on_term(signum, frame):  # noqa: ARG001 - signal handler signature
        from ._soffice import PROFILES, kill_active

        kill_active()  # LibreOffice runs in its own session: kill it explicitly
        PROFILES.cleanup()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    _limit_memory(memory_mb)
    while True:
        header = _read_exact(stdin, HEADER.size)
        if header is None:
            return 0
        (n,) = HEADER.unpack(header)
        if n > MAX_REQUEST:
            return 2
        body = _read_exact(stdin, n)
        if body is None:
            return 0
        try:
            reply = _handle(json.loads(body))
        except MemoryError:
            reply = {"ok": False, "error": "extraction worker ran out of memory", "refused": False}
        except Exception as exc:  # noqa: BLE001 - the worker must keep serving
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "refused": False}
        write_raw(out, encode_reply(reply))


if __name__ == "__main__":
    sys.exit(main())
