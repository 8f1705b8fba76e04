"""Generate the bundled memory-experiment samples (fixed seed): small files in the LoCoMo and
LongMemEval formats, so the memory experiment runs offline. The loaders
(``workbench.eval.load_locomo`` / ``load_longmemeval``) read the full public files the same way.

    python data/generate_memory.py        # writes data/memory/locomo_sample.json and
                                          # data/memory/longmemeval_sample.json
    python data/generate_memory.py --locomo-sized /tmp/locomo-sized.json

The LoCoMo sample comes from ``workbench.agents.memory.synthetic``: people disclose things in
exchanges among small talk, each session has per-speaker observations citing the turns and a
summary, and each question names the turns that hold its evidence. The LongMemEval sample: a
user states one fact in one of six sessions; each question asks for it.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from workbench.agents.memory import synthetic

OUT = Path(__file__).parent / "memory"
SEED = 20261201

SAMPLE_SIZES = ((24, 8), (24, 8), (24, 8))  # (turns, questions) per conversation
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--locomo-sized",
        metavar="PATH",
        help="also write a generated file the size of the published locomo10.json "
        "(5,882 turns, 1,986 questions) to PATH",
    )
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    sample = synthetic.locomo(SEED, SAMPLE_SIZES)
    (OUT / "locomo_sample.json").write_text(json.dumps(sample, indent=1) + "\n")
    items = longmemeval(random.Random(SEED))
    (OUT / "longmemeval_sample.json").write_text(json.dumps(items, indent=1) + "\n")
    print(f"wrote {OUT / 'locomo_sample.json'} and {OUT / 'longmemeval_sample.json'}")
    if args.locomo_sized:
        Path(args.locomo_sized).write_text(json.dumps(synthetic.locomo(SEED)) + "\n")
        print(f"wrote {args.locomo_sized}")


if __name__ == "__main__":
    main()
