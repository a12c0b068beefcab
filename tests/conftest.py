"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def fake_slack():
    """A started fake Slack (tests/fake_slack.py) on 127.0.0.1; stopped after the test."""
    from fake_slack import FakeSlack

    with FakeSlack() as server:
        yield server
