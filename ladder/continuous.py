"""The continuous ladder: beat's ladder tick seats the bots free to play now at tables.

`plan_ladder_matches` reads what the matchmaking needs from the store and
lets `ladder.matchmaking.information_tables` choose the tables (seeds: the
overdue bots, then the least certain; each filled with bots near the seed's
rating; no table repeated while another is near; never two bots of one
author together). What it reads, per free bot of the ladder's game:

- rating and uncertainty: its line in the ladder's fit (`ratings.fit_rating`
  and `ratings.fit_se`, `ladder.standings_fit`). A bot with no fit yet (new,
  still in practice, or rated before the first refit) sits at the fit's
  centre, 1500 (the fit's ratings average 1500 by construction), with the
  prior's spread as its uncertainty (`ladders.field_sd`, or
  `ladder.ladder_fit.FIELD_SD` before the first fit): the largest there is,
  so it is seeded first. New bots thus sit together when several wait (all
  at 1500), and their practice matches (`ladder.recording`), which rate
  nobody, cost the rated bots few games.
- when it last played: when its newest result on this ladder was recorded,
  that is when its last match ended (None: never). The end, not the start:
  the tick sees only bots free now, and a bot in a match is not waiting; a
  match of a few minutes counted as waiting would widen every window to the
  whole field by the time the bot is free again.
- its author: the owner of its name (`bot_names`), so two bots of one
  author never share a table. Except the operator's author: the operator
  owns the house's reference bots and every bot registered without an
  author token (an arena that has no authors has only those); they are
  there to be measured against, the ladder is the operator's own, and
  keeping them apart would leave such a ladder with no table at all.
- the recent tables: the bot sets of the ladder's last `recent_matches`
  matches, which a draw passes over while another is near.

Challenges are left out of the last two: an author chooses their tables and
times, and they rate nobody. Tournament matches count: they are the
ladder's rated games too.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from ladder import matchmaking
from ladder.elo import ELO_START
from ladder.ladder_fit import FIELD_SD
from ladder.models import (
    OPERATOR_AUTHOR,
    BotNameRow,
    BotRow,
    LadderRow,
    MatchRow,
    RatingRow,
    ResultRow,
)
from ladder.names import name_key
from ladder.store import MatchRequest, NotFound, Store

__all__ = ["DEFAULT_CONFIG", "RECENT_MATCHES", "plan_ladder_matches"]

DEFAULT_CONFIG = matchmaking.MatchmakingConfig()
"""The matchmaking's windows, as `ladder.matchmaking` measured them on a simulated ladder."""

RECENT_MATCHES = 200
"""How many of the ladder's last matches are recent tables (the workers'
ARENA_LADDER_RECENT_MATCHES): a few games per bot of memory in a field of
a hundred, and one cheap read of the results."""


