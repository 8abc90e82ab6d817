"""The ladder's writes: tournaments, their match plans, and recording results.

Plain functions over a `Store`, each one transaction. The workers call them;
they never talk to the referee themselves: the referee writes the `MatchRow`
of a match it played, and `record_match` turns it into results, games,
seats and rating changes, exactly once per match id.

Ids are chosen here and are deterministic where a retry must find the same
thing again: a tournament's matches are `<tournament>-m0001`, ...; a run of a
scheduled template is `<template>-<yymmddHHMM>` (UTC).
"""

from __future__ import annotations

import itertools
import math
import random
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import games
from ladder import ratings
from ladder.fairness import draw_seed
from ladder.models import (
    BotRow,
    GameRow,
    LadderRow,
    MatchRow,
    RatingHistoryRow,
    RatingRow,
    ResultRow,
    SeatRow,
    TournamentMatchRow,
    TournamentRow,
)
from ladder.queries import UnknownBot, ladder_id, resolve_bot
from ladder.store import MatchRequest, NotFound, Store, utcnow

if TYPE_CHECKING:
    from celery.schedules import crontab

__all__ = [
    "ELO",
    "LeagueError",
    "NotFinished",
    "create_tournament",
    "cron",
    "due_runs",
    "finish_tournament",
    "is_due",
    "is_recorded",
    "mark_failed",
    "pending_matches",
    "plan_ladder_matches",
    "plan_round_robin",
    "planned_request",
    "ready_to_finish",
    "record_match",
    "scheduled_run_id",
    "start_scheduled_run",
    "tournament_complete",
    "tournament_los",
    "tournament_of",
]

ELO = ratings.EloConfig()
"""The live Elo's parameters (start 1500, provisional K below 20 games)."""

CHOSEN_SEED_RANGE = 2**31
"""Seeds derived from an operator's chosen seed (public by choice) stay in the old range."""
RECORD_ATTEMPTS = 3
BALANCE_SEARCH = 2000


class LeagueError(ValueError):
    """A tournament request that cannot be accepted; the message says why."""


class NotFinished(ValueError):
    """A match that the referee has not finished (yet): nothing to record."""


# --------------------------------------------------------------------------
# Schedules (cron, evaluated in UTC)
# --------------------------------------------------------------------------


def cron(expression: str) -> crontab:
    """Celery's crontab for a five-field cron expression (`m h dom mon dow`)."""
    fields = expression.split()
    if len(fields) != 5:
        raise LeagueError(
            f"a schedule is a cron expression of 5 fields (minute hour day-of-month month "
            f"day-of-week), got {expression!r}"
        )
    from celery.schedules import crontab  # Celery's own cron parser; imported when needed

    try:
        return crontab.from_string(" ".join(fields))
    except Exception as error:  # celery raises ParseException or ValueError
        raise LeagueError(f"bad schedule {expression!r}: {error}") from None


def is_due(expression: str, minute: datetime) -> bool:
    """Whether the cron `expression` fires at `minute` (UTC; seconds are ignored).

    Like Celery's crontab, a minute must match every field: day of month and
    day of week are both required when both are restricted.
    """
    schedule = cron(expression)
    at = minute.astimezone(UTC)
    # The expanded fields: sets of ints (day of week 0 = Sunday).
    fields: dict[str, set[int]] = {
        name: set(getattr(schedule, name))
        for name in ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
    }
    return (
        at.minute in fields["minute"]
        and at.hour in fields["hour"]
        and at.day in fields["day_of_month"]
        and at.month in fields["month_of_year"]
        and at.isoweekday() % 7 in fields["day_of_week"]
    )


def scheduled_run_id(template_id: str, minute: datetime) -> str:
    """The id of the run of `template_id` started for `minute` (one per minute)."""
    return f"{template_id}-{minute.astimezone(UTC):%y%m%d%H%M}"


# --------------------------------------------------------------------------
# Tournaments
# --------------------------------------------------------------------------


