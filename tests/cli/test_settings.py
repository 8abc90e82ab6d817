"""Settings declared once (ladder.settings): the flags, the variables and the docs agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_cli.main import build_parser
from ladder.settings import declared, from_environment, from_values
from ladder.web.settings import WebSettings
from referee.settings import RefereeSettings
from workers.settings import WorkerSettings

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def referee_settings(argv: list[str]) -> RefereeSettings:
    args = build_parser().parse_args(["referee", *argv])
    return from_values(RefereeSettings, vars(args))


def test_flags_variables_and_defaults_come_from_one_declaration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert referee_settings([]) == RefereeSettings(database_url="sqlite:///arena.db")
    monkeypatch.setenv("ARENA_GRACE_S", "2.5")
    monkeypatch.setenv("ARENA_REGISTRATION", "admin")
    from_flags = referee_settings(["--deadline-ms", "300"])
    assert (from_flags.grace_s, from_flags.default_deadline_ms) == (2.5, 300)
    assert from_flags.open_registration is False
    from_env = from_environment(RefereeSettings, default_deadline_ms=300)
    assert from_env.grace_s == 2.5 and from_env.default_deadline_ms == 300
    assert from_env.open_registration is False


def test_a_bad_variable_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_MAX_STRIKES", "many")
    with pytest.raises(ValueError, match="ARENA_MAX_STRIKES='many'"):
        from_environment(RefereeSettings)


@pytest.mark.parametrize("cls", [RefereeSettings, WorkerSettings, WebSettings])
def test_every_declared_setting_is_documented(cls: type) -> None:
    text = OPERATIONS.read_text(encoding="utf-8")
    for _, spec in declared(cls):
        assert f"`ARENA_{spec.env}`" in text, spec
        assert spec.flag is None or f"`{spec.flag}`" in text, spec


def test_worker_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_LADDERS", "goodge-4p, golden10-5p")
    monkeypatch.setenv("ARENA_LADDER_DUPLICATE", "off")
    settings = WorkerSettings.from_env(database_url="sqlite:///x.db", metrics_port=0)
    assert settings.ladders == ("goodge-4p", "golden10-5p") and not settings.ladder_duplicate
    assert (settings.database_url, settings.metrics_port) == ("sqlite:///x.db", 0)
    monkeypatch.setenv("ARENA_LADDER_DUPLICATE", "sometimes")
    with pytest.raises(ValueError, match="ARENA_LADDER_DUPLICATE='sometimes'"):
        WorkerSettings.from_env()
