"""The data behind every page and API route, as the models of `ladder.web.schemas`.

Each function reads the store through `ladder.queries` (plus a few small
lookups of its own) and raises `WebError` with a clear message for ids that
do not exist, so the routes only choose between HTML and JSON.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

from sqlalchemy import func, select

import games
from ladder import author_queries, queries, swiss_rounds
from ladder.elo import uncertain
from ladder.models import BotRow, MatchRow, RatingHistoryRow, RatingRow, ResultRow
from ladder.records import MatchResult, MatchStatus, TournamentFormat, TournamentStatus
from ladder.store import NotFound, Replay, Store
from ladder.web.replay import build_frames
from ladder.web.schemas import (
    BotOut,
    BotPageOut,
    BotRatingOut,
    BotRefOut,
    EntryOut,
    FramesOut,
    GameLogOut,
    GameResultOut,
    HistoryPointOut,
    LadderOut,
    LaddersOut,
    LogsOut,
    MatchLineOut,
    MatchOut,
    PlannedMatchOut,
    PracticeOut,
    RoundOut,
    StandingOut,
    StandingSoFarOut,
    TableLineOut,
    TournamentOut,
    TournamentPageOut,
    TournamentsOut,
)
from ladder.wording import bot_label, rating_cells

K = TypeVar("K")
V = TypeVar("V")


class RecentCache(Generic[K, V]):
    """The values of the last `size` keys put, the least recently used dropped first."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class WebError(Exception):
    """A request the web cannot answer: an HTTP status and a message for people."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


MAX_ID = 200
"""Longer ids than this name nothing (no id the arena makes comes close)."""


def checked_id(kind: str, value: str) -> str:
    """`value` if it can name a `kind`; else a 404 (NUL bytes and huge ids never reach SQL)."""
    if len(value) > MAX_ID or "\x00" in value:
        raise WebError(404, f"no {kind} with id {value[:40]!r}{'...' if len(value) > 40 else ''}")
    return value


def label(bot: BotRefOut) -> str:
    """How a bot is named on pages: `name`, or `name@version` unless the version is 1."""
    return bot_label(bot.name, bot.version)


def split_ladder(ladder_id: str) -> tuple[str, int]:
    """`goodge-4p` -> ("goodge", 4)."""
    game, _, players = ladder_id.rpartition("-")
    try:
        return game, int(players.removesuffix("p"))
    except ValueError:
        return ladder_id, 0


def game_title(game: str) -> str:
    """The full name of a game, e.g. `The Goodge Rules`."""
    try:
        return games.get(game).title
    except ValueError:
        return game


def bot_refs(store: Store, ids: Iterable[str]) -> dict[str, BotRefOut]:
    """The bots with these ids; unknown ids get a stand-in named by the id."""
    wanted = set(ids)
    refs = {bot_id: BotRefOut(id=bot_id, name=bot_id, version="") for bot_id in wanted}
    if wanted:
        with store.session() as session:
            for row in session.scalars(select(BotRow).where(BotRow.id.in_(wanted))):
                refs[row.id] = BotRefOut(id=row.id, name=row.name, version=row.version)
    return refs


# Ladders ---------------------------------------------------------------------------


def _standing(line: queries.Standing) -> StandingOut:
    return StandingOut(
        rank=line.rank,
        bot_id=line.bot_id,
        bot=line.bot,
        version=line.version,
        rating=line.rating,
        se=line.se,
        elo=line.elo,
        games=line.games,
        provisional=line.provisional,
        online=line.online,
    )


def ladder(store: Store, ladder_id: str) -> LadderOut:
    """One ladder's standings; 404 for a ladder nobody has played on."""
    checked_id("ladder", ladder_id)
    if ladder_id not in queries.ladders(store):
        raise WebError(404, f"no ladder {ladder_id!r} (ladders are named like goodge-4p)")
    game, players = split_ladder(ladder_id)
    return LadderOut(
        id=ladder_id,
        game=game,
        players=players,
        standings=[_standing(line) for line in queries.standings(store, ladder_id)],
        practice=[
            PracticeOut(
                bot_id=line.bot_id,
                bot=line.bot,
                practice_matches=line.played,
                online=line.online,
            )
            for line in queries.in_practice(store, ladder_id)
        ],
    )


def ladders(store: Store) -> LaddersOut:
    """Every ladder with its standings."""
    return LaddersOut(
        ladders=[ladder(store, ladder_id) for ladder_id in queries.ladders(store)],
        provisional_se=queries.PROVISIONAL_SE,
    )


# Bots ------------------------------------------------------------------------------


