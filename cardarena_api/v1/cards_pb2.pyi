from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GoodgeSuit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GOODGE_SUIT_UNSPECIFIED: _ClassVar[GoodgeSuit]
    GOODGE_SUIT_SPADES: _ClassVar[GoodgeSuit]
    GOODGE_SUIT_DIAMONDS: _ClassVar[GoodgeSuit]
    GOODGE_SUIT_STARS: _ClassVar[GoodgeSuit]
    GOODGE_SUIT_HEARTS: _ClassVar[GoodgeSuit]
    GOODGE_SUIT_CLUBS: _ClassVar[GoodgeSuit]

class Golden10Colour(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GOLDEN10_COLOUR_UNSPECIFIED: _ClassVar[Golden10Colour]
    GOLDEN10_COLOUR_RED: _ClassVar[Golden10Colour]
    GOLDEN10_COLOUR_YELLOW: _ClassVar[Golden10Colour]
    GOLDEN10_COLOUR_BLACK: _ClassVar[Golden10Colour]
    GOLDEN10_COLOUR_GREEN: _ClassVar[Golden10Colour]

class GoofSuit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GOOF_SUIT_UNSPECIFIED: _ClassVar[GoofSuit]
    GOOF_SUIT_SPADES: _ClassVar[GoofSuit]
    GOOF_SUIT_HEARTS: _ClassVar[GoofSuit]
    GOOF_SUIT_DIAMONDS: _ClassVar[GoofSuit]
    GOOF_SUIT_CLUBS: _ClassVar[GoofSuit]
GOODGE_SUIT_UNSPECIFIED: GoodgeSuit
GOODGE_SUIT_SPADES: GoodgeSuit
GOODGE_SUIT_DIAMONDS: GoodgeSuit
GOODGE_SUIT_STARS: GoodgeSuit
GOODGE_SUIT_HEARTS: GoodgeSuit
GOODGE_SUIT_CLUBS: GoodgeSuit
GOLDEN10_COLOUR_UNSPECIFIED: Golden10Colour
GOLDEN10_COLOUR_RED: Golden10Colour
GOLDEN10_COLOUR_YELLOW: Golden10Colour
GOLDEN10_COLOUR_BLACK: Golden10Colour
GOLDEN10_COLOUR_GREEN: Golden10Colour
GOOF_SUIT_UNSPECIFIED: GoofSuit
GOOF_SUIT_SPADES: GoofSuit
GOOF_SUIT_HEARTS: GoofSuit
GOOF_SUIT_DIAMONDS: GoofSuit
GOOF_SUIT_CLUBS: GoofSuit

class GoodgeCard(_message.Message):
    __slots__ = ("suit", "rank", "crown", "text")
    SUIT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    CROWN_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    suit: GoodgeSuit
    rank: int
    crown: bool
    text: str
    def __init__(self, suit: _Optional[_Union[GoodgeSuit, str]] = ..., rank: _Optional[int] = ..., crown: _Optional[bool] = ..., text: _Optional[str] = ...) -> None: ...

class GoodgeAction(_message.Message):
    __slots__ = ("bid", "trump", "card")
    BID_FIELD_NUMBER: _ClassVar[int]
    PASS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    bid: int
    trump: GoodgeSuit
    card: GoodgeCard
    def __init__(self, bid: _Optional[int] = ..., trump: _Optional[_Union[GoodgeSuit, str]] = ..., card: _Optional[_Union[GoodgeCard, _Mapping]] = ..., **kwargs) -> None: ...

class GoodgePlay(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: GoodgeCard
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[GoodgeCard, _Mapping]] = ...) -> None: ...

class GoodgeTrick(_message.Message):
    __slots__ = ("leader", "plays", "winner", "points")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[GoodgePlay]
    winner: int
    points: int
    def __init__(self, leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[GoodgePlay, _Mapping]]] = ..., winner: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class GoodgeBid(_message.Message):
    __slots__ = ("seat", "bid")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bid: int
    def __init__(self, seat: _Optional[int] = ..., bid: _Optional[int] = ...) -> None: ...

