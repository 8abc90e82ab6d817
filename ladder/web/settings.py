"""What `arena web` can be told: each setting's variable, flag, default and help, once."""

from __future__ import annotations

from dataclasses import dataclass

from ladder.settings import DEFAULT_REFEREE, REFEREE, setting, switch

MAX_PLAY_AT_ONCE = 64
"""The referee grants a session at most 64 matches at once: the guest seat's bound."""


@dataclass(frozen=True)
class WebSettings:
    """The web's address, its pages' refresh, its JSON API's bound per client address, the
    referee whose public streams its live match pages relay, and Play: the seat it holds
    on that referee for people who play against the bots (`ladder.web.play`)."""

    port: int = setting(8000, env="WEB_PORT", flag="--port", help="TCP port", parse=int)
    host: str = setting(
        "127.0.0.1",
        env="WEB_HOST",
        flag="--host",
        help="address to listen on (0.0.0.0 for every interface)",
    )
    poll_seconds: float = setting(
        5.0,
        env="WEB_POLL_S",
        flag="--poll-seconds",
        help="how often open pages fetch fresh results",
        parse=float,
        metavar="S",
    )
    api_rate: float = setting(
        20.0,
        env="WEB_API_RATE",
        flag="--api-rate",
        help="JSON API requests a second each client address may make on average; beyond it 429",
        parse=float,
        metavar="N",
    )
    api_burst: int = setting(
        60,
        env="WEB_API_BURST",
        flag="--api-burst",
        help="JSON API requests a client address may make at once",
        parse=int,
        metavar="N",
    )
    referee: str = setting(DEFAULT_REFEREE, REFEREE)
    play: bool = setting(
        True,
        env="WEB_PLAY",
        flag="--play",
        help="serve /play, where a person plays one seat against the bots on the referee (on/off)",
        parse=switch,
        metavar="on|off",
    )
    play_bot: str = setting(
        "guest",
        env="WEB_PLAY_BOT",
        flag="--play-bot",
        help="the bot name whose one session holds the people's seats: one name per web "
        "replica; registered (version web) on first use unless ARENA_WEB_PLAY_BOT_TOKEN is set",
        metavar="NAME",
    )
    play_bot_token: str = setting(
        "",
        env="WEB_PLAY_BOT_TOKEN",
        help="the token of the play bot when the operator registered it (a variable only)",
    )
    play_token: str = setting(
        "",
        env="WEB_PLAY_TOKEN",
        help="the admin token, or the token of the author who owns the play bot's name: "
        "Play registers the bot and challenges with it (a variable only; a referee without "
        "an admin token needs none)",
    )
    play_at_once: int = setting(
        8,
        env="WEB_PLAY_AT_ONCE",
        flag="--play-at-once",
        help="games people play at once on this web replica (the play bot's capacity)",
        parse=int,
        metavar="N",
    )
    play_per_address: int = setting(
        2,
        env="WEB_PLAY_PER_ADDRESS",
        flag="--play-per-address",
        help="games one client address plays at once",
        parse=int,
        metavar="N",
    )
    play_deadline_ms: int = setting(
        30_000,
        env="WEB_PLAY_DEADLINE_MS",
        flag="--play-deadline-ms",
        help="a person's time for a move in Goodge and Golden 10 (the referee's time bank "
        "comes on top); late is a strike, as for a bot",
        parse=int,
        metavar="MS",
    )
    play_tick_ms: int = setting(
        2_000,
        env="WEB_PLAY_TICK_MS",
        flag="--play-tick-ms",
        help="a person's time for a Goof tick: the page waits for the person then",
        parse=int,
        metavar="MS",
    )

    def check(self) -> None:
        """Refuse values the web cannot serve with (ValueError, naming the flag)."""
        if not 0 < self.port < 65536:
            raise ValueError(f"--port must be 1..65535, got {self.port}")
        if not 0.2 <= self.poll_seconds <= 3600:
            raise ValueError(f"--poll-seconds must be 0.2..3600, got {self.poll_seconds:g}")
        if self.api_rate <= 0 or self.api_burst < 1:
            raise ValueError(
                f"--api-rate must be positive and --api-burst at least 1, got {self.api_rate:g} "
                f"and {self.api_burst}"
            )
        if not 1 <= self.play_at_once <= MAX_PLAY_AT_ONCE:
            raise ValueError(
                f"--play-at-once must be 1..{MAX_PLAY_AT_ONCE}, got {self.play_at_once}"
            )
        if not 1 <= self.play_per_address <= self.play_at_once:
            raise ValueError(
                f"--play-per-address must be 1..--play-at-once ({self.play_at_once}), "
                f"got {self.play_per_address}"
            )
        if not 1_000 <= self.play_deadline_ms <= 60_000:
            raise ValueError(f"--play-deadline-ms must be 1000..60000, got {self.play_deadline_ms}")
        if not 500 <= self.play_tick_ms <= 60_000:
            raise ValueError(f"--play-tick-ms must be 500..60000, got {self.play_tick_ms}")


DEFAULTS = WebSettings()
