"""Referee messages to bots (Act requests and notices), match results, events,
replays and matches as messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, assert_never

from google.protobuf.message import Message

from cardarena_api.v1 import arena_pb2 as pb
from ladder.json_text import json_text
from ladder.records import (
    EventType,
    Forfeit,
    GameEnd,
    GameStart,
    Match,
    MatchEnd,
    MatchResult,
    MatchStatus,
    Notice,
    Replay,
    Strike,
)
from referee.channels import ActRequest
from referee.public import VIEW
from referee.seat_view import SEAT_VIEW
from referee.sessions import Outgoing, Problem, Reconnect, Replicas
from referee.wire_actions import option_message
from referee.wire_observations import (
    _legal_entry,
    length_delimited,
    observation_bytes,
    observation_message,
)


def referee_message(
    message: Outgoing, with_json: bool = False, now: float = 0.0
) -> pb.RefereeMessage:
    """The wire form of what a session sends at `now` (Unix seconds): an Act carries what
    is left of its clock then, and its observation's JSON too if `with_json`."""
    if isinstance(message, Problem):
        return pb.RefereeMessage(
            error=pb.Error(message=message.message, request_id=message.request_id)
        )
    if isinstance(message, Reconnect):
        return pb.RefereeMessage(reconnect=pb.Reconnect(reason=message.reason))
    if isinstance(message, Replicas):
        return pb.RefereeMessage(replicas=pb.Replicas(names=message.names))
    if isinstance(message, ActRequest):
        return pb.RefereeMessage.FromString(_act_bytes(message, with_json, now))
    return _notice_message(message)


_ACT = pb.RefereeMessage.DESCRIPTOR.fields_by_name["act"].number
_ACT_OBSERVATION = pb.Act.DESCRIPTOR.fields_by_name["observation"].number


def referee_bytes(message: Outgoing, with_json: bool = False, now: float = 0.0) -> bytes:
    """What a session writes at `now`: `referee_message`, encoded.

    An Act, the message of every move, is joined from encoded pieces (its scalar fields,
    the observation, the legal entries encoded once each) and never built as a message:
    building it meant parsing the pieces into it for gRPC to serialize it again, 6 µs a
    move measured alone and about 7% of the referee's CPU a move under `bench.referee`
    (docs/performance.md). The server writes these bytes as they are
    (`referee.encoded_replies`).
    """
    if isinstance(message, ActRequest):
        return _act_bytes(message, with_json, now)
    return referee_message(message, with_json, now).SerializeToString()


def _act_bytes(request: ActRequest, with_json: bool, now: float) -> bytes:
    deadline_ms, time_bank_ms = request.clock_left(now)
    scalars = pb.Act(
        request_id=request.request_id,
        match_id=request.match_id,
        game_index=request.game_index,
        game=request.game,
        seat=request.seat,
        deadline_ms=deadline_ms,
        time_bank_ms=time_bank_ms,
        sent_at_ms=round(now * 1000),
    )
    act = b"".join(
        [
            scalars.SerializeToString(),
            length_delimited(_ACT_OBSERVATION, observation_bytes(request.observation, with_json)),
            *[_legal_entry(request.game, text, request.seat) for text in request.legal],
        ]
    )
    return length_delimited(_ACT, act)


def _notice_message(notice: Notice) -> pb.RefereeMessage:
    if isinstance(notice, GameStart):
        return pb.RefereeMessage(
            game_start=pb.GameStart(
                match_id=notice.match_id,
                game_index=notice.game_index,
                game=notice.game,
                seat=notice.seat,
                seats=notice.seats,
                options={key: json.dumps(value) for key, value in notice.options.items()},
                seed_commitment=notice.seed_commitment,
                option_values={key: option_message(value) for key, value in notice.options.items()},
            )
        )
    if isinstance(notice, GameEnd):
        return pb.RefereeMessage(
            game_end=pb.GameEnd(
                match_id=notice.match_id,
                game_index=notice.game_index,
                seat=notice.seat,
                scores=notice.scores,
                ranks=notice.ranks,
                rounds=notice.rounds,
            )
        )
    if isinstance(notice, MatchEnd):
        return pb.RefereeMessage(
            match_end=pb.MatchEnd(match_id=notice.match_id, result=result_message(notice.result))
        )
    if isinstance(notice, Strike):
        return pb.RefereeMessage(
            strike=pb.Strike(
                match_id=notice.match_id,
                game_index=notice.game_index,
                seat=notice.seat,
                reason=notice.reason,
                strikes=notice.strikes,
                max_strikes=notice.max_strikes,
            )
        )
    if isinstance(notice, Forfeit):
        return pb.RefereeMessage(forfeit=pb.Forfeit(match_id=notice.match_id, reason=notice.reason))
    assert_never(notice)


def result_message(result: MatchResult) -> pb.MatchResult:
    """A match result as a message (its `json` field the whole result, as stored)."""
    return pb.MatchResult(
        entries=entry_results(result),
        scores=result.scores,
        ranks=result.ranks,
        forfeits=result.forfeits,
        games=[
            pb.GameResult(
                seed=_int64_or_zero(game.seed),
                seed_decimal=str(game.seed),
                seats=game.seats,
                scores=game.scores,
                ranks=game.ranks,
                rounds=game.rounds,
            )
            for game in result.games
        ],
        json=json.dumps(result.to_json()),
    )