def bot_page(store: Store, ref: str) -> BotPageOut:
    """A bot (by id, name or name@version): author, ratings, history and recent matches."""
    checked_id("bot", ref)
    try:
        found = queries.resolve_bot(store, ref)
    except queries.UnknownBot as error:
        raise WebError(404, str(error)) from None
    bot = queries.bot_line(store, found.id)
    history = queries.bot_history(store, bot.id)
    with store.session() as session:
        forfeits = session.scalar(
            select(func.count()).where(ResultRow.bot_id == bot.id, ResultRow.forfeit)
        )
        # Summed in SQL: a long-lived bot has thousands of results, each with its games.
        strikes = session.scalar(
            select(func.sum(MatchRow.result[("strikes", bot.id)].as_integer())).where(
                MatchRow.id.in_(select(ResultRow.match_id).where(ResultRow.bot_id == bot.id))
            )
        )
    return BotPageOut(
        bot=bot_out(bot),
        author=author_queries.author_of(store, bot.name),
        ratings=bot_ratings(store, [bot.id])[bot.id],
        history=[
            HistoryPointOut(
                ladder_id=p.ladder_id, match_id=p.match_id, rating=p.rating, games=p.games, at=p.at
            )
            for p in history
        ],
        matches=match_lines(store, [bot.id]),
        strikes=strikes or 0,
        forfeits=forfeits or 0,
        provisional_se=queries.PROVISIONAL_SE,
    )


def bot_out(bot: queries.BotLine) -> BotOut:
    """A bot version as the API shows it."""
    return BotOut(
        id=bot.id,
        name=bot.name,
        version=bot.version,
        games=list(bot.games),
        online=bot.online,
        last_seen_at=bot.last_seen_at,
        retired=bot.retired,
    )


def bot_ratings(store: Store, bot_ids: list[str]) -> dict[str, list[BotRatingOut]]:
    """Each bot's ratings by ladder (`queries.shown_rating`, and the live Elo), with its rank
    and its live Elo before its first recorded match there (challenges leave both alone:
    they write no rating)."""
    with store.session() as session:
        first = {
            (bot_id, ladder_id): before
            for bot_id, ladder_id, before in session.execute(
                select(
                    RatingHistoryRow.bot_id,
                    RatingHistoryRow.ladder_id,
                    RatingHistoryRow.rating_before,
                ).where(
                    RatingHistoryRow.id.in_(
                        select(func.min(RatingHistoryRow.id))
                        .where(RatingHistoryRow.bot_id.in_(bot_ids))
                        .group_by(RatingHistoryRow.bot_id, RatingHistoryRow.ladder_id)
                    )
                )
            ).all()
        }
        live = session.scalars(
            select(RatingRow)
            .where(RatingRow.bot_id.in_(bot_ids))
            .order_by(RatingRow.bot_id, RatingRow.ladder_id)
        ).all()
    # A retired bot keeps its ratings but has no rank: the standings leave it out.
    ranks = {
        (line.bot_id, ladder_id): line.rank
        for ladder_id in {rating.ladder_id for rating in live}
        for line in queries.standings(store, ladder_id)
    }
    ratings: dict[str, list[BotRatingOut]] = {bot_id: [] for bot_id in bot_ids}
    for rating in live:
        key = (rating.bot_id, rating.ladder_id)
        shown, se = queries.shown_rating(rating)
        ratings[rating.bot_id].append(
            BotRatingOut(
                ladder_id=rating.ladder_id,
                rank=ranks.get(key),
                rating=shown,
                se=se,
                elo=rating.rating,
                games=rating.games,
                provisional=uncertain(se),
                start_rating=first.get(key),
            )
        )
    return ratings


def match_lines(
    store: Store, bot_ids: list[str] | None = None, limit: int = 20
) -> list[MatchLineOut]:
    """Recorded matches, newest first (only those one of `bot_ids` played, if given)."""
    lines = queries.matches_of(store, bot_ids, limit)
    refs = bot_refs(store, (b for line in lines for b in line.bots))
    results = _results(store, [line.match_id for line in lines])
    challengers = author_queries.author_names(store, (line.challenger_id for line in lines))
    return [
        MatchLineOut(
            match_id=line.match_id,
            ladder_id=line.ladder_id,
            tournament_id=line.tournament_id,
            bots=[refs[b] for b in line.bots],
            scores=line.scores,
            ranks=line.ranks,
            strikes=[int(results[line.match_id].strikes.get(b, 0)) for b in line.bots],
            forfeits=[b in results[line.match_id].forfeits for b in line.bots],
            recorded_at=line.recorded_at,
            rated=line.challenger_id is None,
            challenge=line.challenger_id is not None,
            challenger=_challenger(line.challenger_id, challengers),
        )
        for line in lines
    ]


