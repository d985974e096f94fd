"""How a workbook draws a cell, as far as it decides whether a reader can see the value.

One :class:`Look` per ``cellXfs`` entry (the style index ``c/@s``; a cell without ``s`` has
style 0) holds the number format, the font colour and size, and the background; its
:meth:`Look.hides` answers, for one value, why a reader of the sheet cannot see it, or None.
The reasons are the ones of :mod:`._hidden` for docx: ``"white text"``, ``"text in its fill
colour"``, ``"tiny text, N pt"``, plus ``"number format hides the value"`` (the format's
section for the value shows no part of it: ``;;;``, ``" "``, ``"-"``, ``[Red]``, ``_-``).

Facts used (ECMA-376 Part 1, §18.8 Styles):

* ``fonts/font`` has ``color`` (``rgb`` ``AARRGGBB``, ``indexed``, ``theme`` with an
  optional ``tint``, or ``auto``) and ``sz`` (points) (§18.8.22, §18.8.19, §18.4.11);
* ``fills/fill`` is a ``patternFill`` (``patternType``, ``fgColor``, ``bgColor``; ``none``
  shows the sheet's white, ``solid`` the foreground; other patterns mix both colours) or a
  ``gradientFill`` of ``stop/color`` (§18.8.32, §18.8.24);
* ``indexed`` colours come from ``colors/indexedColors`` when the workbook has one, else the
  default palette (openpyxl's ``COLOR_INDEX``; 64 and 65 are the system foreground and
  background, black and white) (§18.8.27);
* ``theme`` N is the workbook theme's colour scheme in the order lt1, dk1, lt2, dk2,
  accent1–6, hlink, folHlink (``xl/theme/theme1.xml``, ``a:clrScheme``; the first two pairs
  swapped against the file order, as Excel and openpyxl read them); without a theme part 0
  and 1 are white and black; a ``tint`` t changes the HLS luminance L to L·(1+t) for t < 0
  and L·(1−t)+t for t > 0 (§18.8.19, ``tint``);
* a number format has up to four sections, positive; negative; zero; text, each optionally
  with a colour (``[Red]``, ``[ColorN]`` for palette entry N+7) and a condition (``[>100]``)
  (§18.8.31; Microsoft, "Number format codes").
"""

from __future__ import annotations

import colorsys
import math
import re
from dataclasses import dataclass, field

from ._hidden import is_white, same_colour

TINY_PT = 4.0
"""Text set in fewer points than this counts as hidden (tiny), as in docx (:mod:`._docx`)."""

SHEET_WHITE = "FFFFFF"
"""The background of a cell with no fill."""

_FORMAT_COLOURS = {
    "black": "000000",
    "white": "FFFFFF",
    "red": "FF0000",
    "green": "00FF00",
    "blue": "0000FF",
    "yellow": "FFFF00",
    "magenta": "FF00FF",
    "cyan": "00FFFF",
}
_COND_RE = re.compile(r"^(<=|>=|<>|<|>|=)\s*(-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)$")
_ELAPSED_RE = re.compile(r"^(h+|m+|s+)$", re.IGNORECASE)
_ISO_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _local(tag) -> str:
    """An XML tag's local name (no namespace); '' for comments and processing
    instructions."""
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _children(el, local: str) -> list:
    """The children of ``el``'s first child named ``local`` ([] when there is none)."""
    if el is None:
        return []
    for child in el:
        if _local(child.tag) == local:
            return list(child)
    return []


def _find(el, local: str):
    """``el``'s first child named ``local``, or None."""
    if el is None:
        return None
    for child in el:
        if _local(child.tag) == local:
            return child
    return None


def _default_palette() -> dict[int, str]:
    from openpyxl.styles.colors import COLOR_INDEX

    palette = {i: c[-6:].upper() for i, c in enumerate(COLOR_INDEX)}
    palette.update({64: "000000", 65: "FFFFFF"})
    return palette


def _tinted(rgb: str, tint: float) -> str:
    """``rgb`` with its HLS luminance changed by ``tint`` (−1…1), §18.8.19."""
    r, g, b = (int(rgb[i : i + 2], 16) / 255 for i in (0, 2, 4))
    h, lum, s = colorsys.rgb_to_hls(r, g, b)
    lum = lum * (1 + tint) if tint < 0 else lum * (1 - tint) + tint
    r, g, b = colorsys.hls_to_rgb(h, min(1.0, max(0.0, lum)), s)
    return "".join(f"{round(v * 255):02X}" for v in (r, g, b))