class GoodgeObservation(_message.Message):
    __slots__ = ("phase", "hand", "hand_sizes", "bids", "passed", "high_bid", "high_bidder", "goodge", "bid", "trump", "stash_size", "stash", "stash_known", "tricks", "trick", "lead_suit", "taken", "tricks_won", "target")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    HIGH_BID_FIELD_NUMBER: _ClassVar[int]
    HIGH_BIDDER_FIELD_NUMBER: _ClassVar[int]
    GOODGE_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    STASH_SIZE_FIELD_NUMBER: _ClassVar[int]
    STASH_FIELD_NUMBER: _ClassVar[int]
    STASH_KNOWN_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    LEAD_SUIT_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    phase: str
    hand: _containers.RepeatedCompositeFieldContainer[GoodgeCard]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    bids: _containers.RepeatedCompositeFieldContainer[GoodgeBid]
    passed: _containers.RepeatedScalarFieldContainer[int]
    high_bid: int
    high_bidder: int
    goodge: int
    bid: int
    trump: GoodgeSuit
    stash_size: int
    stash: _containers.RepeatedCompositeFieldContainer[GoodgeCard]
    stash_known: bool
    tricks: _containers.RepeatedCompositeFieldContainer[GoodgeTrick]
    trick: GoodgeTrick
    lead_suit: GoodgeSuit
    taken: _containers.RepeatedScalarFieldContainer[int]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    target: int
    def __init__(self, phase: _Optional[str] = ..., hand: _Optional[_Iterable[_Union[GoodgeCard, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., bids: _Optional[_Iterable[_Union[GoodgeBid, _Mapping]]] = ..., passed: _Optional[_Iterable[int]] = ..., high_bid: _Optional[int] = ..., high_bidder: _Optional[int] = ..., goodge: _Optional[int] = ..., bid: _Optional[int] = ..., trump: _Optional[_Union[GoodgeSuit, str]] = ..., stash_size: _Optional[int] = ..., stash: _Optional[_Iterable[_Union[GoodgeCard, _Mapping]]] = ..., stash_known: _Optional[bool] = ..., tricks: _Optional[_Iterable[_Union[GoodgeTrick, _Mapping]]] = ..., trick: _Optional[_Union[GoodgeTrick, _Mapping]] = ..., lead_suit: _Optional[_Union[GoodgeSuit, str]] = ..., taken: _Optional[_Iterable[int]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., target: _Optional[int] = ...) -> None: ...

class Golden10Card(_message.Message):
    __slots__ = ("colour", "rank", "text")
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    colour: Golden10Colour
    rank: int
    text: str
    def __init__(self, colour: _Optional[_Union[Golden10Colour, str]] = ..., rank: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class Golden10Action(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Golden10Card
    def __init__(self, card: _Optional[_Union[Golden10Card, _Mapping]] = ...) -> None: ...

class Golden10Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Golden10Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Golden10Card, _Mapping]] = ...) -> None: ...

class Golden10Trick(_message.Message):
    __slots__ = ("leader", "plays", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    plays: _containers.RepeatedCompositeFieldContainer[Golden10Play]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[Golden10Play, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class Golden10Observation(_message.Message):
    __slots__ = ("phase", "hand", "hand_sizes", "led_colour", "trick", "tricks", "red_points_taken", "yellow10_taken_by", "left_over_count", "left_over_taker", "rounds", "yellow10_floor")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    LED_COLOUR_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    RED_POINTS_TAKEN_FIELD_NUMBER: _ClassVar[int]
    YELLOW10_TAKEN_BY_FIELD_NUMBER: _ClassVar[int]
    LEFT_OVER_COUNT_FIELD_NUMBER: _ClassVar[int]
    LEFT_OVER_TAKER_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    YELLOW10_FLOOR_FIELD_NUMBER: _ClassVar[int]
    phase: str
    hand: _containers.RepeatedCompositeFieldContainer[Golden10Card]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    led_colour: Golden10Colour
    trick: Golden10Trick
    tricks: _containers.RepeatedCompositeFieldContainer[Golden10Trick]
    red_points_taken: _containers.RepeatedScalarFieldContainer[int]
    yellow10_taken_by: int
    left_over_count: int
    left_over_taker: int
    rounds: int
    yellow10_floor: str
    def __init__(self, phase: _Optional[str] = ..., hand: _Optional[_Iterable[_Union[Golden10Card, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., led_colour: _Optional[_Union[Golden10Colour, str]] = ..., trick: _Optional[_Union[Golden10Trick, _Mapping]] = ..., tricks: _Optional[_Iterable[_Union[Golden10Trick, _Mapping]]] = ..., red_points_taken: _Optional[_Iterable[int]] = ..., yellow10_taken_by: _Optional[int] = ..., left_over_count: _Optional[int] = ..., left_over_taker: _Optional[int] = ..., rounds: _Optional[int] = ..., yellow10_floor: _Optional[str] = ...) -> None: ...

class GoofCard(_message.Message):
    __slots__ = ("suit", "rank", "owner", "text")
    SUIT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    suit: GoofSuit
    rank: int
    owner: int
    text: str
    def __init__(self, suit: _Optional[_Union[GoofSuit, str]] = ..., rank: _Optional[int] = ..., owner: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class GoofAction(_message.Message):
    __slots__ = ("play", "turn", "wait")
    PLAY_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    play: GoofPlay
    turn: bool
    wait: bool
    def __init__(self, play: _Optional[_Union[GoofPlay, _Mapping]] = ..., turn: _Optional[bool] = ..., wait: _Optional[bool] = ...) -> None: ...

class GoofPlay(_message.Message):
    __slots__ = ("card", "pile", "new_pile")
    CARD_FIELD_NUMBER: _ClassVar[int]
    PILE_FIELD_NUMBER: _ClassVar[int]
    NEW_PILE_FIELD_NUMBER: _ClassVar[int]
    card: GoofCard
    pile: int
    new_pile: bool
    def __init__(self, card: _Optional[_Union[GoofCard, _Mapping]] = ..., pile: _Optional[int] = ..., new_pile: _Optional[bool] = ...) -> None: ...

class GoofTableau(_message.Message):
    __slots__ = ("seat", "goof_pile", "line", "stock", "waste", "waste_top", "back_three", "area_cards", "full_pass")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GOOF_PILE_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    STOCK_FIELD_NUMBER: _ClassVar[int]
    WASTE_FIELD_NUMBER: _ClassVar[int]
    WASTE_TOP_FIELD_NUMBER: _ClassVar[int]
    BACK_THREE_FIELD_NUMBER: _ClassVar[int]
    AREA_CARDS_FIELD_NUMBER: _ClassVar[int]
    FULL_PASS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    goof_pile: int
    line: _containers.RepeatedCompositeFieldContainer[GoofCard]
    stock: int
    waste: int
    waste_top: GoofCard
    back_three: GoofCard
    area_cards: int
    full_pass: bool
    def __init__(self, seat: _Optional[int] = ..., goof_pile: _Optional[int] = ..., line: _Optional[_Iterable[_Union[GoofCard, _Mapping]]] = ..., stock: _Optional[int] = ..., waste: _Optional[int] = ..., waste_top: _Optional[_Union[GoofCard, _Mapping]] = ..., back_three: _Optional[_Union[GoofCard, _Mapping]] = ..., area_cards: _Optional[int] = ..., full_pass: _Optional[bool] = ...) -> None: ...

class GoofPile(_message.Message):
    __slots__ = ("id", "suit", "top", "size")
    ID_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    TOP_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    id: int
    suit: GoofSuit
    top: GoofCard
    size: int
    def __init__(self, id: _Optional[int] = ..., suit: _Optional[_Union[GoofSuit, str]] = ..., top: _Optional[_Union[GoofCard, _Mapping]] = ..., size: _Optional[int] = ...) -> None: ...

class GoofMove(_message.Message):
    __slots__ = ("seat", "action", "took_effect")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TOOK_EFFECT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: str
    took_effect: bool
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[str] = ..., took_effect: _Optional[bool] = ...) -> None: ...

class GoofObservation(_message.Message):
    __slots__ = ("phase", "tick", "tableau", "piles", "removed_piles", "one_unders", "last_tick")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TICK_FIELD_NUMBER: _ClassVar[int]
    TABLEAU_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    REMOVED_PILES_FIELD_NUMBER: _ClassVar[int]
    ONE_UNDERS_FIELD_NUMBER: _ClassVar[int]
    LAST_TICK_FIELD_NUMBER: _ClassVar[int]
    phase: str
    tick: int
    tableau: _containers.RepeatedCompositeFieldContainer[GoofTableau]
    piles: _containers.RepeatedCompositeFieldContainer[GoofPile]
    removed_piles: _containers.RepeatedScalarFieldContainer[int]
    one_unders: int
    last_tick: _containers.RepeatedCompositeFieldContainer[GoofMove]
    def __init__(self, phase: _Optional[str] = ..., tick: _Optional[int] = ..., tableau: _Optional[_Iterable[_Union[GoofTableau, _Mapping]]] = ..., piles: _Optional[_Iterable[_Union[GoofPile, _Mapping]]] = ..., removed_piles: _Optional[_Iterable[int]] = ..., one_unders: _Optional[int] = ..., last_tick: _Optional[_Iterable[_Union[GoofMove, _Mapping]]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("text", "goodge", "golden10", "goof")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    GOODGE_FIELD_NUMBER: _ClassVar[int]
    GOLDEN10_FIELD_NUMBER: _ClassVar[int]
    GOOF_FIELD_NUMBER: _ClassVar[int]
    text: str
    goodge: GoodgeAction
    golden10: Golden10Action
    goof: GoofAction
    def __init__(self, text: _Optional[str] = ..., goodge: _Optional[_Union[GoodgeAction, _Mapping]] = ..., golden10: _Optional[_Union[Golden10Action, _Mapping]] = ..., goof: _Optional[_Union[GoofAction, _Mapping]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("game", "seat", "players", "round", "dealer", "scores", "goodge", "golden10", "goof", "json")
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    GOODGE_FIELD_NUMBER: _ClassVar[int]
    GOLDEN10_FIELD_NUMBER: _ClassVar[int]
    GOOF_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    game: str
    seat: int
    players: int
    round: int
    dealer: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    goodge: GoodgeObservation
    golden10: Golden10Observation
    goof: GoofObservation
    json: str
    def __init__(self, game: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[int] = ..., round: _Optional[int] = ..., dealer: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., goodge: _Optional[_Union[GoodgeObservation, _Mapping]] = ..., golden10: _Optional[_Union[Golden10Observation, _Mapping]] = ..., goof: _Optional[_Union[GoofObservation, _Mapping]] = ..., json: _Optional[str] = ...) -> None: ...