def plan_round_robin(
    entrants: Sequence[str], players: int, seed: int, max_matches: int = 200
) -> list[tuple[str, ...]]:
    """The matches of a round robin: seat orders, one per chosen group of entrants.

    Every combination of `players` entrants plays once when there are at most
    `max_matches` combinations; otherwise a balanced subset of `max_matches`
    of them, chosen greedily so that every entrant plays in about the same
    number of matches (at most one apart), ties broken by the seed. Each
    match seats its bots in a seeded random order.
    """
    if players < 1 or len(entrants) < players:
        raise LeagueError(f"{players} players need at least {players} entrants")
    if max_matches < 1:
        raise LeagueError("max_matches must be at least 1")
    rng = random.Random(seed)
    total = math.comb(len(entrants), players)
    if total <= max_matches:
        groups = [tuple(group) for group in itertools.combinations(entrants, players)]
    else:
        groups = _balanced_groups(list(entrants), players, max_matches, rng)
    plan = []
    for group in groups:
        seats = list(group)
        rng.shuffle(seats)
        plan.append(tuple(seats))
    return plan


def _balanced_groups(
    entrants: list[str], players: int, count: int, rng: random.Random
) -> list[tuple[str, ...]]:
    """`count` distinct groups of `players`, each entrant in about the same number.

    Each step orders the entrants by matches so far (fewest first, seeded
    ties) and looks at the unused combinations in that order, taking the one
    whose busiest member has played least (then the least in total). The
    search stops at the first combination as good as any can be, and looks
    at no more than `BALANCE_SEARCH` of them.
    """
    played: Counter[str] = Counter()
    used: set[frozenset[str]] = set()
    groups: list[tuple[str, ...]] = []
    while len(groups) < count:
        keys = {entrant: rng.random() for entrant in entrants}
        order = sorted(entrants, key=lambda entrant: (played[entrant], keys[entrant]))
        ideal = (played[order[players - 1]], sum(played[e] for e in order[:players]))
        best: tuple[str, ...] | None = None
        best_score = (math.inf, math.inf)
        for looked, group in enumerate(itertools.combinations(order, players)):
            if looked >= BALANCE_SEARCH and best is not None:
                break
            if frozenset(group) in used:
                continue
            score = (max(played[e] for e in group), sum(played[e] for e in group))
            if score < best_score:
                best, best_score = group, score
                if score == ideal:
                    break
        assert best is not None
        used.add(frozenset(best))
        played.update(best)
        groups.append(best)
    _even_out(groups, used, played, entrants)
    return [tuple(sorted(group, key=entrants.index)) for group in groups]


def _even_out(
    groups: list[tuple[str, ...]],
    used: set[frozenset[str]],
    played: Counter[str],
    entrants: list[str],
) -> None:
    """Swap the busiest entrants for the idlest in chosen groups until counts are one apart.

    The greedy choice can end with an entrant one match ahead and another one
    behind when the combinations that would even them out are used up; a
    swap (busiest out, idlest in, the group still new) fixes that.
    """
    for _ in range(4 * len(groups)):
        most = max(played.values())
        least = min(played[e] for e in entrants)
        if most - least <= 1:
            return
        busiest = [e for e in entrants if played[e] == most]
        idlest = [e for e in entrants if played[e] == least]
        swapped = False
        for number, group in enumerate(groups):
            for out in (e for e in group if e in busiest):
                for into in (e for e in idlest if e not in group):
                    changed = frozenset(group) - {out} | {into}
                    if changed in used:
                        continue
                    used.discard(frozenset(group))
                    used.add(changed)
                    groups[number] = tuple(into if e == out else e for e in group)
                    played[out] -= 1
                    played[into] += 1
                    swapped = True
                    break
                if swapped:
                    break
            if swapped:
                break
        if not swapped:
            return


def _resolve_entrants(store: Store, refs: Sequence[str], game: str) -> list[str]:
    ids: list[str] = []
    for ref in refs:
        try:
            bot = resolve_bot(store, ref.strip())
        except UnknownBot as error:
            raise LeagueError(str(error)) from None
        if bot.id in ids:
            raise LeagueError(f"{ref!r} names bot {bot.name}@{bot.version} twice")
        if game not in store.bot(bot.id).games:
            raise LeagueError(f"bot {bot.name}@{bot.version} ({bot.id}) does not play {game}")
        ids.append(bot.id)
    return ids


