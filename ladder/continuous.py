"""The continuous ladder: beat's ladder tick pairs the bots free to play now into matches."""

from __future__ import annotations

import random
from collections.abc import Sequence

from sqlalchemy import select

from ladder import matchmaking
from ladder.models import BotRow, LadderRow, RatingRow
from ladder.store import MatchRequest, NotFound, Store


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

    Retired bots are left out, whether connected or not.

    Fair: the bots that play the ladder's game are ordered by rated games on
    this ladder, fewest first (ties broken by a seed from the ladder and
    `tick`), and taken `players` at a time into disjoint matches, each
    seated in a seeded random order (`ladder.matchmaking.fewest_games_tables`).
    Ids are `L<tick>-<ladder>-<k>`, where `tick` names one tick (beat's task
    id), so a tick delivered twice asks for the same matches again (the
    referee plays each once). The requests
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
        eligible = sorted(
            row.id for row in rows if ladder.game in row.games and row.retired_at is None
        )
        played = dict(
            session.execute(
                select(RatingRow.bot_id, RatingRow.games).where(
                    RatingRow.ladder_id == lid, RatingRow.bot_id.in_(eligible)
                )
            ).all()
        )
        game, players = ladder.game, ladder.players
    tables = matchmaking.fewest_games_tables(eligible, played, players, rng)
    requests = []
    for number, group in enumerate(tables):
        requests.append(
            MatchRequest(
                id=f"L{tick}-{lid}-{number}",
                game=game,
                players=players,
                bot_ids=group,
                seed=None,
                options={},
                duplicate=duplicate,
                deadline_ms=deadline_ms,
            )
        )
    return requests