def entry_results(result: MatchResult) -> list[pb.EntryResult]:
    """One EntryResult per entry of the match's bots, in order (a bot entered twice has two).

    Strikes and forfeits are the bot's, so the entries of one bot share them.
    """
    entries = []
    for bot, score, rank in zip(result.bots, result.scores, result.ranks, strict=True):
        forfeited = bot in result.forfeits
        entries.append(
            pb.EntryResult(
                bot_id=bot,
                score=score,
                rank=rank,
                strikes=result.strikes.get(bot, 0),
                forfeited=forfeited,
                forfeit_reason=result.forfeit_reasons.get(bot, "") if forfeited else "",
            )
        )
    return entries


# Events


def _game_start_event(event: Mapping[str, Any]) -> pb.GameStartEvent:
    return pb.GameStartEvent(
        game_index=event["game_index"],
        seats=event["seats"],
        seed_commitment=event["seed_commitment"],
    )


def _action_event(event: Mapping[str, Any]) -> pb.ActionEvent:
    return pb.ActionEvent(
        game_index=event["game_index"],
        seat=event["seat"],
        action=event["action"],
        ms=event["ms"],  # None leaves it unset: a stand-in played
    )


def _tick_event(event: Mapping[str, Any]) -> pb.TickEvent:
    return pb.TickEvent(
        game_index=event["game_index"],
        moves=[
            pb.TickMove(seat=seat, action=action, took_effect=took, ms=ms)
            for seat, action, took, ms in event["moves"]
        ],
    )


def _strike_event(event: Mapping[str, Any]) -> pb.StrikeEvent:
    return pb.StrikeEvent(
        game_index=event["game_index"],
        seat=event["seat"],
        bot=event["bot"],
        reason=event.get("reason", ""),  # none in a public stream
        strikes=event["strikes"],
    )


def _forfeit_event(event: Mapping[str, Any]) -> pb.ForfeitEvent:
    return pb.ForfeitEvent(
        game_index=event["game_index"],
        seat=event["seat"],
        bot=event["bot"],
        reason=event.get("reason", ""),  # none in a public stream
    )


def _game_end_event(event: Mapping[str, Any]) -> pb.GameEndEvent:
    return pb.GameEndEvent(
        game_index=event["game_index"], scores=event["scores"], ranks=event["ranks"]
    )


def _match_end_event(event: Mapping[str, Any]) -> pb.MatchEndEvent:
    return pb.MatchEndEvent(result=result_message(MatchResult.from_json(event["result"])))


def _match_aborted_event(event: Mapping[str, Any]) -> pb.MatchAbortedEvent:
    return pb.MatchAbortedEvent(reason=event["reason"])


def _view_event(event: Mapping[str, Any]) -> pb.PublicViewEvent:
    # The typed observation reads a seat, a hand and the Stash: nobody's, none, unknown.
    nobodys = {"seat": -1, "hand": [], "stash": None, **event["view"]}
    return pb.PublicViewEvent(
        game_index=event["game_index"],
        step=event["step"],
        observation=observation_message(nobodys),
    )


def _seat_view_event(event: Mapping[str, Any]) -> pb.SeatViewEvent:
    # The seat's own observation, typed as an Act to that seat carries it.
    return pb.SeatViewEvent(
        game_index=event["game_index"],
        step=event["step"],
        seat=event["seat"],
        bot=event["bot"],
        observation=observation_message(event["view"]),
    )


_EVENTS: dict[str, Callable[[Mapping[str, Any]], Message]] = {
    EventType.GAME_START: _game_start_event,
    EventType.ACTION: _action_event,
    EventType.TICK: _tick_event,
    EventType.STRIKE: _strike_event,
    EventType.FORFEIT: _forfeit_event,
    EventType.GAME_END: _game_end_event,
    EventType.MATCH_END: _match_end_event,
    EventType.MATCH_ABORTED: _match_aborted_event,
    VIEW: _view_event,
    SEAT_VIEW: _seat_view_event,
}
"""Per event type, its typed message (the `MatchEvent.event` field named as the type)."""


def event_message(event: Mapping[str, Any]) -> pb.MatchEvent:
    """A referee event (`{"type": ..., ...}`) as a MatchEvent: its type, its JSON and
    the same event typed. An event of another type (`match_running`) has no typed form."""
    kind = str(event["type"])
    message = pb.MatchEvent(type=kind, json=json.dumps(event))
    if kind in _EVENTS:
        getattr(message, kind).CopyFrom(_EVENTS[kind](event))
    return message


# Options


def _int64_or_zero(seed: int) -> int:
    """The seed for the old int64 field: drawn 128-bit seeds do not fit, so 0."""
    return seed if seed < 2**63 else 0


def match_message(match: Match, challenger: str = "") -> pb.Match:
    """A stored match as a message: the seed's commitment always, the seed once finished;
    for a challenge (unrated), `challenger` is the challenging author's name."""
    message = pb.Match(
        match_id=match.request.id,
        status=match.status,
        game=match.request.game,
        bot_ids=match.request.bot_ids,
        reason=match.reason,
        seed_commitment=match.seed_commitment,
        challenge=match.request.challenger is not None,
        challenger=challenger,
    )
    if match.status == MatchStatus.FINISHED:
        message.seed_decimal = str(match.seed)
    if match.result is not None:
        message.result.CopyFrom(result_message(match.result))
    return message


def replay_message(match_id: str, replays: Sequence[Replay]) -> pb.Replay:
    """A match's replays as a message."""
    return pb.Replay(
        match_id=match_id,
        games=[
            pb.GameReplay(
                game_index=replay.game_index,
                seats=replay.seats,
                log_json=json_text(replay.log),
                events_json=json_text(replay.events),
                events=[event_message(event) for event in replay.events],
            )
            for replay in replays
        ],
    )