def _ensure_ladder(store: Store, game: str, players: int) -> str:
    """The ladder of `game` at `players` players, created if it is new."""
    lid = ladder_id(game, players)
    with store.session() as session:
        if session.get(LadderRow, lid) is not None:
            return lid
    try:
        with store.session() as session:
            session.add(LadderRow(id=lid, game=game, players=players, created_at=utcnow()))
    except IntegrityError:
        pass  # created by someone else at the same moment
    return lid


def create_tournament(
    store: Store,
    game: str,
    players: int,
    entrants: Sequence[str],
    duplicate: bool = True,
    deadline_ms: int = 500,
    name: str | None = None,
    schedule: str | None = None,
    options: Mapping[str, Any] | None = None,
    seed: int | None = None,
    max_matches: int = 200,
) -> str:
    """Create a tournament (with its match plan) and return its id.

    `entrants` are bot references (id, name for the latest version, or
    name@version). With a `schedule` (cron, UTC) the tournament is a
    template with status "scheduled" and no matches: beat starts a run of it
    at every tick. Otherwise it is "running" with its round-robin plan.
    Without a `seed` every match's seed is drawn secretly on its own
    (ladder.fairness); with one, the plan and every deal derive from it,
    so they are as public as the operator makes it.
    """
    try:
        spec = games.get(game)
        spec.check_players(players)
        spec.resolve_options(options, players)
    except ValueError as error:
        raise LeagueError(str(error)) from None
    if len(entrants) < players:
        raise LeagueError(
            f"a {players}-player tournament needs at least {players} entrants, got {len(entrants)}"
        )
    if not 1 <= deadline_ms <= 60_000:
        raise LeagueError(f"deadline_ms must be 1..60000, got {deadline_ms}")
    if schedule is not None:
        cron(schedule)
    bot_ids = _resolve_entrants(store, entrants, game)
    chosen = seed is not None
    seed = draw_seed() if seed is None else seed
    plan = [] if schedule else plan_round_robin(bot_ids, players, seed, max_matches)
    tournament_id = "t" + uuid.uuid4().hex[:11]
    now = utcnow()
    _ensure_ladder(store, game, players)
    with store.session() as session:
        session.add(
            TournamentRow(
                id=tournament_id,
                name=name or f"{ladder_id(game, players)} round robin {now:%Y-%m-%d %H:%M}",
                game=game,
                players=players,
                entrants=bot_ids,
                duplicate=duplicate,
                deadline_ms=deadline_ms,
                options={key: str(value) for key, value in (options or {}).items()},
                seed=seed,
                seed_chosen=chosen,
                status="scheduled" if schedule else "running",
                schedule=" ".join(schedule.split()) if schedule else None,
                parent_id=None,
                table=None,
                created_at=now,
                started_at=None if schedule else now,
                finished_at=None,
            )
        )
        session.flush()
        _add_plan(session, tournament_id, seed if chosen else None, plan)
    return tournament_id


def _add_plan(
    session: Session,
    tournament_id: str,
    chosen_seed: int | None,
    plan: Sequence[tuple[str, ...]],
) -> None:
    """Add the planned matches; their seeds derive from `chosen_seed`, or are drawn secretly.

    Each drawn seed comes from `secrets` on its own: seeds derived from one
    stream (a Mersenne Twister) could be predicted from those published
    after the first matches end.
    """
    derived = None if chosen_seed is None else random.Random(f"{chosen_seed}:seeds")
    for number, seats in enumerate(plan, start=1):
        session.add(
            TournamentMatchRow(
                match_id=f"{tournament_id}-m{number:04d}",
                tournament_id=tournament_id,
                number=number,
                bot_ids=list(seats),
                seed=draw_seed() if derived is None else derived.randrange(CHOSEN_SEED_RANGE),
                status="planned",
            )
        )


