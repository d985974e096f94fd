"""Judge cost from token usage and a price table (packaged defaults + user overrides).

The default table ``judge/data/prices.toml`` lists US dollars per 1M tokens for common judge
models, each row citing the provider page and the date the price applied. A user TOML of the
same shape is merged over it (its rows win).
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ValidationError

from ..records import Usage


class Price(BaseModel):
    """Prices of one model, US dollars per 1,000,000 tokens.

    Attributes:
        input: uncached prompt tokens.
        cached_input: prompt tokens served from the provider's prompt cache (None: billed as
            ``input``).
        output: completion tokens (reasoning tokens included).
        source, checked: where and when the price was read.
    """

    input: float
    output: float
    cached_input: float | None = None
    source: str = ""
    checked: str = ""


class PriceTable(BaseModel):
    """A model → :class:`Price` table with forgiving lookup (see :meth:`lookup`)."""

    models: dict[str, Price]

    def lookup(self, model: str | None) -> Price | None:
        """The price of ``model``: exact name, else without a ``provider/`` prefix, else the
        longest table key that the name starts with followed by ``-`` (dated snapshots such
        as ``gpt-4o-mini-2024-07-18``); case-insensitive. None when unknown."""
        if not model:
            return None
        table = {k.lower(): v for k, v in self.models.items()}
        names = [model.lower()]
        if "/" in model:
            names.append(model.rsplit("/", 1)[-1].lower())
        for name in names:
            if name in table:
                return table[name]
        for name in names:
            best = max((k for k in table if name.startswith(k + "-")), key=len, default=None)
            if best is not None:
                return table[best]
        return None

    def cost(self, model: str | None, usage: Usage) -> float | None:
        """US dollars for ``usage`` under ``model``'s price, or None when the price is unknown.

        cost = ((input − cached) · p_in + cached · p_cached + output · p_out) / 10⁶.
        """
        price = self.lookup(model)
        if price is None:
            return None
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        p_cached = price.cached_input if price.cached_input is not None else price.input
        return (
            (usage.input_tokens - cached) * price.input
            + cached * p_cached
            + usage.output_tokens * price.output
        ) / 1e6


def _parse(data: dict, where: str) -> dict[str, Price]:
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise ValueError(f"{where}: [models] must be a table of model names")
    out = {}
    for name, row in models.items():
        try:
            out[name] = Price.model_validate(row)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise ValueError(f"{where}: models.{name!r}.{field}: {err['msg']}") from exc
    return out


def load_prices(user_file: Path | str | None = None) -> PriceTable:
    """The packaged default prices, with ``user_file`` (TOML, same shape) merged over them.

    Raises:
        ValueError: naming the file and field when a table is malformed.
        FileNotFoundError: ``user_file`` does not exist.
    """
    text = (
        resources.files("jobbench.judge").joinpath("data/prices.toml").read_text(encoding="utf-8")
    )
    models = _parse(tomllib.loads(text), "jobbench/judge/data/prices.toml")
    if user_file is not None:
        p = Path(user_file)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{p}: invalid TOML ({exc})") from exc
        models.update(_parse(data, str(p)))
    return PriceTable(models=models)
