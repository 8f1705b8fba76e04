"""The OpenAI-compatible backend against a local HTTP server started by the test."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from test_auditor import make_tree

from workbench import Journal
from workbench.agents.auditor import AuditState, Calls, OpenAIModel, run, start
from workbench.agents.auditor.models import ModelError
from workbench.events import key_hash


class FakeChat(BaseHTTPRequestHandler):
    requests: list[dict] = []
    fail = False

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeChat.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if FakeChat.fail:
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"overloaded")
            return
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        if "categories" in system:
            answer = "todo, unwrap"
        elif "audit note" in system:
            answer = "\n".join(
                line for line in user.splitlines() if line.startswith(("## ", "F: "))
            )
        else:
            answer = "\n".join(line for line in user.splitlines() if line.startswith("F: "))
        doc = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
        data = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    FakeChat.requests = []
    FakeChat.fail = False
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeChat)
    # shutdown() waits for the loop's next look at its flag: every 20 ms, not the default 0.5 s
    t = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_openai_backend_runs_the_audit_with_idempotency_keys(tmp_path, server):
    tree = make_tree(tmp_path / "tree")
    model = OpenAIModel(base_url=server, api_key="sk-test", model="tiny")
    db = tmp_path / "o.db"
    with Journal.open(db, AuditState) as j:
        start(j.root(), tree, 3000)
        res = run(j.root(), Calls(model))
        keys = [
            r.payload["key"]
            for r in j.root().history()
            if r.kind == "effect"
            and r.payload["key"].startswith(("plan:", "analyze:", "summarize:", "report"))
        ]
    reqs = FakeChat.requests
    assert len(reqs) == len(keys) == res.metrics["model_calls"]
    assert all(r["path"] == "/v1/chat/completions" for r in reqs)
    assert [r["headers"]["Idempotency-Key"] for r in reqs] == [key_hash(k).hex() for k in keys]
    assert reqs[0]["headers"]["Authorization"] == "Bearer sk-test"
    assert reqs[0]["body"]["model"] == "tiny"
    assert res.metrics["recall"] > 0  # the fake keeps the F: lines it was given
    with Journal.open(db, AuditState) as j:  # resume: nothing is sent again
        run(j.root(), Calls(model))
    assert len(FakeChat.requests) == len(reqs)


def test_openai_backend_error_commits_nothing(tmp_path, server):
    tree = make_tree(tmp_path / "tree")
    FakeChat.fail = True
    with Journal.in_memory(AuditState) as j:
        start(j.root(), tree, 3000)
        with pytest.raises(ModelError) as err:
            run(j.root(), Calls(OpenAIModel(base_url=server + "/v1")))
        assert "HTTP 500" in str(err.value)
        assert j.root().unknown_outcomes() == []
        assert all(
            not r.payload["key"].startswith("plan:")
            for r in j.root().history()
            if r.kind == "effect"
        )
    assert FakeChat.requests[0]["path"] == "/v1/chat/completions"


def test_openai_backend_needs_a_base_url(monkeypatch):
    monkeypatch.delenv("LITHIFY_OPENAI_BASE_URL", raising=False)
    with pytest.raises(Exception) as err:
        OpenAIModel()
    assert "LITHIFY_OPENAI_BASE_URL" in str(err.value)