def start_scheduled_run(store: Store, template_id: str, now: datetime) -> str:
    """Start the run of a scheduled template for the minute of `now`; its id.

    Idempotent per template and minute: asking again for the same minute
    returns the same run and creates nothing.
    """
    run_id = scheduled_run_id(template_id, now)
    with store.session() as session:
        template = session.get(TournamentRow, template_id)
        if template is None:
            raise NotFound(f"no tournament with id {template_id!r}")
        if template.schedule is None:
            raise LeagueError(f"tournament {template_id} has no schedule")
        if session.get(TournamentRow, run_id) is not None:
            return run_id
        minute = now.astimezone(UTC).replace(second=0, microsecond=0)
        chosen = template.seed_chosen
        seed = (
            random.Random(f"{template.seed}:{minute:%Y%m%d%H%M}").randrange(CHOSEN_SEED_RANGE)
            if chosen
            else draw_seed()
        )
        plan = plan_round_robin(template.entrants, template.players, seed)
        started = utcnow()
        template_fields = {
            "game": template.game,
            "players": template.players,
            "entrants": list(template.entrants),
            "duplicate": template.duplicate,
            "deadline_ms": template.deadline_ms,
            "options": dict(template.options),
        }
        name = f"{template.name} {minute:%Y-%m-%d %H:%M}"
    try:
        with store.session() as session:
            session.add(
                TournamentRow(
                    id=run_id,
                    name=name[:128],
                    seed=seed,
                    seed_chosen=chosen,
                    status="running",
                    schedule=None,
                    parent_id=template_id,
                    table=None,
                    created_at=started,
                    started_at=started,
                    finished_at=None,
                    **template_fields,
                )
            )
            session.flush()
            _add_plan(session, run_id, seed if chosen else None, plan)
    except IntegrityError:
        pass  # another beat tick started it at the same moment
    return run_id


def due_runs(store: Store, now: datetime, lookback_minutes: int = 2) -> list[tuple[str, datetime]]:
    """(template id, minute) of every scheduled run due in the last minutes and not yet started.

    Looking back a little covers a beat tick that lands late; a minute
    before the template was created never counts.
    """
    current = now.astimezone(UTC).replace(second=0, microsecond=0)
    due = []
    with store.session() as session:
        templates = session.scalars(
            select(TournamentRow).where(
                TournamentRow.status == "scheduled", TournamentRow.schedule.is_not(None)
            )
        ).all()
        for template in templates:
            created = template.created_at
            if created.tzinfo is None:
                created = created.replace(tzinfo=UTC)
            created = created.replace(second=0, microsecond=0)
            for back in range(lookback_minutes - 1, -1, -1):
                minute = current - timedelta(minutes=back)
                if minute < created or not is_due(template.schedule or "", minute):
                    continue
                if session.get(TournamentRow, scheduled_run_id(template.id, minute)) is None:
                    due.append((template.id, minute))
    return due


def pending_matches(store: Store, tournament_id: str) -> list[str]:
    """Ids of the tournament's planned matches not yet recorded, in order."""
    with store.session() as session:
        return list(
            session.scalars(
                select(TournamentMatchRow.match_id)
                .where(
                    TournamentMatchRow.tournament_id == tournament_id,
                    TournamentMatchRow.status != "recorded",
                )
                .order_by(TournamentMatchRow.number)
            )
        )


def planned_request(store: Store, match_id: str) -> MatchRequest | None:
    """What to ask the referee to play for `match_id`, or None if it is unknown.

    A tournament's match is built from its plan; any other match (a ladder
    match) was already started on the referee, so its stored request is it.
    """
    with store.session() as session:
        planned = session.get(TournamentMatchRow, match_id)
        if planned is not None:
            tournament = session.get(TournamentRow, planned.tournament_id)
            assert tournament is not None
            return MatchRequest(
                id=match_id,
                game=tournament.game,
                players=tournament.players,
                bot_ids=tuple(planned.bot_ids),
                seed=planned.seed,
                options={key: str(value) for key, value in tournament.options.items()},
                duplicate=tournament.duplicate,
                deadline_ms=tournament.deadline_ms,
            )
    try:
        return store.match(match_id).request
    except NotFound:
        return None


def tournament_of(store: Store, match_id: str) -> str | None:
    """The tournament a match was planned for, or None (a ladder match)."""
    with store.session() as session:
        planned = session.get(TournamentMatchRow, match_id)
        return None if planned is None else planned.tournament_id


