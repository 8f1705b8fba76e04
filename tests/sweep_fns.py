"""Functions the sweep tests run in worker processes (importable: tests/ is on PYTHONPATH)."""

from __future__ import annotations

import json
import os
import sys
import time

from workbench import Journal


def record_modules(journal: str, branch: int, params: dict) -> None:
    with open(params["out"], "w") as f:
        json.dump(sorted(sys.modules), f)
    with Journal.open(journal) as j:
        j.branch(branch).observe("ok", 1)


def sleepy(journal: str, branch: int, params: dict) -> None:
    if "started" in params:  # a folder: says "this fork is running" with a file of its name
        open(os.path.join(params["started"], str(branch)), "w").close()
    time.sleep(params.get("sleep", 0.2))
    with Journal.open(journal) as j:
        j.branch(branch).observe("slept", params.get("sleep", 0.2))


def gated(journal: str, branch: int, params: dict) -> None:
    """``sleepy`` once the file named by $SWEEP_GATE exists: a test opens the gate when it has
    seen what it needs while the forks are still running (it fails after 120 s shut)."""
    gate, deadline = os.environ["SWEEP_GATE"], time.monotonic() + 120
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the gate {gate} was never opened")
        time.sleep(0.01)
    sleepy(journal, branch, params)


def held(journal: str, branch: int, params: dict) -> None:
    """A trial that reports ``loss`` at steps 1 and 2 (intermediate values), then waits until
    the file ``$HOLD_DIR/<branch>`` or ``$HOLD_DIR/all`` exists and observes its final loss: a
    test releases the trials of a live study one at a time (it fails after 300 s held)."""
    from workbench import sweep

    x1, x2 = float(params["x1"]), float(params["x2"])
    value = (x1 - 2) ** 2 + (x2 - 5) ** 2 / 10 + 1
    hold, deadline = os.environ["HOLD_DIR"], time.monotonic() + 300
    with Journal.open(journal) as j:
        b = j.branch(branch)
        for step in (1, 2):
            sweep.report(b, value * (1 + 1 / step), step, metric="loss")
        while not any(os.path.exists(os.path.join(hold, n)) for n in (str(branch), "all")):
            if time.monotonic() > deadline:
                raise RuntimeError(f"branch {branch} was never released from {hold}")
            time.sleep(0.02)
        b.observe("loss", value)


def boom(journal: str, branch: int, params: dict) -> None:
    raise RuntimeError(f"no luck with {params}")


def counted(journal: str, branch: int, params: dict) -> None:
    """Five effects (each appends a line to params["log"] when it really runs) and a result;
    sleeps between them so a test can kill a worker mid-fork."""
    with Journal.open(journal) as j:
        b = j.branch(branch)
        for step in range(5):

            def work(step: int = step) -> int:
                with open(params["log"], "a") as f:
                    f.write(f"{branch}:{step}\n")
                return step * params["x"]

            b.effect(f"step:{step}", work)
            time.sleep(params.get("sleep", 0.1))
        b.observe("score", params["x"] * 2)


