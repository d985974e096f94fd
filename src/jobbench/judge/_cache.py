"""SQLite cache of valid judge replies, so regrading unchanged deliverables costs nothing.

Key: sha256 over (judge model, endpoint and sampling parameters, prompt template version,
mode, rubric and criterion texts asked, deliverable digests and extracted-text digest,
attached image digests, epoch) — see :func:`unit_key`. Only replies that produced a valid
verdict for every criterion asked are stored; errors are never cached, so a regrade retries
exactly the missing or errored verdicts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA = 1


def unit_key(parts: dict[str, Any]) -> str:
    """Hex sha256 of the canonical JSON of ``parts`` (sorted keys, no whitespace)."""
    blob = json.dumps(
        {"schema": SCHEMA, **parts},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCache:
    """A thread-safe SQLite store ``key → payload`` (WAL mode; safe for several processes).

    Args:
        path: the database file (parent directories are created).
    """

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._con = sqlite3.connect(
            self.path, timeout=30.0, check_same_thread=False, isolation_level=None
        )
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, created_at TEXT, "
            "payload TEXT NOT NULL, input_tokens INTEGER, cached_input_tokens INTEGER, output_tokens INTEGER, "
            "cost_usd REAL, calls INTEGER)"
        )
        columns = {row[1] for row in self._con.execute("PRAGMA table_info(replies)")}
        if "calls" not in columns:  # a cache written before usage kept its call count
            try:
                self._con.execute("ALTER TABLE replies ADD COLUMN calls INTEGER")
            except sqlite3.OperationalError:  # another process added it meanwhile
                pass

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored payload for ``key``, or None."""
        hit = self.get_entry(key)
        return hit[0] if hit is not None else None

    def get_entry(self, key: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``(payload, usage)`` stored under ``key``, or None.

        ``usage`` is what the stored replies cost when they were obtained, as a
        :class:`jobbench.records.Usage` dict (``calls``, ``input_tokens``,
        ``cached_input_tokens``, ``output_tokens``, ``cost_usd``). For entries written
        before the call count was stored, ``calls`` is the number of raw replies kept in
        the payload.
        """
        with self._lock:
            row = self._con.execute(
                "SELECT payload, input_tokens, cached_input_tokens, output_tokens, cost_usd, calls "
                "FROM replies WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        payload = json.loads(row[0])
        calls = row[5] if row[5] is not None else len(payload.get("raw") or [])
        usage = {
            "calls": int(calls),
            "input_tokens": int(row[1] or 0),
            "cached_input_tokens": int(row[2] or 0),
            "output_tokens": int(row[3] or 0),
            "cost_usd": row[4],
        }
        return payload, usage

    def put(
        self, key: str, model: str, payload: dict[str, Any], usage: dict[str, Any] | None = None
    ) -> None:
        """Store ``payload`` under ``key`` (replacing), with the usage it cost (a
        :class:`jobbench.records.Usage` dict; kept so that a later grade served from the
        cache can report what its verdicts originally cost)."""
        u = usage or {}
        with self._lock:
            self._con.execute(
                "INSERT OR REPLACE INTO replies (key, model, created_at, payload, input_tokens, cached_input_tokens, "
                "output_tokens, cost_usd, calls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    json.dumps(payload),
                    u.get("input_tokens", 0),
                    u.get("cached_input_tokens", 0),
                    u.get("output_tokens", 0),
                    u.get("cost_usd"),
                    u.get("calls", len(payload.get("raw") or [])),
                ),
            )

    def stats(self) -> dict[str, Any]:
        """``{"path", "entries", "bytes", "models": {model: {"entries", "calls", "input_tokens",
        "output_tokens", "cost_usd"}}}`` — calls, tokens and cost are what the stored replies
        cost originally (what a full regrade saves; ``calls`` counts only entries that stored it)."""
        with self._lock:
            rows = self._con.execute(
                "SELECT model, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), SUM(calls) "
                "FROM replies GROUP BY model"
            ).fetchall()
        models = {
            m: {
                "entries": n,
                "calls": k or 0,
                "input_tokens": i or 0,
                "output_tokens": o or 0,
                "cost_usd": c,
            }
            for m, n, i, o, c, k in rows
        }
        size = sum(
            p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file()
        )
        return {
            "path": str(self.path),
            "entries": sum(v["entries"] for v in models.values()),
            "bytes": size,
            "models": models,
        }

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or only ``model``'s); returns the number deleted."""
        with self._lock:
            if model is None:
                cur = self._con.execute("DELETE FROM replies")
            else:
                cur = self._con.execute("DELETE FROM replies WHERE model = ?", (model,))
            n = cur.rowcount
            self._con.execute("VACUUM")
        return n

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._con.close()