@dataclass
class Palette:
    """The colours a workbook's ``color`` elements refer to."""

    indexed: dict[int, str] = field(default_factory=_default_palette)
    theme: dict[int, str] = field(default_factory=lambda: {0: "FFFFFF", 1: "000000"})
    _formats: dict[str, tuple[Section, ...]] = field(default_factory=dict, repr=False)

    def sections(self, fmt: str) -> tuple[Section, ...]:
        """The sections of number format ``fmt`` with this palette's colours (parsed once
        per format: a workbook may give thousands of styles the same format)."""
        got = self._formats.get(fmt)
        if got is None:
            got = self._formats[fmt] = sections(fmt, self)
        return got

    def colour(self, el) -> str | None:
        """An ``RRGGBB`` for a ``color`` / ``fgColor`` / ``bgColor`` element; for a colour
        it states but this palette does not know, a token ``?<attributes>`` (two such
        tokens are the same colour only when equal); None for no element.

        ``theme`` is read before ``rgb`` and ``indexed`` when an element has several, as
        LibreOffice does (its import filter, tdf#113271)."""
        if el is None:
            return None
        try:
            base: str | None
            if el.get("theme") is not None:
                base = self.theme.get(int(el.get("theme")))
            elif el.get("rgb") is not None:
                rgb = el.get("rgb")
                base = rgb[-6:].upper() if len(rgb) in (6, 8) else None
                if base is not None:
                    int(base, 16)
            elif el.get("indexed") is not None:
                base = self.indexed.get(int(el.get("indexed")))
            elif (el.get("auto") or "").lower() in ("1", "true"):
                base = "000000"
            else:
                base = None
            tint = float(el.get("tint") or 0)
        except ValueError:
            base, tint = None, 0.0
        if base is None or not math.isfinite(tint):
            return "?" + ";".join(f"{k}={v}" for k, v in sorted(el.attrib.items()))
        return _tinted(base, max(-1.0, min(1.0, tint))) if tint else base


_PRESET = {"black": "000000", "white": "FFFFFF", **_FORMAT_COLOURS}


def same(a: str | None, b: str | None) -> bool:
    """True when colours ``a`` and ``b`` (as :meth:`Palette.colour` gives them) look the
    same: within :data:`._hidden.SAME_COLOUR_MAX` per channel, or the same unknown token."""
    if a is not None and a == b:
        return True
    return same_colour(a, b)


def read_theme(root) -> dict[int, str]:
    """``{theme index: RRGGBB}`` from a theme part's ``a:clrScheme`` (see the module
    docstring for the order); entries it does not state are left out."""
    scheme = None
    for el in root.iter():
        if _local(el.tag) == "clrScheme":
            scheme = el
            break
    if scheme is None:
        return {}
    by_name: dict[str, str] = {}
    for slot in scheme:
        for c in slot:
            kind = _local(c.tag)
            val = (
                c.get("lastClr")
                if kind == "sysClr"
                else c.get("val")
                if kind == "srgbClr"
                else _PRESET.get((c.get("val") or "").lower())
                if kind == "prstClr"
                else None
            )
            if val and len(val) == 6:
                by_name[_local(slot.tag)] = val.upper()
            break
    order = ["lt1", "dk1", "lt2", "dk2"] + [f"accent{i}" for i in range(1, 7)]
    order += ["hlink", "folHlink"]
    return {i: by_name[name] for i, name in enumerate(order) if name in by_name}


def font_look(font, palette: Palette) -> tuple[str | None, float | None]:
    """``(RRGGBB, size in points)`` of a ``font`` / ``rPr`` element; a font without
    ``color`` is drawn in the automatic colour (black); the last ``color`` counts."""
    colour: str | None = "000000"
    size = None
    for child in font if font is not None else []:
        kind = _local(child.tag)
        if kind == "color":
            colour = palette.colour(child)
        elif kind == "sz":
            try:
                size = float(child.get("val") or "")
            except ValueError:
                size = None
    return colour, size