def branin(journal: str, branch: int, params: dict) -> None:
    """A deterministic objective over two floats and a choice (Branin plus an offset per
    category, to minimize), reported over 4 steps that close in on the final value, so a
    pruner can stop bad trials early."""
    import math

    from workbench import sweep

    x1, x2 = float(params["x1"]), float(params["x2"])
    offset = {"a": 0.0, "b": 5.0, "c": 20.0}[params["kind"]]
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    r, s, t = 6.0, 10.0, 1 / (8 * math.pi)
    value = a * (x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s + offset
    with Journal.open(journal) as j:
        br = j.branch(branch)
        for step in range(1, 5):
            br.effect(f"work:{step}", lambda step=step: step)
            sweep.report(br, value * (1 + 0.5 / step), step, metric="loss")
        br.observe("loss", value)


def branin_counted(journal: str, branch: int, params: dict) -> None:
    """``branin`` whose effects append a line to $BRANIN_LOG each time they really run (a
    committed effect read back after a crash appends nothing), then sleep a little so a test
    can kill the coordinator mid-study."""
    import math
    import os

    from workbench import sweep

    x1, x2 = float(params["x1"]), float(params["x2"])
    offset = {"a": 0.0, "b": 5.0, "c": 20.0}[params["kind"]]
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    value = a * (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1)
    value += 10 + offset
    with Journal.open(journal) as j:
        br = j.branch(branch)
        for step in range(1, 4):

            def work(step: int = step) -> int:
                with open(os.environ["BRANIN_LOG"], "a") as f:
                    f.write(f"{branch}:{step}\n")
                return step

            br.effect(f"work:{step}", work)
            sweep.report(br, value * (1 + 0.5 / step), step, metric="loss")
            time.sleep(float(os.environ.get("BRANIN_SLEEP", "0.05")))
        br.observe("loss", value)


def two_costs(journal: str, branch: int, params: dict) -> None:
    """Two objectives that pull apart: loss falls and cost rises with x."""
    x = float(params["x"])
    with Journal.open(journal) as j:
        br = j.branch(branch)
        br.observe("loss", (x - 1) ** 2 + 0.1 * float(params.get("y", 0)))
        br.observe("cost", x**2)


def no_objective(journal: str, branch: int, params: dict) -> None:
    with Journal.open(journal) as j:
        j.branch(branch).observe("something_else", 1.0)


def climb(journal: str, branch: int, params: dict) -> None:
    """A member of a population: add ``rate`` per step (the Tally state carries the total, so a
    fork of a leader starts from the leader's total) up to 12 steps, reporting each."""
    from tiny_agent import Tally

    from workbench import sweep

    with Journal.open(journal, Tally) as j:
        b = j.branch(branch)
        while len(b.state().steps) < 12:
            b.apply({"add": int(params["rate"])})
            sweep.report(b, float(b.state().total), len(b.state().steps), metric="total")
        b.observe("total", float(b.state().total))


def tally(journal: str, branch: int, params: dict) -> None:
    """The docs' tally.py (docs/how-to/optimize.md): five steps of an effect, a delta and a
    report of the total so far; it never checks its own progress, so a rerun that appended
    again would count steps twice (the total cannot exceed 5 * 0.25). Each effect that really
    runs appends a line to $TALLY_LOG; $TALLY_SLEEP slows each step (a test kills mid-trial);
    $TALLY_STOP="BRANCH:STEP" stops that fork between the step's delta and its report, as a
    kill there would."""
    from tiny_agent import Tally

    from workbench import sweep

    stop = os.environ.get("TALLY_STOP")
    with Journal.open(journal, Tally) as j:
        b = j.branch(branch)
        for step in range(5):

            def gain(step: int = step) -> float:
                if os.environ.get("TALLY_LOG"):
                    with open(os.environ["TALLY_LOG"], "a") as f:
                        f.write(f"{branch}:{step}\n")
                return params["rate"] * (1 - params["rate"])

            b.apply({"add": b.effect(f"gain:{step}", gain)})
            if stop == f"{branch}:{step}":
                raise KeyboardInterrupt(f"stopped at step {step}")
            sweep.report(b, float(b.state().total), step, metric="total")
            time.sleep(float(os.environ.get("TALLY_SLEEP", "0")))


def quadratic(journal: str, branch: int, params: dict) -> float:
    """A deterministic objective that returns its value (observed by the runner as the
    study's objective), as an Optuna objective does."""
    return -((float(params["x"]) - 0.3) ** 2) - (float(params["y"]) - 0.7) ** 2


def quadratic_value(x: float, y: float) -> float:
    return -((x - 0.3) ** 2) - (y - 0.7) ** 2


def quadratic_after(journal: str, branch: int, params: dict) -> float:
    """``quadratic`` with a journaled half-way point: an effect and a report; the fork on branch
    $QUADRATIC_STOP stops after them (a kill there), leaving its trial unfinished."""
    from workbench import sweep

    with Journal.open(journal) as j:
        b = j.branch(branch)
        half = b.effect("half", lambda: quadratic(journal, branch, params) / 2)
        sweep.report(b, half, 0, metric="value")
        if os.environ.get("QUADRATIC_STOP") == str(branch):
            raise KeyboardInterrupt("stopped half-way")
    return quadratic(journal, branch, params)


def two_returned(journal: str, branch: int, params: dict) -> dict:
    """Returns two metrics (and a note that is not a number, left out), observes none."""
    x = float(params["x"])
    return {"loss": (x - 0.5) ** 2, "cost": x, "note": "not a metric"}


def observes_and_returns(journal: str, branch: int, params: dict) -> dict:
    """Observes its value itself, then returns it too: observed once."""
    v = quadratic(journal, branch, params)
    with Journal.open(journal) as j:
        j.branch(branch).observe("value", v)
    return {"value": v}


def returns_nan(journal: str, branch: int, params: dict) -> float:
    return float("nan")


def with_user_attrs(journal: str, branch: int, params: dict) -> float:
    """Sets a user attribute twice (the second wins) and one it never changes."""
    from workbench import sweep

    with Journal.open(journal) as j:
        b = j.branch(branch)
        sweep.set_user_attr(b, "phase", "warm-up")
        sweep.set_user_attr(b, "phase", "done")
        sweep.set_user_attr(b, "inputs", {"x": params["x"], "tags": ["a", "b"]})
    return quadratic(journal, branch, params)


def slow_quadratic(journal: str, branch: int, params: dict) -> float:
    time.sleep(float(os.environ.get("QUADRATIC_SLEEP", "0.2")))
    return quadratic(journal, branch, params)


def conditional_space(trial) -> None:  # noqa: ANN001 (an optuna.Trial)
    """A define-by-run space: x always, then y only for the "wide" kind."""
    kind = trial.suggest_categorical("kind", ["narrow", "wide"])
    trial.suggest_float("x", 0.0, 1.0)
    if kind == "wide":
        trial.suggest_float("y", 0.0, 1.0)


def conditional(journal: str, branch: int, params: dict) -> float:
    return quadratic_value(float(params["x"]), float(params.get("y", 0.7)))


def kills_itself(journal: str, branch: int, params: dict) -> None:
    """Writes a line on stderr, then dies by SIGKILL every time it runs (a fork that kills its
    worker)."""
    import signal

    with Journal.open(journal) as j:
        j.branch(branch).observe("started", 1)
    sys.stderr.write(f"about to die on branch {branch}\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def branin_or_boom(journal: str, branch: int, params: dict) -> None:
    """``branin``, except that a trial of kind "c" fails after its first report: a study with
    complete, pruned and failed trials."""
    if params["kind"] == "c":
        from workbench import sweep

        with Journal.open(journal) as j:
            sweep.report(j.branch(branch), 100.0, 1, metric="loss")
        raise RuntimeError("kind c breaks")
    branin(journal, branch, params)
