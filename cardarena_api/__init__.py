"""Generated protocol modules of Card Arena (from proto/; do not edit the *_pb2 files), and
what both sides of the protocol share: the notation of cards (`v1.notation`) and the event
loop their processes run on (`event_loop`)."""