def fill_colour(fill, palette: Palette, *, differential: bool = False) -> str | None:
    """The one colour a ``fill`` shows, or None when it shows several or one not known.

    ``differential``: a conditional format's ``dxf`` fill, whose solid colour is its
    ``bgColor`` (§18.8.17)."""
    if fill is None:
        return SHEET_WHITE
    pattern = _find(fill, "patternFill")
    gradient = _find(fill, "gradientFill")
    if gradient is not None:
        stops = [palette.colour(_find(stop, "color")) for stop in gradient]
        if stops and all(same(stops[0], c) for c in stops):
            return stops[0]
        return None
    if pattern is None:
        return SHEET_WHITE
    kind = pattern.get("patternType") or ("solid" if differential else "none")
    fg_el, bg_el = _find(pattern, "fgColor"), _find(pattern, "bgColor")
    if kind == "none":
        return SHEET_WHITE
    if kind == "solid":
        if differential and bg_el is not None:
            return palette.colour(bg_el)
        # no fgColor: the default foreground, black (LibreOffice draws a black cell)
        return palette.colour(fg_el) if fg_el is not None else "000000"
    fg = palette.colour(fg_el) if fg_el is not None else "000000"
    bg = palette.colour(bg_el) if bg_el is not None else "FFFFFF"
    return fg if same(fg, bg) else None


# --------------------------------------------------------------------------- number formats


@dataclass(frozen=True)
class Section:
    """One section of a number format: whether it shows the value (a digit, date or text
    placeholder, ``General``), whether it shows visible literal text, its colour
    (``RRGGBB``) and its condition ``(op, number)``."""

    shows_number: bool
    shows_text: bool
    shows_literal: bool
    colour: str | None
    condition: tuple[str, float] | None


def _split(fmt: str) -> list[str]:
    """``fmt`` split at ``;`` outside quotes and after escapes."""
    out, cur, quoted, i = [], [], False, 0
    while i < len(fmt):
        ch = fmt[i]
        if not quoted and ch in "\\_*" and i + 1 < len(fmt):
            cur.append(fmt[i : i + 2])
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def _section(text: str, palette: Palette) -> Section:
    number = at = literal = False
    colour = None
    condition = None
    i, low = 0, text.lower()
    while i < len(text):
        ch = text[i]
        if ch == '"':
            end = text.find('"', i + 1)
            literal = literal or bool(text[i + 1 : len(text) if end < 0 else end].strip())
            i = len(text) if end < 0 else end + 1
            continue
        if ch in "\\_*":
            literal = literal or (ch != "_" and bool(text[i + 1 : i + 2].strip()))
            i += 2
            continue
        if ch == "[":
            end = text.find("]", i + 1)
            token = text[i + 1 : len(text) if end < 0 else end].strip()
            i = len(text) if end < 0 else end + 1
            name = token.lower()
            m = _COND_RE.match(token.replace(" ", ""))
            if name in _FORMAT_COLOURS:
                colour = _FORMAT_COLOURS[name]
            elif name.startswith("color") and name[5:].strip().isdigit():
                colour = palette.indexed.get(int(name[5:].strip()) + 7)
            elif m:
                condition = (m.group(1), float(m.group(2)))
            elif _ELAPSED_RE.match(token):
                number = True
            elif name.startswith("$"):
                literal = literal or bool(name[1:].partition("-")[0].strip())
            continue
        if low.startswith("general", i):
            number = at = True
            i += 7
            continue
        if ch == "@":
            at = True
        elif ch in "0#?" or ch.lower() in "ymdhsebg":  # e, b, g: East Asian year and era codes
            number = True
        elif low.startswith("am/pm", i) or low.startswith("a/p", i):
            number = True
        elif not ch.isspace():
            literal = True
        i += 1
    return Section(
        shows_number=number,
        shows_text=at,
        shows_literal=literal,
        colour=colour,
        condition=condition,
    )


def sections(fmt: str, palette: Palette) -> tuple[Section, ...]:
    """The sections of number format ``fmt``, colours resolved with ``palette``."""
    return tuple(_section(s, palette) for s in _split(fmt))


def _holds(cond: tuple[str, float], v: float) -> bool:
    op, n = cond
    return {
        "<": v < n,
        ">": v > n,
        "=": v == n,
        "<=": v <= n,
        ">=": v >= n,
        "<>": v != n,
    }[op]


