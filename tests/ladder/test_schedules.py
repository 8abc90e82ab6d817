"""ladder.schedules: cron expressions and the ids of scheduled runs (no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ladder import schedules
from ladder.errors import LeagueError


def test_cron_schedules() -> None:
    at = datetime(2026, 3, 2, 3, 0, tzinfo=UTC)  # a Monday
    assert schedules.is_due("0 3 * * *", at)
    assert not schedules.is_due("0 3 * * *", at + timedelta(minutes=1))
    assert schedules.is_due("*/15 * * * 1", at + timedelta(minutes=45))
    assert not schedules.is_due("*/15 * * * 0", at)
    assert schedules.is_due("* * * * *", at + timedelta(seconds=59))
    for bad in ("", "* * * *", "61 * * * *", "* * * * * *", "x y z w v"):
        with pytest.raises(LeagueError):
            schedules.cron(bad)
    assert schedules.scheduled_run_id("tabc", at) == "tabc-2603020300"


# Schedules stored before ladder.schedules were parsed by Celery's crontab: they keep their meaning.
CELERY_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
CELERY_ACCEPTED = [
    "* * * * *",
    "0 3 * * *",
    "*/15 * * * 1",
    "1,13,30-45,50-59/2 0,8-17/2 * * *",
    "50-10 22-2 28-3 dec-feb fri-mon",
    "0-59/7 */3 2-30/2 */2 1-5/2",
    "30 12 1-7,15-21 Feb Saturday",
    "0 0 31 1,2 sun",
]
CELERY_REFUSED = [
    "61 * * * *",
    "* 24 * * *",
    "* * 0 * *",
    "* * * 13 *",
    "* * * * 7",
    "*/0 * * * *",
    "5/2 * * * *",
    "-1 * * * *",
    "1,,2 * * * *",
    "0 0 30 2 *",
]


def test_schedules_mean_what_celery_made_of_them() -> None:
    from celery.schedules import ParseException, crontab

    for expression in CELERY_ACCEPTED:
        theirs = crontab.from_string(expression)
        ours = schedules.cron(expression)
        # Celery's stubs do not declare the expanded fields.
        expanded = tuple(getattr(theirs, name) for name in CELERY_FIELDS)
        assert (ours.minutes, ours.hours, ours.days, ours.months, ours.weekdays) == expanded, (
            expression
        )
    for expression in CELERY_REFUSED:
        with pytest.raises((ValueError, ParseException)):
            crontab.from_string(expression)
        with pytest.raises(LeagueError):
            schedules.cron(expression)


def test_next_run_is_the_first_due_minute_after_now() -> None:
    now = datetime(2026, 12, 1, 20, 5, 30, tzinfo=UTC)
    assert schedules.next_run("* * * * *", now) == datetime(2026, 12, 1, 20, 6, tzinfo=UTC)
    assert schedules.next_run("0 3 * * *", now) == datetime(2026, 12, 2, 3, 0, tzinfo=UTC)
    # Day of month and day of week both (Celery's rule): the first Monday the 1st.
    assert schedules.next_run("0 0 1 * mon", now) == datetime(2027, 2, 1, 0, 0, tzinfo=UTC)
    assert schedules.next_run("0 0 29 2 *", now) == datetime(2028, 2, 29, 0, 0, tzinfo=UTC)
    for expression in ("*/7 */5 * * *", "30 12 15 6 *", "15 9 * * fri"):
        found = schedules.next_run(expression, now)
        assert found is not None and found > now and schedules.is_due(expression, found)
        minute = now.replace(second=0) + timedelta(minutes=1)
        while minute < found:
            assert not schedules.is_due(expression, minute)
            minute += timedelta(minutes=1)