def mark_failed(store: Store, match_id: str) -> None:
    """Mark a tournament's match as failed for good (it will not be recorded).

    The tournament then stays unfinished; creating its round robin again
    tries the failed matches once more.
    """
    with store.session() as session:
        planned = session.get(TournamentMatchRow, match_id)
        if planned is not None and planned.status != "recorded":
            planned.status = "failed"


def tournament_complete(store: Store, tournament_id: str) -> bool:
    """Whether every planned match of the tournament has been recorded."""
    with store.session() as session:
        counts = dict(
            session.execute(
                select(TournamentMatchRow.status, func.count())
                .where(TournamentMatchRow.tournament_id == tournament_id)
                .group_by(TournamentMatchRow.status)
            ).all()
        )
    return bool(counts) and set(counts) == {"recorded"}


def ready_to_finish(store: Store, tournament_id: str) -> bool:
    """Whether the tournament is running and every one of its matches is recorded."""
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None or tournament.status != "running":
            return False
    return tournament_complete(store, tournament_id)


# --------------------------------------------------------------------------
# Recording a match, exactly once
# --------------------------------------------------------------------------


def is_recorded(store: Store, match_id: str) -> bool:
    """Whether the match's result has been recorded."""
    with store.session() as session:
        return _recorded(session, match_id)


def _recorded(session: Session, match_id: str) -> bool:
    return (
        session.scalar(select(ResultRow.entry).where(ResultRow.match_id == match_id).limit(1))
        is not None
    )


def record_match(store: Store, match_id: str) -> bool:
    """Record a finished match: results, games, seats and rating changes; True if now.

    All of it is one transaction, done at most once per match id: when the
    match is already recorded nothing is written and the answer is False,
    and a recorder that loses a race (its insert collides) rolls back
    everything it wrote and answers False too. Recorders of one ladder take
    its row lock first, so they are serialised (on SQLite the first write
    takes the database's write lock) and read each other's committed ratings.
    """
    match = store.match(match_id)
    if match.status != "finished" or match.result is None:
        raise NotFinished(f"match {match_id} is {match.status}, not finished")
    request = match.request
    if len(set(request.bot_ids)) != len(request.bot_ids):
        raise LeagueError(f"match {match_id} seats one bot twice; it cannot be rated")
    lid = _ensure_ladder(store, request.game, request.players)
    for attempt in range(RECORD_ATTEMPTS):
        try:
            with store.session() as session:
                return _record(session, match_id, lid)
        except IntegrityError:
            if is_recorded(store, match_id):
                return False
            if attempt == RECORD_ATTEMPTS - 1:
                raise
    return False  # pragma: no cover - the loop returns or raises


def _record(session: Session, match_id: str, lid: str) -> bool:
    # The ladder's row lock first: this statement also opens the write
    # transaction on SQLite, before anything is read.
    session.execute(
        update(LadderRow)
        .where(LadderRow.id == lid)
        .values(players=LadderRow.players)
        .execution_options(synchronize_session=False)
    )
    if _recorded(session, match_id):
        return False
    match = session.get(MatchRow, match_id)
    assert match is not None and match.result is not None
    result = match.result
    bots: list[str] = list(result["bots"])
    ranks: list[int] = [int(rank) for rank in result["ranks"]]
    scores: list[int] = [int(score) for score in result["scores"]]
    forfeits = set(result.get("forfeits", []))
    planned = session.get(TournamentMatchRow, match_id)
    tournament_id = None if planned is None else planned.tournament_id
    now = utcnow()
    for entry, bot in enumerate(bots):
        session.add(
            ResultRow(
                match_id=match_id,
                entry=entry,
                bot_id=bot,
                ladder_id=lid,
                tournament_id=tournament_id,
                score=scores[entry],
                rank=ranks[entry],
                forfeit=bot in forfeits,
                recorded_at=now,
            )
        )
    for index, game in enumerate(result.get("games", [])):
        session.add(
            GameRow(
                match_id=match_id,
                game_index=index,
                seed=int(game["seed"]),
                rounds=int(game["rounds"]),
            )
        )
        for seat, bot in enumerate(game["seats"]):
            session.add(
                SeatRow(
                    match_id=match_id,
                    game_index=index,
                    seat=seat,
                    bot_id=bot,
                    score=int(game["scores"][seat]),
                    rank=int(game["ranks"][seat]),
                )
            )
    rows = []
    for bot in bots:
        rating = session.get(RatingRow, (lid, bot))
        if rating is None:
            rating = RatingRow(ladder_id=lid, bot_id=bot, rating=ELO.start, games=0, updated_at=now)
            session.add(rating)
        rows.append(rating)
    deltas = ratings.elo_update(
        [row.rating for row in rows], ranks, [row.games for row in rows], ELO
    )
    for row, delta in zip(rows, deltas, strict=True):
        before = row.rating
        row.rating = before + delta
        row.games += 1
        row.updated_at = now
        session.add(
            RatingHistoryRow(
                ladder_id=lid,
                bot_id=row.bot_id,
                match_id=match_id,
                rating_before=before,
                rating_after=row.rating,
                games=row.games,
                at=now,
            )
        )
    if planned is not None:
        planned.status = "recorded"
    session.flush()
    return True


