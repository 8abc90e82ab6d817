"""Progress of a long command on a terminal: a bar with a count, the time spent and an ETA.

Shown only when stderr is a terminal and the command prints no JSON, so that
scripts and pipes see the result alone. The bar is rich's (the server
install has it); without rich there is none.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable, Iterator

Advance = Callable[[], None]
"""Count one more unit of work done."""


def wanted(json_output: bool) -> bool:
    """Whether a command that may print JSON shows progress."""
    return not json_output and sys.stderr.isatty() and importlib.util.find_spec("rich") is not None


@contextlib.contextmanager
def progress(description: str, total: int, show: bool) -> Iterator[Advance]:
    """A bar for `total` units of work while the block runs (or nothing unless `show`)."""
    if not show:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda: bar.advance(task)
