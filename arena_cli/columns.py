"""Aligned text tables for the commands that print one: a column is as wide as its widest cell."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    right: Collection[int] = (),
    indent: str = "",
) -> str:
    """`headers` over `rows`, columns two spaces apart; columns in `right` align right
    (numbers). No trailing spaces."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [
        max([len(header), *(len(row[column]) for row in cells)])
        for column, header in enumerate(headers)
    ]

    def line(values: Sequence[str]) -> str:
        padded = (
            value.rjust(width) if column in right else value.ljust(width)
            for column, (value, width) in enumerate(zip(values, widths, strict=True))
        )
        return (indent + "  ".join(padded)).rstrip()

    return "\n".join([line(headers), *(line(row) for row in cells)])