def _challenger(challenger_id: str | None, names: dict[str, str]) -> str | None:
    """The name of the author who asked for a challenge; None for a rated match."""
    if challenger_id is None:
        return None
    return names.get(challenger_id, challenger_id)  # its id, were its row ever missing


def _results(store: Store, match_ids: list[str]) -> dict[str, MatchResult]:
    """The stored results of these matches (recorded ones: each has a result)."""
    with store.session() as session:
        rows = session.execute(
            select(MatchRow.id, MatchRow.result).where(MatchRow.id.in_(match_ids))
        ).all()
    return {match_id: MatchResult.from_json(result) for match_id, result in rows}


# Tournaments -------------------------------------------------------------------------


def _tournament(view: queries.TournamentView) -> TournamentOut:
    return TournamentOut(
        id=view.id,
        name=view.name,
        game=view.game,
        players=view.players,
        ladder_id=queries.ladder_id(view.game, view.players),
        status=view.status,
        schedule=view.schedule,
        matches_total=view.matches_total,
        matches_in_all=view.matches_in_all,
        matches_finished=view.matches_finished,
        table=[_table_line(line) for line in view.table],
        created_at=view.created_at,
        finished_at=view.finished_at,
        entrants=view.entrants,
        duplicate=view.duplicate,
        deadline_ms=view.deadline_ms,
        options=view.options,
        parent_id=view.parent_id,
        matches_failed=view.matches_failed,
        format=view.format,
        rounds=view.rounds,
        round=view.round,
        first_round=view.seeding,
    )


def _table_line(line: queries.TableLine) -> TableLineOut:
    rating, interval = rating_cells(line.rating, line.ci_low, line.ci_high, line.bound, line.reason)
    return TableLineOut(
        bot_id=line.bot_id,
        bot=line.bot,
        rating=line.rating,
        ci_low=line.ci_low,
        ci_high=line.ci_high,
        games=line.games,
        measured=line.measured,
        bound=line.bound,
        reason=line.reason,
        rating_text=rating,
        interval_text=interval,
    )


def tournaments(store: Store) -> TournamentsOut:
    """Tournaments, newest first."""
    return TournamentsOut(tournaments=[_tournament(v) for v in queries.tournaments(store)])


class StandingCache(RecentCache[tuple[str, int], list[swiss_rounds.StandingLine]]):
    """Running Swiss tournaments' standings so far, by tournament and matches recorded.

    Each is a Plackett-Luce fit of every game recorded so far, and an open page asks for
    it at every poll; it changes only when a match is recorded, which the key counts.
    """


def tournament(store: Store, tournament_id: str, fits: StandingCache) -> TournamentPageOut:
    """One tournament with its planned matches; 404 if unknown."""
    checked_id("tournament", tournament_id)
    try:
        view = queries.tournament(store, tournament_id)
        planned = queries.tournament_matches(store, tournament_id)
        swiss = view.format == TournamentFormat.SWISS
        standings: list[swiss_rounds.StandingLine] = []
        if swiss and view.status == TournamentStatus.RUNNING:
            key = (tournament_id, view.matches_finished)
            cached = fits.get(key)
            if cached is None:
                cached = swiss_rounds.standings(store, tournament_id)
                fits.put(key, cached)
            standings = cached
    except NotFound as error:
        raise WebError(404, str(error)) from None
    with store.session() as session:
        started = dict(
            session.execute(
                select(MatchRow.id, MatchRow.status).where(
                    MatchRow.id.in_([match.match_id for match in planned])
                )
            ).all()
        )
    return TournamentPageOut(
        **_tournament(view).model_dump(),
        matches=[
            PlannedMatchOut(
                match_id=match.match_id,
                number=match.number,
                bots=match.bots,
                status=match.status,
                round=match.round,
                match_status=started.get(match.match_id),
            )
            for match in planned
        ],
        rounds_seated=[
            RoundOut(number=seated.number, byes=seated.byes)
            for seated in (swiss_rounds.rounds(view, planned) if swiss else [])
        ],
        standings=[
            StandingSoFarOut(
                bot_id=line.bot_id, bot=line.bot, rating=line.rating, se=line.se, games=line.games
            )
            for line in standings
        ],
    )


# Matches -------------------------------------------------------------------------------


