"""Occupation and SOC major-group metadata for the 35 JobBench occupations.

Sources (facts only; see ``data/README.md``): JobBench public leaderboard slugs and display
names; O*NET-SOC 2010 Occupation Data (CC BY 4.0); 2018 SOC major groups (BLS/OMB, public
domain).
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

UNKNOWN_GROUP = "unknown"

PAPER_CATEGORIES: dict[str, str] = {
    "13-0000": "Bus. Fin.",
    "15-0000": "Comp. Math.",
    "17-0000": "Arch. Eng.",
    "11-0000": "Mgmt.",
    "27-0000": "Arts",
}
"""The five category columns of the JobBench paper's tables, keyed by SOC major code."""


class Occupation(BaseModel):
    """Metadata of one occupation.

    Attributes:
        slug: the dataset folder name.
        display_name: human title (JobBench leaderboard spelling), or the slug prettified.
        onet_soc_code: O*NET-SOC 2010 code (e.g. ``15-2041.01``), or None if unknown.
        soc_major_code: 2018 SOC major group code (``15-0000``) or ``unknown``.
        soc_major_title: its title, or ``Unknown``.
    """

    model_config = ConfigDict(frozen=True)

    slug: str
    display_name: str
    onet_soc_code: str | None
    soc_major_code: str
    soc_major_title: str

    @property
    def paper_category(self) -> str | None:
        """The paper's category column (``Bus. Fin.`` …) or None for other groups."""
        return PAPER_CATEGORIES.get(self.soc_major_code)


def _read_csv(name: str) -> list[dict[str, str]]:
    with resources.files("jobbench.tasks").joinpath("data", name).open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@lru_cache(maxsize=1)
def soc_major_groups() -> dict[str, str]:
    """Map of 2018 SOC major group code (``11-0000``) → title, all 23 groups."""
    return {r["soc_major_code"]: r["soc_major_title"] for r in _read_csv("soc_major_groups.csv")}


@lru_cache(maxsize=1)
def occupations() -> dict[str, Occupation]:
    """The 35 JobBench occupations keyed by slug."""
    groups = soc_major_groups()
    out: dict[str, Occupation] = {}
    for r in _read_csv("occupations.csv"):
        out[r["slug"]] = Occupation(
            slug=r["slug"],
            display_name=r["display_name"],
            onet_soc_code=r["onet_soc2010_code"],
            soc_major_code=r["soc_major_code"],
            soc_major_title=groups[r["soc_major_code"]],
        )
    return out


def occupation_for(slug: str) -> Occupation:
    """Metadata for ``slug``; unknown slugs get group ``unknown`` (never an error)."""
    known = occupations().get(slug)
    if known is not None:
        return known
    return Occupation(
        slug=slug,
        display_name=slug.replace("_", " ").replace("-", " ").title(),
        onet_soc_code=None,
        soc_major_code=UNKNOWN_GROUP,
        soc_major_title="Unknown",
    )
