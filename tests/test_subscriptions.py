"""Catch-up subscriptions: durable, at-least-once, independent per name."""

from __future__ import annotations

import pytest

from workbench import InvalidValue, Journal


def test_poll_does_not_advance_and_ack_persists_across_reopen(db_path):
    with Journal.open(db_path) as j:
        for i in range(5):
            j.root().apply({"i": i})
        sub = j.subscribe("indexer")
        first = sub.poll(3)
        assert [r.seq for r in first] == [1, 2, 3]
        assert [r.seq for r in sub.poll(3)] == [1, 2, 3]  # not advanced by polling
        sub.ack(first[1].position)
        assert [r.seq for r in sub.poll(10)] == [3, 4, 5]
    with Journal.open(db_path) as j:  # a crash or reopen: unacknowledged events come again
        sub = j.subscribe("indexer")
        assert sub.position == first[1].position
        assert [r.seq for r in sub.poll()] == [3, 4, 5]


def test_subscribers_are_independent_and_see_new_events(db_path):
    with Journal.open(db_path) as j:
        j.root().apply({"i": 0})
        a, b = j.subscribe("a"), j.subscribe("b")
        a.ack(a.poll()[-1].position)
        j.root().fork().apply({"i": 1})
        assert [r.payload for r in a.poll()] == [{"i": 1}]
        assert len(b.poll()) == 2


def test_ack_must_lie_inside_what_was_delivered(db_path):
    with Journal.open(db_path) as j:
        for i in range(3):
            j.root().apply({"i": i})
        sub = j.subscribe("s")
        with pytest.raises(InvalidValue):
            sub.ack(1)  # nothing delivered yet
        recs = sub.poll(2)
        with pytest.raises(InvalidValue):
            sub.ack(recs[-1].position + 1)  # beyond what was delivered
        sub.ack(recs[-1].position)
        with pytest.raises(InvalidValue):
            sub.ack(recs[0].position)  # already acknowledged
        with pytest.raises(InvalidValue):
            j.subscribe("")
