"""Tournaments: creating round robins and Swiss tournaments, their match plans, scheduled
runs, and their progress.

Plain functions over a `Store`, each one transaction; the workers call
them. Ids are chosen here and are deterministic where a retry must find the
same thing again: a tournament's matches are `<tournament>-m0001`, ... (a
Swiss tournament's rounds go on counting); a run of a scheduled template is
`<template>-<yymmddHHMM>` (UTC). A Swiss tournament's first round is
planned here, each later one by `ladder.swiss_rounds.next_round`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

import games
from ladder.elo import ELO_START
from ladder.errors import LeagueError
from ladder.fairness import derive_seed, draw_seed
from ladder.models import MatchRow, RatingRow, TournamentMatchRow, TournamentRow
from ladder.pairing import plan_round_robin
from ladder.queries import UnknownBot, ladder_id, resolve_bot
from ladder.recording import ensure_ladder
from ladder.records import MatchStatus, PlanStatus, TournamentFormat, TournamentStatus
from ladder.schedules import cron, is_due, scheduled_run_id
from ladder.store import MatchRequest, NotFound, Store, lock_rows, rows_changed
from ladder.swiss import MAX_ROUNDS, Seeding, round_rng, seat_round, standing_order

MAX_MATCHES = 200
"""The most matches a round robin plays by default (a balanced subset above that)."""

OPEN = (PlanStatus.PLANNED, PlanStatus.STARTED)
"""A planned match still to be recorded: neither recorded, failed nor cancelled."""


def _resolve_entrants(store: Store, refs: Sequence[str], game: str) -> list[str]:
    ids: list[str] = []
    for ref in refs:
        try:
            bot = resolve_bot(store, ref.strip())
        except UnknownBot as error:
            raise LeagueError(str(error)) from None
        if bot.id in ids:
            raise LeagueError(f"{ref!r} names bot {bot.name}@{bot.version} twice")
        if bot.retired:
            raise LeagueError(
                f"bot {bot.name}@{bot.version} ({bot.id}) is retired "
                f"(`arena bot retire --undo {bot.name}@{bot.version}` brings it back)"
            )
        if game not in store.bot(bot.id).games:
            raise LeagueError(f"bot {bot.name}@{bot.version} ({bot.id}) does not play {game}")
        ids.append(bot.id)
    return ids


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
    max_matches: int = MAX_MATCHES,
    format: TournamentFormat = TournamentFormat.ROUND_ROBIN,
    rounds: int = 1,
    seeding: Seeding = Seeding.DRAW,
) -> str:
    """Create a tournament (with its match plan) and return its id.

    `entrants` are bot references (id, name for the latest version, or
    name@version). With a `schedule` (cron, UTC) the tournament is a
    template with status "scheduled" and no matches: beat starts a run of it
    at every tick. Otherwise it is "running" with its plan: a round robin's
    every match (at most `max_matches`), a Swiss tournament's first round
    (of `rounds`, seated by `seeding`). Without a `seed` every match's seed
    is drawn secretly on its own (ladder.fairness); with one, the plan and
    every deal derive from it, so they are as public as the operator makes it.
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
    if format == TournamentFormat.SWISS and not 1 <= rounds <= MAX_ROUNDS:
        raise LeagueError(f"a Swiss tournament has 1..{MAX_ROUNDS} rounds, got {rounds}")
    if format == TournamentFormat.ROUND_ROBIN and rounds != 1:
        raise LeagueError("rounds are for a Swiss tournament: a round robin plays every match")
    if schedule is not None:
        cron(schedule)
    bot_ids = _resolve_entrants(store, entrants, game)
    chosen = seed is not None
    seed = draw_seed() if seed is None else seed
    tournament_id = "t" + uuid.uuid4().hex[:11]
    now = store.database_now()
    kind = "Swiss" if format == TournamentFormat.SWISS else "round robin"
    ensure_ladder(store, game, players)
    with store.session() as session:
        swiss = format == TournamentFormat.SWISS
        plan = (
            []
            if schedule
            else _first_round(session, game, players, bot_ids, seed, max_matches, format, seeding)
        )
        session.add(
            TournamentRow(
                id=tournament_id,
                name=name or f"{ladder_id(game, players)} {kind} {now:%Y-%m-%d %H:%M}",
                game=game,
                players=players,
                entrants=bot_ids,
                duplicate=duplicate,
                deadline_ms=deadline_ms,
                options={key: str(value) for key, value in (options or {}).items()},
                seed=seed,
                seed_chosen=chosen,
                status=TournamentStatus.SCHEDULED if schedule else TournamentStatus.RUNNING,
                format=format,
                rounds=rounds,
                round=1,
                seeding=seeding if swiss else None,
                schedule=" ".join(schedule.split()) if schedule else None,
                parent_id=None,
                table=None,
                created_at=now,
                started_at=None if schedule else now,
                finished_at=None,
            )
        )
        session.flush()
        add_plan(session, tournament_id, seed if chosen else None, plan)
    return tournament_id


