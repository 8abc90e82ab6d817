from cardarena_api.v1 import cards_pb2 as _cards_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterRequest(_message.Message):
    __slots__ = ("name", "version", "games")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    games: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ...) -> None: ...

class RegisterReply(_message.Message):
    __slots__ = ("bot_id", "token")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    token: str
    def __init__(self, bot_id: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class BotMessage(_message.Message):
    __slots__ = ("hello", "answer")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    answer: Answer
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("capacity", "client")
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    capacity: int
    client: str
    def __init__(self, capacity: _Optional[int] = ..., client: _Optional[str] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("request_id", "index", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    index: int
    action: _cards_pb2.Action
    def __init__(self, request_id: _Optional[str] = ..., index: _Optional[int] = ..., action: _Optional[_Union[_cards_pb2.Action, _Mapping]] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "act", "game_start", "game_end", "match_end", "strike", "forfeit", "error")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ACT_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    STRIKE_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    act: Act
    game_start: GameStart
    game_end: GameEnd
    match_end: MatchEnd
    strike: Strike
    forfeit: Forfeit
    error: Error
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., act: _Optional[_Union[Act, _Mapping]] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., game_end: _Optional[_Union[GameEnd, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., strike: _Optional[_Union[Strike, _Mapping]] = ..., forfeit: _Optional[_Union[Forfeit, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_id", "session_id", "capacity")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    session_id: str
    capacity: int
    def __init__(self, bot_id: _Optional[str] = ..., session_id: _Optional[str] = ..., capacity: _Optional[int] = ...) -> None: ...

class Act(_message.Message):
    __slots__ = ("request_id", "match_id", "game_index", "game", "seat", "observation", "legal", "deadline_ms", "time_bank_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    match_id: str
    game_index: int
    game: str
    seat: int
    observation: _cards_pb2.Observation
    legal: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Action]
    deadline_ms: int
    time_bank_ms: int
    def __init__(self, request_id: _Optional[str] = ..., match_id: _Optional[str] = ..., game_index: _Optional[int] = ..., game: _Optional[str] = ..., seat: _Optional[int] = ..., observation: _Optional[_Union[_cards_pb2.Observation, _Mapping]] = ..., legal: _Optional[_Iterable[_Union[_cards_pb2.Action, _Mapping]]] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("match_id", "game_index", "game", "seat", "seats", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game_index: int
    game: str
    seat: int
    seats: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    def __init__(self, match_id: _Optional[str] = ..., game_index: _Optional[int] = ..., game: _Optional[str] = ..., seat: _Optional[int] = ..., seats: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("match_id", "game_index", "seat", "scores", "ranks", "rounds")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game_index: int
    seat: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    rounds: int
    def __init__(self, match_id: _Optional[str] = ..., game_index: _Optional[int] = ..., seat: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., rounds: _Optional[int] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "result")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    result: MatchResult
    def __init__(self, match_id: _Optional[str] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...

class Strike(_message.Message):
    __slots__ = ("match_id", "game_index", "seat", "reason", "strikes", "max_strikes")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game_index: int
    seat: int
    reason: str
    strikes: int
    max_strikes: int
    def __init__(self, match_id: _Optional[str] = ..., game_index: _Optional[int] = ..., seat: _Optional[int] = ..., reason: _Optional[str] = ..., strikes: _Optional[int] = ..., max_strikes: _Optional[int] = ...) -> None: ...

class Forfeit(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("message", "request_id")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    message: str
    request_id: str
    def __init__(self, message: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class StartMatchRequest(_message.Message):
    __slots__ = ("match_id", "game", "players", "bot_ids", "duplicate", "deadline_ms", "seed", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BOT_IDS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    players: int
    bot_ids: _containers.RepeatedScalarFieldContainer[str]
    duplicate: bool
    deadline_ms: int
    seed: int
    options: _containers.ScalarMap[str, str]
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., players: _Optional[int] = ..., bot_ids: _Optional[_Iterable[str]] = ..., duplicate: _Optional[bool] = ..., deadline_ms: _Optional[int] = ..., seed: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id", "wait")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    wait: bool
    def __init__(self, match_id: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class Match(_message.Message):
    __slots__ = ("match_id", "status", "game", "bot_ids", "result", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    BOT_IDS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: str
    game: str
    bot_ids: _containers.RepeatedScalarFieldContainer[str]
    result: MatchResult
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[str] = ..., game: _Optional[str] = ..., bot_ids: _Optional[_Iterable[str]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("scores", "ranks", "forfeits", "games", "json")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    forfeits: _containers.RepeatedScalarFieldContainer[str]
    games: _containers.RepeatedCompositeFieldContainer[GameResult]
    json: str
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., forfeits: _Optional[_Iterable[str]] = ..., games: _Optional[_Iterable[_Union[GameResult, _Mapping]]] = ..., json: _Optional[str] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("seed", "seats", "scores", "ranks", "rounds")
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    seed: int
    seats: _containers.RepeatedScalarFieldContainer[str]
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    rounds: int
    def __init__(self, seed: _Optional[int] = ..., seats: _Optional[_Iterable[str]] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., rounds: _Optional[int] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("type", "json")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    type: str
    json: str
    def __init__(self, type: _Optional[str] = ..., json: _Optional[str] = ...) -> None: ...

class Replay(_message.Message):
    __slots__ = ("match_id", "games")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    games: _containers.RepeatedCompositeFieldContainer[GameReplay]
    def __init__(self, match_id: _Optional[str] = ..., games: _Optional[_Iterable[_Union[GameReplay, _Mapping]]] = ...) -> None: ...

class GameReplay(_message.Message):
    __slots__ = ("game_index", "seats", "log_json", "events_json")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    LOG_JSON_FIELD_NUMBER: _ClassVar[int]
    EVENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    seats: _containers.RepeatedScalarFieldContainer[str]
    log_json: str
    events_json: str
    def __init__(self, game_index: _Optional[int] = ..., seats: _Optional[_Iterable[str]] = ..., log_json: _Optional[str] = ..., events_json: _Optional[str] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSessionsReply(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("bot_id", "capacity", "busy")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    BUSY_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    capacity: int
    busy: int
    def __init__(self, bot_id: _Optional[str] = ..., capacity: _Optional[int] = ..., busy: _Optional[int] = ...) -> None: ...