def match(store: Store, match_id: str) -> MatchOut:
    """A match with its result (once finished); 404 if unknown."""
    checked_id("match", match_id)
    try:
        found = store.match(match_id)
    except NotFound as error:
        raise WebError(404, str(error)) from None
    request = found.request
    refs = bot_refs(store, request.bot_ids)
    finished = found.status == MatchStatus.FINISHED
    # Nothing of a result is shown before the match has finished: forfeit
    # reasons may quote a bot's action, and so a card still hidden in play.
    result = found.result if finished else None
    forfeits = set(result.forfeits) if result else set()
    reasons = result.forfeit_reasons if result else {}
    strikes = result.strikes if result else {}
    entries = [
        EntryOut(
            bot=refs[bot_id],
            score=result.scores[entry] if result else None,
            rank=result.ranks[entry] if result else None,
            forfeit=bot_id in forfeits,
            forfeit_reason=reasons.get(bot_id),
            strikes=int(strikes.get(bot_id, 0)),
        )
        for entry, bot_id in enumerate(request.bot_ids)
    ]
    played = [
        GameResultOut(
            index=index,
            seed=str(one.seed),
            seats=list(one.seats),
            scores=list(one.scores),
            ranks=list(one.ranks),
            rounds=one.rounds,
        )
        for index, one in enumerate(result.games if result else ())
    ]
    challengers = author_queries.author_names(store, [request.challenger])
    return MatchOut(
        match_id=request.id,
        game=request.game,
        players=request.players,
        ladder_id=queries.ladder_id(request.game, request.players),
        status=found.status,
        reason=found.reason,
        duplicate=request.duplicate,
        # Before the end the seed would let anyone rebuild every hidden hand; an aborted
        # attempt's is not shown either (only a finished deal's, the one its result is of).
        seed=str(found.seed) if finished else None,
        seed_commitment=found.seed_commitment,
        entries=entries,
        games=played,
        replay_available=result is not None,
        rated=request.challenger is None,
        challenge=request.challenger is not None,
        challenger=_challenger(request.challenger, challengers),
    )


def _finished_replays(store: Store, match_id: str) -> list[Replay]:
    """The stored replays of a finished match.

    404 for an unknown match or one without replays; 409 while the match is
    not finished, so that no card still hidden in play is ever shown.
    """
    checked_id("match", match_id)
    try:
        found = store.match(match_id)
    except NotFound as error:
        raise WebError(404, str(error)) from None
    if found.status != MatchStatus.FINISHED:
        why = f" ({found.reason})" if found.reason else ""
        raise WebError(
            409,
            f"match {match_id!r} is {found.status}{why}: its replay and logs are shown only once "
            "it has finished, so that no hidden card is revealed while it is played",
        )
    replays = store.replays(match_id)
    if not replays:
        raise WebError(404, f"match {match_id!r} has no stored replay")
    return replays


def logs(store: Store, match_id: str) -> LogsOut:
    """The engine log of every game of a finished match (404, 409 as for its frames)."""
    return LogsOut(
        match_id=match_id,
        games=[
            GameLogOut(game_index=replay.game_index, seats=list(replay.seats), log=replay.log)
            for replay in _finished_replays(store, match_id)
        ],
    )


class FrameCache(RecentCache[tuple[str, int], FramesOut]):
    """The frames of recently viewed games (finished matches never change)."""


def frames(store: Store, match_id: str, game_index: int, cache: FrameCache) -> FramesOut:
    """The replay frames of one game of a finished match; 404 also for an unknown game."""
    cached = cache.get((match_id, game_index))
    if cached is not None:  # only finished matches are cached, and they never change
        return cached
    replays = _finished_replays(store, match_id)
    by_index = {replay.game_index: replay for replay in replays}
    if game_index not in by_index:
        raise WebError(
            404,
            f"match {match_id!r} has no game {game_index}; its games are "
            + ", ".join(str(i) for i in sorted(by_index)),
        )
    replay = by_index[game_index]
    refs = bot_refs(store, replay.seats)
    seats = [refs[bot_id] for bot_id in replay.seats]
    try:
        built, sampled = build_frames(replay.log, seats)
    except (KeyError, TypeError, ValueError) as error:
        raise WebError(
            500, f"the stored replay of match {match_id!r} does not replay: {error}"
        ) from error
    out = FramesOut(
        match_id=match_id,
        game=str(replay.log["game"]),
        game_index=game_index,
        games=len(replays),
        players=len(seats),
        seats=seats,
        moves=len(replay.log["moves"]),
        sampled=sampled,
        frames=built,
    )
    cache.put((match_id, game_index), out)
    return out
