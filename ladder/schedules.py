"""Cron schedules of scheduled tournaments, evaluated in UTC. Pure: no Celery, no clock.

A schedule is five fields, `minute hour day-of-month month day-of-week`,
in the grammar of Celery's crontab, which parsed them before (so stored
schedules keep their meaning): each field is a comma-separated list of
`*`, `N` or `N-M` (a range past the end wraps round, as in `fri-mon`),
each optionally followed by `/STEP`. Days of the week are 0-6 from Sunday
or names (`sun`, `monday`), months 1-12 or names (`jan`). A minute is due
when it matches every field: day of month and day of week both, when both
are restricted (Celery's rule, not Vixie cron's "either").
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ladder.errors import LeagueError

WEEKDAYS = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
    "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
# The most days each month can have: 2000 was a leap year.
DAYS_IN_MONTH = {month: calendar.monthrange(2000, month)[1] for month in range(1, 13)}
DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class _Field:
    """One of the five fields: its name in messages, its range and its value names."""

    name: str
    low: int
    high: int
    names: dict[str, int]


FIELDS = (
    _Field("minute", 0, 59, {}),
    _Field("hour", 0, 23, {}),
    _Field("day of month", 1, 31, {}),
    _Field("month", 1, 12, MONTHS),
    _Field("day of week", 0, 6, WEEKDAYS),
)


@dataclass(frozen=True)
class Cron:
    """A parsed schedule: the values each field allows."""

    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    """0 is Sunday."""


def cron(expression: str) -> Cron:
    """The schedule of a five-field cron expression (`m h dom mon dow`); LeagueError if bad."""
    fields = expression.split()
    if len(fields) != 5:
        raise LeagueError(
            f"a schedule is a cron expression of 5 fields (minute hour day-of-month month "
            f"day-of-week), got {expression!r}"
        )
    try:
        minutes, hours, days, months, weekdays = (
            _values(text, field) for text, field in zip(fields, FIELDS, strict=True)
        )
    except ValueError as error:
        raise LeagueError(f"bad schedule {expression!r}: {error}") from None
    if not any(day <= DAYS_IN_MONTH[month] for month in months for day in days):
        raise LeagueError(f"bad schedule {expression!r}: none of its days is in any of its months")
    return Cron(minutes, hours, days, months, weekdays)


def is_due(expression: str, minute: datetime) -> bool:
    """Whether the cron `expression` fires at `minute` (UTC; seconds are ignored)."""
    schedule = cron(expression)
    at = minute.astimezone(UTC)
    return (
        at.minute in schedule.minutes
        and at.hour in schedule.hours
        and at.day in schedule.days
        and at.month in schedule.months
        and at.isoweekday() % 7 in schedule.weekdays
    )


def next_run(expression: str, after: datetime, within_days: int = 5 * 366) -> datetime | None:
    """The first minute after `after` at which `expression` fires (UTC), or None within the
    years searched (a schedule such as "0 0 30 2 *" never fires)."""
    schedule = cron(expression)
    start = after.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    day = start.replace(hour=0, minute=0)
    for _ in range(within_days):
        if (
            day.day in schedule.days
            and day.month in schedule.months
            and day.isoweekday() % 7 in schedule.weekdays
        ):
            for hour in sorted(schedule.hours):
                for minute in sorted(schedule.minutes):
                    at = day.replace(hour=hour, minute=minute)
                    if at >= start:
                        return at
        day += timedelta(days=1)
    return None


def scheduled_run_id(template_id: str, minute: datetime) -> str:
    """The id of the run of `template_id` started for `minute` (one per minute)."""
    return f"{template_id}-{minute.astimezone(UTC):%y%m%d%H%M}"


def _values(text: str, field: _Field) -> frozenset[int]:
    """The values one field allows, e.g. "1,10-20/5" as a minute: {1, 10, 15, 20}."""
    values: set[int] = set()
    for part in text.split(","):
        span, slash, step = part.partition("/")
        if span == "*":
            expanded = list(range(field.low, field.high + 1))
        elif "-" in span:
            first, _, last = span.partition("-")
            start, end = _number(first, field), _number(last, field)
            expanded = (
                list(range(start, end + 1))
                if start <= end
                else [*range(start, field.high + 1), *range(field.low, end + 1)]
            )
        elif slash:
            raise ValueError(f"{field.name} {part!r}: a step follows * or a range")
        else:
            expanded = [_number(span, field)]
        if slash:
            if not DIGITS.fullmatch(step) or int(step) < 1:
                raise ValueError(f"{field.name} {part!r}: the step must be a number from 1")
            expanded = expanded[:: int(step)]
        values.update(expanded)
    return frozenset(values)


def _number(text: str, field: _Field) -> int:
    """One value of a field: digits, or a name whose first three letters are known."""
    if DIGITS.fullmatch(text):
        value = int(text)
    elif text[:3].lower() in field.names and text.isalpha():
        value = field.names[text[:3].lower()]
    else:
        raise ValueError(f"{field.name} {text!r} is not a number or a name")
    if not field.low <= value <= field.high:
        raise ValueError(f"{field.name} {value} is outside {field.low}-{field.high}")
    return value
