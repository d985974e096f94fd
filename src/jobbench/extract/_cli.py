"""CLI commands of jobbench.extract, registered on the main app by :func:`register`.

Import heavy modules inside command functions so that `jobbench --help` stays fast.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add this stage's commands to `app`."""

    @app.command("extract")
    def extract_cmd(
        path: Path = typer.Argument(..., help="A deliverable file or a deliverable folder."),
        as_json: bool = typer.Option(
            False, "--json", help="Print JSON: per-file kind, sha256, diagnostics, images, text."
        ),
        max_chars: int = typer.Option(200_000, "--max-chars", help="Per-file character cap."),
        max_total_chars: int = typer.Option(
            1_000_000, "--max-total-chars", help="Folder character cap."
        ),
        max_images: int = typer.Option(
            32,
            "--max-images",
            help="Images extracted per folder (the judge attaches at most 8 per call).",
        ),
        engine: str | None = typer.Option(
            None,
            "--engine",
            help="Workbook recalculation: auto, libreoffice, formulas or cached "
            "(default: $JOBBENCH_XLSX_ENGINE or auto).",
        ),
        no_cache: bool = typer.Option(
            False, "--no-cache", help="Neither read nor write the extraction cache."
        ),
        cache_dir: Path | None = typer.Option(
            None, "--cache-dir", help="Cache directory (default: see docs)."
        ),
        in_process: bool = typer.Option(
            False, "--in-process", help="Parse in this process (no worker subprocess)."
        ),
        images_dir: Path | None = typer.Option(
            None, "--images-dir", help="Also write the attached images here."
        ),
        workers: int = typer.Option(1, "--workers", help="Files extracted concurrently."),
    ) -> None:
        """Print what the judge will see for PATH (a file or a deliverable folder)."""
        from pydantic import ValidationError

        from . import FolderExtraction, escape_file_headers, extract, extract_dir, file_header
        from ._limits import Isolation, default_limits

        try:
            limits = default_limits(
                max_chars=max_chars,
                max_total_chars=max_total_chars,
                max_images=max_images,
                xlsx_engine=engine.lower() if engine else None,
            )
        except ValidationError as exc:
            typer.echo(
                f"error: invalid option: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}",
                err=True,
            )
            raise typer.Exit(2) from exc
        cache = False if no_cache else (cache_dir if cache_dir is not None else None)
        isolation: Isolation | None = "none" if in_process else None
        try:
            if path.is_dir() and not path.is_symlink():
                result = extract_dir(
                    path,
                    max_chars_per_file=max_chars,
                    max_total_chars=max_total_chars,
                    max_images=max_images,
                    limits=limits,
                    cache=cache,
                    isolation=isolation,
                    workers=workers,
                )
                files, text, truncated = result.files, result.text, result.truncated
                ignored, nothing = result.ignored, result.no_deliverable_reason()
            else:
                one = extract(
                    path, max_chars=max_chars, limits=limits, cache=cache, isolation=isolation
                )
                files, truncated = [one], one.truncated
                text = f"{file_header(one.path)}\n{escape_file_headers(one.text)}"
                ignored = []
                nothing = FolderExtraction(files=[one], text=text).no_deliverable_reason()
        except (FileNotFoundError, NotADirectoryError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        if images_dir is not None:
            images_dir.mkdir(parents=True, exist_ok=True)
            for f in files:
                for img in f.images:
                    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", img.name).strip("_") or "image"
                    (images_dir / safe).write_bytes(img.data)
        if as_json:
            payload = {
                "path": str(path),
                "truncated": truncated,
                "gradeable": nothing is None,
                "no_deliverable": nothing,
                "ignored": ignored,
                "files": [
                    {
                        "path": f.path,
                        "kind": f.kind,
                        "sha256": f.sha256,
                        "size": f.size,
                        "chars": len(f.text),
                        "truncated": f.truncated,
                        "cached": f.cached,
                        "diagnostics": [d.model_dump() for d in f.diagnostics],
                        "images": [
                            {
                                "name": i.name,
                                "media_type": i.media_type,
                                "bytes": len(i.data),
                                "sha256": i.sha256,
                            }
                            for i in f.images
                        ],
                    }
                    for f in files
                ],
                "text": text,
            }
            sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
            return
        if text:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
        n_err = sum(1 for f in files for d in f.diagnostics if d.level == "error")
        n_img = sum(len(f.images) for f in files)
        typer.echo(
            f"{len(files)} file(s), {len(text):,} characters, {n_img} image(s), {n_err} error(s)"
            + (f", {len(ignored)} not deliverable(s) ignored" if ignored else "")
            + (", truncated" if truncated else ""),
            err=True,
        )
        if nothing:
            typer.echo(nothing + " (the judge makes no call; the trial scores 0)", err=True)
