"""How things read in messages and tables: counts ("1 match", "2 matches"), bot names,
ratings with their intervals or bounds."""

from __future__ import annotations


def plural(count: int, one: str, many: str) -> str:
    """`count` and the word that goes with it."""
    return f"{count} {one if count == 1 else many}"


def bot_label(name: str, version: str) -> str:
    """`name`, or `name@version` past the first version ("" is a stand-in's: no version)."""
    return name if version in ("", "1") else f"{name}@{version}"


def rating_cells(
    rating: float | None,
    ci_low: float | None,
    ci_high: float | None,
    bound: str | None,
    reason: str | None,
    digits: int = 0,
) -> tuple[str, str]:
    """A table line's rating and its 95% interval as shown: "1523" and "[1400, 1650]"; for
    a bot its games do not measure, "below 1068" (or "above ...", or "not measured") and
    the reason instead of an interval (see ladder.plackett_luce.table_line)."""
    if rating is not None and ci_low is not None and ci_high is not None:
        # A measured line with a reason is the one the others are placed against.
        return f"{rating:.{digits}f}", reason or f"[{ci_low:.0f}, {ci_high:.0f}]"
    why = f"not measured: {reason}" if reason else "not measured"
    if bound and rating is not None:
        return f"{bound} {rating:.0f}", why
    return "not measured", reason or ""
