"""The replica tier: referee replicas sharing their bots through a Redis relay.

The core (`referee.service`, `sessions`, `channels`, `runner`, `wire`,
`matches`, `verify`, `public`, `seats`) never imports this package: it sees
a tier only through the seat-channel (`channels.SeatChannel`), seats
(`seats.Seats`) and remote-watch (`public.RemoteMatches`) protocols, and
`referee.server` puts the two together.

- `registry`: the shared view in Redis (who holds which bot, who is alive);
- `relay`: messages between replicas (requests, answers, notices, calls);
- `channel`: the seat channel that reaches a bot wherever it is held;
- `placement`: a match started on the replica holding most of its seats;
- `public`: public watching of a match another replica plays;
- `replica`: this replica's membership (heartbeat, slots, draining);
- `supervisor`: `arena referee --processes N`.
"""
