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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA = 1


def unit_key(parts: dict[str, Any]) -> str:
    """Hex sha256 of the canonical JSON of ``parts`` (sorted keys, no whitespace)."""
    blob = json.dumps({"schema": SCHEMA, **parts}, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
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
        self._con = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute(
            "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, created_at TEXT, "
            "payload TEXT NOT NULL, input_tokens INTEGER, cached_input_tokens INTEGER, output_tokens INTEGER, "
            "cost_usd REAL)"
        )

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored payload for ``key``, or None."""
        with self._lock:
            row = self._con.execute("SELECT payload FROM replies WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, payload: dict[str, Any], usage: dict[str, Any] | None = None) -> None:
        """Store ``payload`` under ``key`` (replacing), with the usage it cost."""
        u = usage or {}
        with self._lock:
            self._con.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, model, datetime.now(timezone.utc).isoformat(timespec="seconds"), json.dumps(payload),
                 u.get("input_tokens", 0), u.get("cached_input_tokens", 0), u.get("output_tokens", 0),
                 u.get("cost_usd")),
            )

    def stats(self) -> dict[str, Any]:
        """``{"path", "entries", "bytes", "models": {model: {"entries", "input_tokens",
        "output_tokens", "cost_usd"}}}`` — tokens and cost are what the stored replies cost
        originally (what a full regrade saves)."""
        with self._lock:
            rows = self._con.execute(
                "SELECT model, COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd) FROM replies GROUP BY model"
            ).fetchall()
        models = {m: {"entries": n, "input_tokens": i or 0, "output_tokens": o or 0, "cost_usd": c} for m, n, i, o, c in rows}
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return {"path": str(self.path), "entries": sum(v["entries"] for v in models.values()), "bytes": size, "models": models}

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