# --------------------------------------------------------------------------
# Tournament table and head-to-head
# --------------------------------------------------------------------------


def _tournament_rankings(
    session: Session, tournament: TournamentRow
) -> tuple[list[str], list[list[tuple[int, int]]], list[str]]:
    """The entrants, every game of the tournament as a ranking over them, and its match.

    Per game the seats' ranks, except that a bot that forfeited the match is
    placed last in each of its games (as in the match result), the others
    keeping their order. The games of one match (the rotations of one deal)
    are not independent: their match id clusters them in the fit.
    """
    entrants: list[str] = list(tournament.entrants)
    index = {bot: number for number, bot in enumerate(entrants)}
    match_ids = select(TournamentMatchRow.match_id).where(
        TournamentMatchRow.tournament_id == tournament.id
    )
    forfeits = {
        (row.match_id, row.bot_id)
        for row in session.scalars(
            select(ResultRow).where(ResultRow.match_id.in_(match_ids), ResultRow.forfeit)
        )
    }
    seats = session.scalars(
        select(SeatRow)
        .where(SeatRow.match_id.in_(match_ids))
        .order_by(SeatRow.match_id, SeatRow.game_index, SeatRow.seat)
    ).all()
    rankings: list[list[tuple[int, int]]] = []
    matches: list[str] = []
    for (match_id, _), group in itertools.groupby(seats, key=lambda s: (s.match_id, s.game_index)):
        game = list(group)
        playing = [s for s in game if (s.match_id, s.bot_id) not in forfeits]
        ranking = [
            (index[s.bot_id], 1 + sum(1 for o in playing if o.rank < s.rank)) for s in playing
        ]
        ranking += [(index[s.bot_id], len(playing) + 1) for s in game if s not in playing]
        rankings.append(ranking)
        matches.append(match_id)
    return entrants, rankings, matches


def _labels(keys: list[str]) -> list[int]:
    """One small int per distinct key, in order of first appearance."""
    numbers: dict[str, int] = {}
    return [numbers.setdefault(key, len(numbers)) for key in keys]


def finish_tournament(store: Store, tournament_id: str) -> bool:
    """Store the tournament's table and mark it finished, once all its matches are recorded.

    The table is maximum-likelihood Plackett-Luce ratings with 95% intervals
    from all the tournament's games: a list of {"bot_id", "rating",
    "ci_low", "ci_high", "games"}, best first. True when the tournament is
    finished (now or before); False while matches are outstanding.
    Idempotent: a finished tournament is left as it is.
    """
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        if tournament.status == "finished":
            return True
        if tournament.status == "scheduled":
            return False
    if not tournament_complete(store, tournament_id):
        return False
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        assert tournament is not None
        if tournament.status == "finished":
            return True
        entrants, rankings, matches = _tournament_rankings(session, tournament)
        fit = ratings.plackett_luce(len(entrants), rankings, clusters=_labels(matches))
        table: list[dict[str, Any]] = [
            {
                "bot_id": bot,
                "rating": round(item.rating, 2),
                "ci_low": round(item.ci_low, 2),
                "ci_high": round(item.ci_high, 2),
                "games": item.games,
            }
            for bot, item in zip(entrants, fit.items, strict=True)
        ]
        table.sort(key=lambda line: (-float(line["rating"]), str(line["bot_id"])))
        tournament.table = table
        tournament.status = "finished"
        tournament.finished_at = utcnow()
    return True


