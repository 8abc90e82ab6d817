"""The ladder's writes under their former name, for callers not yet moved to the owners.

Each name is re-exported from the module that owns it; new code imports
that module: `ladder.pairing` (round-robin plans), `ladder.schedules`
(cron), `ladder.tournaments` (creation, plans, scheduled runs, progress),
`ladder.recording` (results exactly once), `ladder.tables` (the
tournament table, head-to-head) and `ladder.continuous` (ladder matches).
"""

from __future__ import annotations

from ladder.continuous import plan_ladder_matches
from ladder.errors import LeagueError
from ladder.pairing import plan_round_robin
from ladder.recording import ELO, NotFinished, is_recorded, record_match
from ladder.schedules import cron, is_due, scheduled_run_id
from ladder.tables import finish_tournament, tournament_los
from ladder.tournaments import (
    create_tournament,
    due_runs,
    mark_failed,
    pending_matches,
    planned_request,
    ready_to_finish,
    start_scheduled_run,
    tournament_complete,
    tournament_of,
)

__all__ = [
    "ELO",
    "LeagueError",
    "NotFinished",
    "create_tournament",
    "cron",
    "due_runs",
    "finish_tournament",
    "is_due",
    "is_recorded",
    "mark_failed",
    "pending_matches",
    "plan_ladder_matches",
    "plan_round_robin",
    "planned_request",
    "ready_to_finish",
    "record_match",
    "scheduled_run_id",
    "start_scheduled_run",
    "tournament_complete",
    "tournament_los",
    "tournament_of",
]