def _first_round(
    session: Session,
    game: str,
    players: int,
    entrants: Sequence[str],
    seed: int,
    max_matches: int,
    format: str,
    seeding: str | None,
) -> list[tuple[str, ...]]:
    """The matches planned at a tournament's start: a round robin's every match, or a Swiss
    tournament's first round, seated by a seeded draw or by the ladder's ratings."""
    if format == TournamentFormat.ROUND_ROBIN:
        return plan_round_robin(entrants, players, seed, max_matches)
    ratings = dict.fromkeys(entrants, ELO_START)
    if seeding == Seeding.RATING:
        # The ladder's fit where there is one, else the live Elo; no rating: the start.
        for row in session.scalars(
            select(RatingRow).where(
                RatingRow.ladder_id == ladder_id(game, players), RatingRow.bot_id.in_(entrants)
            )
        ):
            ratings[row.bot_id] = row.rating if row.fit_rating is None else row.fit_rating
    rng = round_rng(seed, 1)
    return list(seat_round(standing_order(entrants, ratings, rng), players, {}, {}, rng).tables)


def add_plan(
    session: Session,
    tournament_id: str,
    chosen_seed: int | None,
    plan: Sequence[tuple[str, ...]],
    round_number: int = 1,
    first_number: int = 1,
) -> list[str]:
    """Add the planned matches of a round, numbered from `first_number`; their ids. Their
    seeds derive from `chosen_seed` (and the round), or are drawn secretly.

    Each drawn seed comes from `secrets` on its own: seeds derived from one
    stream (a Mersenne Twister) could be predicted from those published
    after the first matches end.
    """
    match_ids = []
    for number, seats in enumerate(plan, start=first_number):
        match_ids.append(f"{tournament_id}-m{number:04d}")
        session.add(
            TournamentMatchRow(
                match_id=match_ids[-1],
                tournament_id=tournament_id,
                number=number,
                round=round_number,
                bot_ids=list(seats),
                seed=(
                    draw_seed()
                    if chosen_seed is None
                    else derive_seed(chosen_seed, "seeds", round_number, number)
                ),
                status=PlanStatus.PLANNED,
            )
        )
    return match_ids


