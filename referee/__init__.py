"""The referee: runs matches authoritatively and talks to bots over gRPC.

Layers, innermost first: `channels` (what a seat is to a match: ask, notify),
`sessions` (bots' live streams and the in-process seat channel), `runner`
(one match through the engines), `matches` (the running matches, idempotent
by id, with their watchers), `wire` (engine values to protobuf messages),
`service` (thin gRPC servicers) and `server` (start, serve, shut down).
"""
