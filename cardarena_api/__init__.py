"""Generated protocol modules of Card Arena (from proto/; do not edit the *_pb2 files)."""