def start_scheduled_run(store: Store, template_id: str, now: datetime) -> str:
    """Start the run of a scheduled template for the minute of `now`; its id.

    Idempotent per template and minute: asking again for the same minute
    returns the same run and creates nothing. A template cancelled (or
    finished) by then starts nothing: LeagueError.
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
        seed = derive_seed(template.seed, f"{minute:%Y%m%d%H%M}") if chosen else draw_seed()
        plan = _first_round(
            session,
            template.game,
            template.players,
            template.entrants,
            seed,
            MAX_MATCHES,
            template.format,
            template.seeding,
        )
        started = store.database_now()
        template_fields = {
            "game": template.game,
            "players": template.players,
            "entrants": list(template.entrants),
            "duplicate": template.duplicate,
            "deadline_ms": template.deadline_ms,
            "options": dict(template.options),
            "format": template.format,
            "rounds": template.rounds,
            "seeding": template.seeding,
        }
        name = f"{template.name} {minute:%Y-%m-%d %H:%M}"
    try:
        with store.session() as session:
            # Fenced: the template's row lock, taken before the run is added. A cancel that
            # took it first leaves this UPDATE no row; one that comes after finds the run
            # started, and it goes on.
            scheduled = lock_rows(
                session,
                TournamentRow.status,
                TournamentRow.id == template_id,
                TournamentRow.status == TournamentStatus.SCHEDULED,
            )
            if not scheduled:
                ended = session.scalar(
                    select(TournamentRow.status).where(TournamentRow.id == template_id)
                )
                raise LeagueError(f"tournament {template_id} is {ended}: it starts no run")
            session.add(
                TournamentRow(
                    id=run_id,
                    name=name[:128],
                    seed=seed,
                    seed_chosen=chosen,
                    status=TournamentStatus.RUNNING,
                    round=1,
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
            add_plan(session, run_id, seed if chosen else None, plan)
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
                TournamentRow.status == TournamentStatus.SCHEDULED,
                TournamentRow.schedule.is_not(None),
            )
        ).all()
        for template in templates:
            created = template.created_at.replace(second=0, microsecond=0)
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
                    TournamentMatchRow.status != PlanStatus.RECORDED,
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


def cancel_tournament(store: Store, tournament_id: str) -> list[str]:
    """Cancel a running tournament or a scheduled template; the planned matches cancelled.

    A template starts no more runs (the runs already started go on, each can be
    cancelled by its id). A running tournament's matches that no referee has
    started are cancelled, and none will be; those started play on and are
    recorded, so nothing played is lost. NotFound, or LeagueError when it has
    ended already.
    """
    with store.session() as session:
        now = store.database_now(session)
        # Fenced: a worker finishing the tournament at the same moment either came first
        # (this matches no row) or finds it cancelled (its UPDATE matches none).
        cancelling = rows_changed(
            session,
            update(TournamentRow)
            .where(
                TournamentRow.id == tournament_id,
                TournamentRow.status.in_([TournamentStatus.RUNNING, TournamentStatus.SCHEDULED]),
            )
            .values(status=TournamentStatus.CANCELLED, finished_at=now)
            .execution_options(synchronize_session=False),
        )
        if not cancelling:
            ended = session.scalar(
                select(TournamentRow.status).where(TournamentRow.id == tournament_id)
            )
            if ended is None:
                raise NotFound(f"no tournament with id {tournament_id!r}")
            raise LeagueError(f"tournament {tournament_id} is {ended} already")
        # One statement, fenced with a referee storing a match (`Store.create_match` moves
        # its plan from planned to started): of the two, the first to take the plan's row
        # wins. The matches stored by now play on; the others are cancelled, and no referee
        # stores them any more. A match stored before plans were fenced (an older referee)
        # left its plan planned: it plays on too.
        cancelled = session.execute(
            update(TournamentMatchRow)
            .where(
                TournamentMatchRow.tournament_id == tournament_id,
                TournamentMatchRow.status == PlanStatus.PLANNED,
                ~exists().where(MatchRow.id == TournamentMatchRow.match_id),
            )
            .values(status=PlanStatus.CANCELLED)
            .returning(TournamentMatchRow.number, TournamentMatchRow.match_id)
            .execution_options(synchronize_session=False)
        ).all()
        return [match_id for _, match_id in sorted(cancelled)]


def is_cancelled(store: Store, match_id: str) -> bool:
    """Whether the match was planned by a tournament that cancelled it before it started."""
    with store.session() as session:
        planned = session.get(TournamentMatchRow, match_id)
        return planned is not None and planned.status == PlanStatus.CANCELLED


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
        # Fenced: a recording that came first (another delivery of its task) stands, and
        # so does a cancel.
        session.execute(
            update(TournamentMatchRow)
            .where(
                TournamentMatchRow.match_id == match_id,
                TournamentMatchRow.status.in_(OPEN),
            )
            .values(status=PlanStatus.FAILED)
            .execution_options(synchronize_session=False)
        )


def tournament_complete(store: Store, tournament_id: str) -> bool:
    """Whether every planned match of the tournament has been recorded, in its last round."""
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None or tournament.round < tournament.rounds:
            return False
        counts = dict(
            session.execute(
                select(TournamentMatchRow.status, func.count())
                .where(TournamentMatchRow.tournament_id == tournament_id)
                .group_by(TournamentMatchRow.status)
            ).all()
        )
    return bool(counts) and set(counts) == {PlanStatus.RECORDED}


def ready_to_finish(store: Store, tournament_id: str) -> bool:
    """Whether the tournament is running and every one of its matches is recorded."""
    with store.session() as session:
        tournament = session.get(TournamentRow, tournament_id)
        if tournament is None or tournament.status != TournamentStatus.RUNNING:
            return False
    return tournament_complete(store, tournament_id)


def due_round(tournament_id: str) -> ColumnElement[bool]:
    """The condition of a running Swiss tournament whose current round is all recorded and
    is not the last: its next round is due."""
    in_round = and_(
        TournamentMatchRow.tournament_id == TournamentRow.id,
        TournamentMatchRow.round == TournamentRow.round,
    )
    return and_(
        TournamentRow.id == tournament_id,
        TournamentRow.format == TournamentFormat.SWISS,
        TournamentRow.status == TournamentStatus.RUNNING,
        TournamentRow.round < TournamentRow.rounds,
        ~exists().where(in_round, TournamentMatchRow.status != PlanStatus.RECORDED),
    )


def round_due(store: Store, tournament_id: str) -> bool:
    """Whether the tournament is a running Swiss tournament whose current round is all
    recorded, with another round to come (`ladder.swiss_rounds.next_round` plans it)."""
    with store.session() as session:
        return session.scalar(select(TournamentRow.id).where(due_round(tournament_id))) is not None


def lost_matches(store: Store, planned_before: datetime) -> tuple[list[str], list[str]]:
    """Running tournaments' matches nobody plays or records, and the tournaments whose every
    planned match is recorded (complete, or a Swiss round recorded whose next is due).

    A match is lost when it is planned or started (not recorded, failed nor
    cancelled), its tournament was created before `planned_before`, and the
    referee is not playing it (never started, aborted, or finished but unrecorded).
    """
    lost: list[str] = []
    complete: list[str] = []
    with store.session() as session:
        running = list(
            session.scalars(
                select(TournamentRow.id).where(TournamentRow.status == TournamentStatus.RUNNING)
            )
        )
        for tournament_id in running:
            rows = session.execute(
                select(TournamentMatchRow.match_id, TournamentMatchRow.status, MatchRow.status)
                .outerjoin(MatchRow, MatchRow.id == TournamentMatchRow.match_id)
                .join(TournamentRow, TournamentRow.id == TournamentMatchRow.tournament_id)
                .where(
                    TournamentMatchRow.tournament_id == tournament_id,
                    TournamentRow.created_at < planned_before,
                )
                .order_by(TournamentMatchRow.number)
            ).all()
            if rows and all(planned == PlanStatus.RECORDED for _, planned, _ in rows):
                complete.append(tournament_id)
            lost += [
                match_id
                for match_id, planned, playing in rows
                if planned in OPEN and playing != MatchStatus.RUNNING
            ]
    return lost, complete
