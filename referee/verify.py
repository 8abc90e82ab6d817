"""Checking a finished match from what was published (`arena match verify`).

Pure: the caller fetches the match, from the referee or from the web, into a
`Published`. `verify` checks the revealed seed against the commitment every
seat received, replays every game with the engines from that seed and the
recorded actions, and recomputes the match result the way the referee does.
The first thing that disagrees is raised as a `Mismatch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import games
from ladder.fairness import commitment, parse_seed
from ladder.records import MatchRequest, MatchStatus
from referee.runner import GameOutcome, aggregate, rotation


class Mismatch(Exception):
    """The published match disagrees with itself; the message names the first difference."""


@dataclass(frozen=True)
class PublishedGame:
    """One game of a published match: its result and the engine's log."""

    seats: tuple[str, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    rounds: int
    seed: str
    log: dict[str, Any]


@dataclass(frozen=True)
class Published:
    """A match as the referee or the web publishes it once it is over."""

    match_id: str
    game: str
    status: str
    bot_ids: tuple[str, ...]
    seed: str
    seed_commitment: str
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    forfeits: tuple[str, ...]
    games: tuple[PublishedGame, ...]


def verify(match: Published) -> str:
    """The verdict line for a match that checks out; raises Mismatch otherwise."""
    if match.status != MatchStatus.FINISHED:
        raise Mismatch(
            f"match {match.match_id} is {match.status}: its seed is published only once it has finished"
        )
    try:
        seed = parse_seed(match.seed)
    except ValueError as error:
        raise Mismatch(f"the published seed is not a seed: {error}") from None
    if commitment(seed) != match.seed_commitment:
        raise Mismatch(
            f"sha256 of the seed {match.seed} is {commitment(seed)}, "
            f"but the commitment given at the start was {match.seed_commitment!r}"
        )
    players = len(match.bot_ids)
    duplicate = len(match.games) > 1
    expected_games = players if duplicate else 1
    if len(match.games) != expected_games:
        raise Mismatch(
            f"a {players}-player match has 1 game or, duplicate, {players}; "
            f"this one has {len(match.games)}"
        )
    outcomes = [_replay(match, seed, index, game) for index, game in enumerate(match.games)]
    request = MatchRequest(
        id=match.match_id,
        game=match.game,
        players=players,
        bot_ids=match.bot_ids,
        seed=seed,
        options={},
        duplicate=duplicate,
        deadline_ms=0,
    )
    expected = aggregate(request, outcomes, match.forfeits)
    _same("the match's scores", expected.scores, match.scores)
    _same("the match's ranks", expected.ranks, match.ranks)
    moves = sum(len(game.log["moves"]) for game in match.games)
    return (
        f"match {match.match_id} verified: sha256 of seed {seed} is the commitment "
        f"{match.seed_commitment[:16]}..., and {len(match.games)} game(s) replayed from it "
        f"with the {moves} recorded moves give the published scores and ranks"
    )


def _replay(match: Published, seed: int, index: int, game: PublishedGame) -> GameOutcome:
    """Replay one game from the revealed seed; its outcome, checked against what was published."""
    where = f"game {index}"
    log = game.log
    if game.seed != match.seed:
        raise Mismatch(f"{where}: its result names seed {game.seed}, the match's is {match.seed}")
    for key, want in (("game", match.game), ("players", len(match.bot_ids)), ("deal", None)):
        if log.get(key) != want:
            raise Mismatch(f"{where}: its log has {key} {log.get(key)!r}, expected {want!r}")
    if str(log.get("seed")) != match.seed:
        raise Mismatch(f"{where}: its log was played from seed {log.get('seed')}, not {match.seed}")
    seats = rotation(match.bot_ids, index)
    _same(f"{where}'s seats", seats, game.seats)
    try:
        state = games.replay(cast(games.GameLog, {**log, "seed": seed}))
    except (games.IllegalAction, ValueError, KeyError, TypeError) as error:
        raise Mismatch(
            f"{where}: the recorded moves do not replay from the seed: {error}"
        ) from None
    if not state.is_over():
        raise Mismatch(f"{where}: the recorded moves stop before the game is over")
    result = state.result()
    _same(f"{where}'s scores (replayed, published)", result.scores, game.scores)
    _same(f"{where}'s ranks (replayed, published)", result.ranks, game.ranks)
    _same(f"{where}'s rounds (replayed, published)", (state.round,), (game.rounds,))
    return GameOutcome(seats, result, state.round, state.log())


def _same(what: str, expected: Sequence[object], published: Sequence[object]) -> None:
    if list(expected) != list(published):
        raise Mismatch(
            f"{what} differ: replaying gives {list(expected)}, published {list(published)}"
        )