def number_section(secs: tuple[Section, ...], v: float) -> Section:
    """The section that draws number ``v`` (§18.8.31: positive; negative; zero, or the
    sections' own conditions in order, the first section defaulting to ``>0`` (``>=0`` with
    two sections) when a later one has a condition)."""
    nums = [s for s in secs[:3]] or [secs[0]]
    if any(s.condition for s in nums):
        for i, s in enumerate(nums):
            cond = s.condition
            if cond is None and i == 0 and len(nums) > 1:
                cond = (">", 0.0) if len(nums) >= 3 else (">=", 0.0)
            if cond is None or _holds(cond, v):
                return s
        return nums[-1]
    if len(nums) == 1 or v > 0:
        return nums[0]
    if v < 0:
        return nums[1]
    return nums[2] if len(nums) >= 3 else nums[0]


def text_section(secs: tuple[Section, ...]) -> Section | None:
    """The section that draws text: the fourth, or a lone section with ``@``; None when
    the format has none (text is then shown as it is)."""
    if len(secs) >= 4:
        return secs[3]
    if len(secs) == 1 and secs[0].shows_text:
        return secs[0]
    return None


# --------------------------------------------------------------------------- looks


@dataclass(eq=False)
class Look:
    """How one style draws a value.

    ``font`` / ``fill``: ``RRGGBB`` of the text and of the background (None: not known);
    ``size``: font size in points (None: not stated)."""

    number_format: str
    font: str | None
    fill: str | None
    size: float | None
    palette: Palette = field(repr=False)
    secs: tuple[Section, ...] = field(init=False, repr=False)
    plain: bool = field(init=False)
    """True when nothing in the style can hide any value (the common case: no work per
    cell)."""
    _memo: dict[str, str | None] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.secs = self.palette.sections(self.number_format)
        self.plain = not self.could_hide_any()

    def text_reason(
        self, colour: str | None, size: float | None = None, *, fill: str | None = None
    ) -> str | None:
        """Why text in ``colour`` at ``size`` points (default: this style's size) on
        ``fill`` (default: this style's background) cannot be read, or None."""
        size = self.size if size is None else size
        fill = self.fill if fill is None else fill
        if size is not None and size < TINY_PT:
            return f"tiny text, {size:g} pt"
        if same(colour, fill):
            return "white text" if is_white(fill) else "text in its fill colour"
        return None

    def _section_reason(self, sec: Section | None, text: bool, zero: bool = False) -> str | None:
        """``zero``: ``sec`` is the zero section (third), where a literal such as ``"-"``
        states the value (the accountants' zero) instead of hiding it."""
        if sec is not None:
            # a lone text section (``@``) draws numbers as they are
            shown = (
                sec.shows_text
                if text
                else sec.shows_number
                or (len(self.secs) == 1 and sec.shows_text)
                or (zero and sec.shows_literal)
            )
            if not shown:
                return "number format hides the value"
        return self.text_reason((sec.colour if sec is not None else None) or self.font)

    def could_hide_any(self) -> bool:
        """True when some value drawn in this style is invisible (a conditional format
        whose style is such is taken to hide its cells: its conditions are not evaluated)."""
        if self.text_reason(self.font) is not None:
            return True
        nums = self.secs[:3]
        if any(s.condition or self._section_reason(s, False, i == 2) for i, s in enumerate(nums)):
            return True
        text = text_section(self.secs)
        return text is not None and self._section_reason(text, True) is not None

    def hides(self, value: object, *, number: bool | None = None) -> str | None:
        """Why ``value`` drawn in this style is invisible, or None.

        ``number``: force the value's kind (a formula's date result arrives as an ISO
        string); by default ``int``/``float``/dates are numbers and ``str`` is text;
        booleans are drawn as they are, in the font colour."""
        if self.plain or value is None or value == "":
            return None
        if isinstance(value, bool):
            return self.text_reason(self.font)
        if number is None:
            number = not isinstance(value, str)
        if not number:
            if "t" not in self._memo:
                self._memo["t"] = self._section_reason(text_section(self.secs), True)
            return self._memo["t"]
        v = float(value) if isinstance(value, (int, float)) else 1.0
        if any(s.condition for s in self.secs):
            return self._section_reason(number_section(self.secs, v), False)
        kind = "+" if v > 0 else "-" if v < 0 else "0"
        if kind not in self._memo:
            zero = kind == "0" and len(self.secs) >= 3
            self._memo[kind] = self._section_reason(number_section(self.secs, v), False, zero)
        return self._memo[kind]


def looks_date(value: object) -> bool:
    """A formula's date result, as :func:`._xlsx.normalise` returns it (an ISO string)."""
    return isinstance(value, str) and bool(_ISO_DATE_RE.match(value))