def tournament_los(store: Store, tournament_id: str, a: str, b: str) -> dict[str, Any]:
    """Is A stronger than B? Their games against each other in the tournament.

    A and B are bot references. The answer holds A's wins, draws and losses
    against B over the games both played (a win is a better rank, whatever
    the others did), the likelihood of superiority, and an SPRT of
    elo0 = 0 against elo1 = 10.
    """
    bots = []
    for ref in (a, b):
        try:
            bots.append(resolve_bot(store, ref))
        except UnknownBot as error:
            raise LeagueError(str(error)) from None
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None:
            raise NotFound(f"no tournament with id {tournament_id!r}")
        entrants, rankings, _ = _tournament_rankings(session, tournament)
    for bot in bots:
        if bot.id not in entrants:
            raise LeagueError(f"bot {bot.name}@{bot.version} is not in tournament {tournament_id}")
    if bots[0].id == bots[1].id:
        raise LeagueError("A and B must be different bots")
    wins, draws, losses = ratings.pairwise_record(
        rankings, entrants.index(bots[0].id), entrants.index(bots[1].id)
    )
    test = ratings.sprt(wins, draws, losses)
    return {
        "tournament": tournament_id,
        "a": bots[0].id,
        "b": bots[1].id,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "los": ratings.likelihood_of_superiority(wins, losses),
        "sprt": {
            "elo0": 0.0,
            "elo1": 10.0,
            "llr": test.llr,
            "lower": test.lower,
            "upper": test.upper,
            "decision": test.decision,
        },
    }


# --------------------------------------------------------------------------
# The continuous ladder
# --------------------------------------------------------------------------


def plan_ladder_matches(
    store: Store,
    lid: str,
    candidates: Sequence[str],
    tick: str,
    *,
    duplicate: bool = True,
    deadline_ms: int = 0,
) -> list[MatchRequest]:
    """The next matches of ladder `lid` among `candidates` (bots free to play now).

    Fair: the bots that play the ladder's game are ordered by rated games on
    this ladder, fewest first (ties broken by a seed from the ladder and
    `tick`), and taken `players` at a time into disjoint matches, each
    seated in a seeded random order. Ids are `L<tick>-<ladder>-<k>`, where
    `tick` names one tick (beat's task id), so a tick delivered twice asks
    for the same matches again (the referee plays each once). The requests
    carry no seed: the store draws a secret one when the match is first
    stored (pairings may be public, deals never).
    `deadline_ms` 0 is the referee's default. These matches belong to no
    tournament: recording them rates them on the ladder only.
    """
    rng = random.Random(f"{lid}:{tick}")
    with store.session() as session:
        ladder = session.get(LadderRow, lid)
        if ladder is None:
            raise NotFound(f"no ladder {lid!r}")
        wanted = list(dict.fromkeys(candidates))
        rows = session.scalars(select(BotRow).where(BotRow.id.in_(wanted))).all()
        eligible = sorted(row.id for row in rows if ladder.game in row.games)
        played = dict(
            session.execute(
                select(RatingRow.bot_id, RatingRow.games).where(
                    RatingRow.ladder_id == lid, RatingRow.bot_id.in_(eligible)
                )
            ).all()
        )
        game, players = ladder.game, ladder.players
    keys = {bot: rng.random() for bot in eligible}
    order = sorted(eligible, key=lambda bot: (played.get(bot, 0), keys[bot]))
    requests = []
    for number, start in enumerate(range(0, len(order) - players + 1, players)):
        group = order[start : start + players]
        rng.shuffle(group)
        requests.append(
            MatchRequest(
                id=f"L{tick}-{lid}-{number}",
                game=game,
                players=players,
                bot_ids=tuple(group),
                seed=None,
                options={},
                duplicate=duplicate,
                deadline_ms=deadline_ms,
            )
        )
    return requests
