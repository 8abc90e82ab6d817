"""Tests of the standings web app (ladder.web) and `arena web`."""
