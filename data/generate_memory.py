"""Generate the bundled memory-experiment samples (fixed seed): small files in the LoCoMo and
LongMemEval formats, so the memory experiment runs offline. The loaders
(``workbench.eval.load_locomo`` / ``load_longmemeval``) read the full public files the same way.

    python data/generate_memory.py        # writes data/memory/locomo_sample.json and
                                          # data/memory/longmemeval_sample.json

Each speaker states facts about themselves (a pet, a city, a job, a hobby, a food, a trip...)
across sessions, among small talk; each question asks for one fact and names the turn that
states it as evidence (two turns for facts that changed: the old and the new statement).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).parent / "memory"
SEED = 20261201

TOPICS = [
    (
        "pet",
        "I adopted a {v} last spring and it sleeps on my desk",
        "What pet did {s} adopt?",
        ["beagle", "tabby cat", "parrot", "tortoise", "hamster"],
    ),
    (
        "city",
        "We finally moved to {v}, the rent is lower there",
        "Which city did {s} move to?",
        ["Lisbon", "Utrecht", "Porto", "Tallinn", "Bergen"],
    ),
    (
        "job",
        "I started a new job as a {v} at the hospital",
        "What is {s}'s new job?",
        ["radiographer", "pharmacist", "nurse practitioner", "lab technician", "dietitian"],
    ),
    (
        "hobby",
        "On weekends I have been learning {v} with my neighbour",
        "What hobby is {s} learning on weekends?",
        ["pottery", "bouldering", "watercolour painting", "salsa dancing", "woodworking"],
    ),
    (
        "food",
        "My favourite dish lately is {v}, I cook it every Friday",
        "What dish does {s} cook every Friday?",
        ["shakshuka", "mushroom risotto", "pad thai", "lentil soup", "bibimbap"],
    ),
    (
        "trip",
        "Next month I am flying to {v} for my cousin's wedding",
        "Where is {s} flying for the wedding?",
        ["Nairobi", "Osaka", "Montreal", "Reykjavik", "Santiago"],
    ),
    (
        "book",
        "I just finished reading {v} and could not put it down",
        "Which book did {s} just finish?",
        ["The Left Hand of Darkness", "Piranesi", "Middlemarch", "Kindred", "Solaris"],
    ),
    (
        "car",
        "I sold the old van and bought a {v}",
        "What vehicle did {s} buy?",
        ["cargo bike", "used hatchback", "electric scooter", "camper van", "road bike"],
    ),
]
SMALL_TALK = [
    "Haha, that sounds like a long week.",
    "The weather has been strange lately, sunny then rain.",
    "Did you watch the match on Sunday?",
    "I need more coffee before I can think about that.",
    "My phone keeps running out of battery.",
    "Let us catch up properly soon.",
    "Work has been busy but manageable.",
    "I made too much tea again.",
]
NAMES = [("Caroline", "Melanie"), ("Joanna", "Nate"), ("Priya", "Tomas")]


def locomo(rng: random.Random) -> list[dict]:
    samples = []
    for s_i, (a, b) in enumerate(NAMES):
        conv: dict = {"speaker_a": a, "speaker_b": b}
        qa = []
        turn_no = 0
        facts: dict[tuple[str, str], list[str]] = {}
        topics = rng.sample(TOPICS, 6)
        for session in range(1, 5):
            turns = []
            conv[f"session_{session}_date_time"] = f"1:{10 + session}0 pm on {session} May, 2023"
            for speaker in (a, b, a, b, a, b):
                turn_no += 1
                dia = f"D{session}:{len(turns) + 1}"
                if rng.random() < 0.55 and topics:
                    name, template, _, values = topics[(turn_no + s_i) % len(topics)]
                    value = rng.choice(values)
                    text = template.format(v=value)
                    facts.setdefault((speaker, name), []).append(dia)
                    conv.setdefault("_values", {})[(speaker, name)] = value
                else:
                    text = rng.choice(SMALL_TALK)
                turns.append({"speaker": speaker, "dia_id": dia, "text": text})
            conv[f"session_{session}"] = turns
        values = conv.pop("_values", {})
        for (speaker, name), dias in sorted(facts.items()):
            topic = next(t for t in TOPICS if t[0] == name)
            qa.append(
                {
                    "question": topic[2].format(s=speaker),
                    "answer": values[(speaker, name)],
                    "evidence": dias[-2:],  # a changed fact: the last two statements
                    "category": 4 if len(dias) == 1 else 2,
                }
            )
        samples.append({"sample_id": f"conv-{s_i + 1}", "conversation": conv, "qa": qa})
    return samples


def longmemeval(rng: random.Random) -> list[dict]:
    items = []
    for q_i in range(12):
        topic = TOPICS[q_i % len(TOPICS)]
        value = rng.choice(topic[3])
        ids, sessions = [], []
        answer_at = rng.randrange(6)
        for k in range(6):
            sid = f"lme-{q_i}-s{k}"
            turns = [
                {"role": "user", "content": rng.choice(SMALL_TALK)},
                {"role": "assistant", "content": "Thanks for sharing, tell me more."},
            ]
            if k == answer_at:
                turns.insert(1, {"role": "user", "content": topic[1].format(v=value)})
            ids.append(sid)
            sessions.append(turns)
        items.append(
            {
                "question_id": f"lme-{q_i}",
                "question_type": "single-session-user",
                "question": topic[2].format(s="the user"),
                "answer": value,
                "haystack_session_ids": ids,
                "haystack_sessions": sessions,
                "answer_session_ids": [ids[answer_at]],
            }
        )
    return items


def main() -> None:
    rng = random.Random(SEED)
    OUT.mkdir(exist_ok=True)
    (OUT / "locomo_sample.json").write_text(json.dumps(locomo(rng), indent=1) + "\n")
    (OUT / "longmemeval_sample.json").write_text(json.dumps(longmemeval(rng), indent=1) + "\n")
    print(f"wrote {OUT / 'locomo_sample.json'} and {OUT / 'longmemeval_sample.json'}")


if __name__ == "__main__":
    main()