def plan_ladder_matches(
    store: Store,
    lid: str,
    candidates: Sequence[str],
    tick: str,
    *,
    duplicate: bool = True,
    deadline_ms: int = 0,
    config: matchmaking.MatchmakingConfig = DEFAULT_CONFIG,
    recent_matches: int = RECENT_MATCHES,
    now: datetime | None = None,
) -> list[MatchRequest]:
    """The next matches of ladder `lid` among `candidates` (bots free to play now).

    The tables are `information_tables`' (the module's docstring says what
    it is fed); bots that do not play the ladder's game, and retired bots,
    are left out. `now` is the database's clock unless given (a test's
    simulated day gives it).

    Ids are `L<tick>-<ladder>-<k>`, where `tick` names one tick (beat's task
    id), and the randomness is seeded from the ladder and `tick`, so a tick
    delivered twice asks for the same matches again (the referee plays each
    once; a match of the same id with other bots is refused). The requests
    carry no seed: the store draws a secret one when the match is first
    stored (pairings may be public, deals never).
    `deadline_ms` 0 is the referee's default. These matches belong to no
    tournament: recording them rates them on the ladder only.
    """
    rng = random.Random(f"{lid}:{tick}")
    at = store.database_now() if now is None else now
    with store.session() as session:
        ladder = session.get(LadderRow, lid)
        if ladder is None:
            raise NotFound(f"no ladder {lid!r}")
        wanted = list(dict.fromkeys(candidates))
        rows = session.scalars(select(BotRow).where(BotRow.id.in_(wanted))).all()
        eligible = sorted(
            (row for row in rows if ladder.game in row.games and row.retired_at is None),
            key=lambda row: row.id,
        )
        ids = [row.id for row in eligible]
        fits = _fits(session, lid, ids)
        last = _last_played(session, lid, ids)
        authors = _authors(session, eligible)
        recent = _recent_tables(session, lid, recent_matches)
        prior_sd = ladder.field_sd or FIELD_SD
        game, players = ladder.game, ladder.players
    seats = [
        matchmaking.Candidate(
            bot,
            *fits.get(bot, (ELO_START, prior_sd)),
            last_played=None if bot not in last else last[bot].timestamp(),
            author=authors.get(bot),
        )
        for bot in ids
    ]
    tables = matchmaking.information_tables(seats, players, recent, at.timestamp(), rng, config)
    return [
        MatchRequest(
            id=f"L{tick}-{lid}-{number}",
            game=game,
            players=players,
            bot_ids=table,
            seed=None,
            options={},
            duplicate=duplicate,
            deadline_ms=deadline_ms,
        )
        for number, table in enumerate(tables)
    ]


def _fits(session: Session, lid: str, bots: list[str]) -> dict[str, tuple[float, float]]:
    """Each fitted bot's rating and standard error in the ladder's fit."""
    rows = session.execute(
        select(RatingRow.bot_id, RatingRow.fit_rating, RatingRow.fit_se).where(
            RatingRow.ladder_id == lid,
            RatingRow.bot_id.in_(bots),
        )
    ).all()
    return {bot: (rating, se) for bot, rating, se in rows if rating is not None and se is not None}


def _ladder_results(lid: str) -> tuple[ColumnElement[bool], ...]:
    """The conditions of a result of the ladder's own (no challenge)."""
    return (ResultRow.ladder_id == lid, MatchRow.challenger_id.is_(None))


def _last_played(session: Session, lid: str, bots: list[str]) -> dict[str, datetime]:
    """When each bot's newest result on the ladder was recorded (bots that never played: none)."""
    rows = session.execute(
        select(ResultRow.bot_id, func.max(ResultRow.recorded_at))
        .join(MatchRow, MatchRow.id == ResultRow.match_id)
        .where(*_ladder_results(lid), ResultRow.bot_id.in_(bots))
        .group_by(ResultRow.bot_id)
    ).all()
    return {bot: at for bot, at in rows}


def _authors(session: Session, bots: Sequence[BotRow]) -> dict[str, str]:
    """Each bot's author, by its name's owner (the operator's bots: none, as the module says)."""
    keys = {bot.id: name_key(bot.name) for bot in bots}
    owners = dict(
        session.execute(
            select(BotNameRow.name_key, BotNameRow.author_id).where(
                BotNameRow.name_key.in_(set(keys.values()))
            )
        ).all()
    )
    return {
        bot: owners[key]
        for bot, key in keys.items()
        if key in owners and owners[key] != OPERATOR_AUTHOR
    }


def _recent_tables(session: Session, lid: str, count: int) -> set[frozenset[str]]:
    """The bot sets of the ladder's last `count` recorded matches."""
    # Entry 0 stands for its match: every result of a match is recorded at one moment.
    last = (
        select(ResultRow.match_id)
        .join(MatchRow, MatchRow.id == ResultRow.match_id)
        .where(*_ladder_results(lid), ResultRow.entry == 0)
        .order_by(ResultRow.recorded_at.desc(), ResultRow.match_id)
        .limit(count)
    )
    seated: defaultdict[str, set[str]] = defaultdict(set)
    for match_id, bot in session.execute(
        select(ResultRow.match_id, ResultRow.bot_id).where(ResultRow.match_id.in_(last))
    ):
        seated[match_id].add(bot)
    return {frozenset(bots) for bots in seated.values()}
