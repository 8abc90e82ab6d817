"""What `arena web` can be told: each setting's variable, flag, default and help, once."""

from __future__ import annotations

from dataclasses import dataclass

from ladder.settings import DEFAULT_REFEREE, REFEREE, setting


@dataclass(frozen=True)
class WebSettings:
    """The web's address, its pages' refresh, its JSON API's bound per client address, and
    the referee whose public streams its live match pages relay."""

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


DEFAULTS = WebSettings()
