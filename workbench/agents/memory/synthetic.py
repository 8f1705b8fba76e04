"""Generated conversations in the LoCoMo file format, for tests and benchmarks when the
published ``locomo10.json`` is not at hand (it is not shipped: its licence is not ours).

``locomo(seed, turns=[...], questions=[...])`` writes one sample per conversation with the
shape of the published file: ``conversation`` (``speaker_a``/``speaker_b``, ``session_N`` lists
of turns with ``dia_id``, ``session_N_date_time``), ``observation`` (per session, per speaker,
``[text, dia_id or dia_ids]``), ``session_summary`` and ``qa`` (``question``, ``answer``,
``evidence`` dia_ids, numeric ``category``; adversarial ones with ``adversarial_answer``).
``LOCOMO_SIZES`` are the published file's turns and questions per conversation (5,882 turns,
1,986 questions in all).

Like the real file, people disclose things in exchanges (one asks, the other answers in their
own words), the observations restate them in the words a question would use, and small talk
fills the sessions: a question's words are often not in the turn that answers it.
"""

from __future__ import annotations

import random
from typing import Any

LOCOMO_SIZES = (
    (419, 199),
    (369, 105),
    (663, 193),
    (629, 260),
    (680, 242),
    (675, 158),
    (689, 190),
    (681, 239),
    (509, 196),
    (568, 204),
)

# topic: (ask, answer, observation, question, when-question, values)
TOPICS: list[tuple[str, str, str, str, str, list[str]]] = [
    (
        "Any new animals at your place?",
        "Yes! We brought home a little {v}, it sleeps on my desk all day.",
        "{s} adopted a {v} as a pet.",
        "What pet did {s} adopt?",
        "When did {s} adopt the {v}?",
        ["beagle", "tabby cat", "parrot", "tortoise", "hamster", "ferret", "corgi", "rabbit"],
    ),
    (
        "Still living in the old flat?",
        "No, we packed everything up and we are in {v} now, the rent is lower.",
        "{s} moved to the city of {v}.",
        "Which city did {s} move to?",
        "When did {s} move to {v}?",
        ["Lisbon", "Utrecht", "Porto", "Tallinn", "Bergen", "Ghent", "Turku", "Graz"],
    ),
    (
        "How is work treating you?",
        "I switched over, I am a {v} at the clinic now and I love it.",
        "{s} started a new job as a {v}.",
        "What is {s}'s new job?",
        "When did {s} start working as a {v}?",
        ["radiographer", "pharmacist", "nurse", "lab technician", "dietitian", "midwife"],
    ),
    (
        "What do you get up to on Saturdays lately?",
        "My neighbour got me into {v}, I am hooked.",
        "{s} is learning {v} as a weekend hobby.",
        "What hobby is {s} learning on weekends?",
        "When did {s} take up {v}?",
        ["pottery", "bouldering", "watercolours", "salsa", "woodworking", "archery"],
    ),
    (
        "Cooking anything good these days?",
        "{V}! I make it every Friday and the kids clear their plates.",
        "{s}'s favourite dish to cook is {v}.",
        "What dish does {s} like to cook?",
        "When did {s} start cooking {v}?",
        ["shakshuka", "risotto", "pad thai", "lentil soup", "bibimbap", "paella"],
    ),
    (
        "Any plans for the holidays?",
        "Flying out to {v} next month, my cousin is getting married there.",
        "{s} is travelling to {v} for a family wedding.",
        "Where is {s} travelling for the wedding?",
        "When is {s} going to {v}?",
        ["Nairobi", "Osaka", "Montreal", "Reykjavik", "Santiago", "Hanoi", "Tbilisi"],
    ),
    (
        "Read anything lately?",
        "Just got through {v}, could not put it down.",
        "{s} finished reading the book {v}.",
        "Which book did {s} finish reading?",
        "When did {s} read {v}?",
        ["Piranesi", "Middlemarch", "Kindred", "Solaris", "Beloved", "Stoner", "Ubik"],
    ),
    (
        "How do you get around now?",
        "Sold the old van and picked up a {v}.",
        "{s} bought a {v} as a new vehicle.",
        "What vehicle did {s} buy?",
        "When did {s} get the {v}?",
        ["cargo bike", "hatchback", "scooter", "camper", "road bike", "tandem"],
    ),
    (
        "Still making music?",
        "I dusted off my {v}, practising every night after dinner.",
        "{s} plays the {v} as an instrument.",
        "What instrument does {s} play?",
        "When did {s} go back to the {v}?",
        ["cello", "banjo", "ukulele", "trumpet", "harmonica", "accordion", "oboe"],
    ),
    (
        "Keeping fit?",
        "I signed up with a {v} club, training twice a week.",
        "{s} joined a {v} club for sport.",
        "What sport does {s} train for?",
        "When did {s} join the {v} club?",
        ["rowing", "fencing", "judo", "netball", "curling", "handball", "squash"],
    ),
    (
        "Studying anything on the side?",
        "Evening classes in {v}, Tuesdays and Thursdays.",
        "{s} is taking a course in {v}.",
        "What course is {s} taking?",
        "When did {s} start the {v} course?",
        ["astronomy", "bookkeeping", "Portuguese", "welding", "botany", "statistics"],
    ),
    (
        "Did you get spoiled on your birthday?",
        "My sister surprised me with a {v}, so thoughtful.",
        "{s} received a {v} as a birthday gift.",
        "What birthday gift did {s} receive?",
        "When did {s} receive the {v}?",
        ["telescope", "espresso machine", "kayak", "record player", "sewing machine"],
    ),
    (
        "Busy with anything besides work?",
        "I help out at the {v} on Sundays, it keeps me grounded.",
        "{s} volunteers at the {v}.",
        "Where does {s} volunteer?",
        "When did {s} begin helping at the {v}?",
        ["food bank", "animal shelter", "library", "youth centre", "community garden"],
    ),
    (
        "Go out at all last week?",
        "Saw {v} live, front row, my ears are still ringing.",
        "{s} went to a concert by {v}.",
        "Which band did {s} see in concert?",
        "When did {s} see {v}?",
        ["Khruangbin", "Wilco", "Phoenix", "Beirut", "Low", "Spoon", "Stereolab"],
    ),
    (
        "How is the garden coming along?",
        "The {v} finally came up this year, loads of them.",
        "{s} grows {v} in the garden.",
        "What does {s} grow in the garden?",
        "When did {s}'s {v} come up?",
        ["tomatoes", "dahlias", "courgettes", "sunflowers", "strawberries", "peonies"],
    ),
    (
        "Watched anything good?",
        "{V}, twice in one week, no regrets.",
        "{s} watched the film {v}.",
        "Which film did {s} watch?",
        "When did {s} watch {v}?",
        ["Paterson", "Aftersun", "Amelie", "Stalker", "Columbus", "Nomadland"],
    ),
]

SMALL_TALK = [
    "Haha, that sounds like a long week.",
    "The weather has been strange lately, sunny then rain again.",
    "Did you catch the match on Sunday?",
    "I need more coffee before I can think about any of that.",
    "My phone keeps running out of battery by lunchtime.",
    "We should catch up properly soon.",
    "Work has been busy but manageable, honestly.",
    "I made far too much tea again this morning.",
    "The neighbours are renovating, the drilling never stops.",
    "I finally cleaned out the garage, found so much junk.",
    "Traffic was terrible on the way home yesterday.",
    "I keep forgetting to water the plants on the balcony.",
    "That made me laugh, thanks for sharing it.",
    "So good to hear from you, it has been a while!",
    "I slept badly, the heat kept me up all night.",
    "We ordered takeaway three times this week, oops.",
    "The kids have a school play coming up soon.",
    "I am trying to spend less time on my phone.",
    "Honestly the days are flying by at the moment.",
    "I could not agree more, take care of yourself.",
]
NAMES = [
    ("Caroline", "Melanie"),
    ("Jon", "Gina"),
    ("John", "Maria"),
    ("Joanna", "Nate"),
    ("Tim", "John"),
    ("Audrey", "Andrew"),
    ("James", "John"),
    ("Deborah", "Jolene"),
    ("Evan", "Sam"),
    ("Calvin", "Dave"),
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip


def _conversation(rng: random.Random, index: int, turns: int, questions: int) -> dict[str, Any]:
    a, b = NAMES[index % len(NAMES)]
    conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
    observation: dict[str, Any] = {}
    summaries: dict[str, str] = {}
    disclosed: list[dict[str, Any]] = []  # what was said, by whom, where
    made = 0
    session = 0
    while made < turns:
        session += 1
        key = f"session_{session}"
        day, month = 1 + (session * 7) % 28, MONTHS[(session + index) % 12]
        date = f"{1 + session % 12}:{10 + session % 50:02d} pm on {day} {month}, 2023"
        conv[f"{key}_date_time"] = date
        size = min(turns - made, rng.randint(14, 30))
        exchanges = min(size // 4, rng.randint(2, 4))
        items = ["exchange"] * exchanges + ["talk"] * (size - 2 * exchanges)
        rng.shuffle(items)
        out: list[dict[str, Any]] = []
        obs: dict[str, list[list[Any]]] = {a: [], b: []}
        told: list[str] = []
        speakers = (a, b) if session % 2 else (b, a)
        for item in items:
            who = speakers[len(out) % 2]
            dia = f"D{session}:{len(out) + 1}"
            if item == "talk":
                out.append({"speaker": who, "dia_id": dia, "text": rng.choice(SMALL_TALK)})
                continue
            topic = rng.randrange(len(TOPICS))
            ask, answer, note, _, _, values = TOPICS[topic]
            teller = speakers[(len(out) + 1) % 2]
            v = rng.choice(values)
            reply = f"D{session}:{len(out) + 2}"
            out.append({"speaker": who, "dia_id": dia, "text": ask})
            text = answer.replace("{V}", v[0].upper() + v[1:]).replace("{v}", v)
            out.append({"speaker": teller, "dia_id": reply, "text": text})
            # like the published file, an observation now and then cites two turns
            cites: Any = reply if rng.random() < 0.9 else [dia, reply]
            said = note.format(s=teller, v=v)
            obs[teller].append([said, cites])
            told.append(said)
            disclosed.append(
                {"who": teller, "other": who, "topic": topic, "v": v, "dia": reply, "date": date}
            )
        conv[key] = out
        made += len(out)
        observation[f"{key}_observation"] = {k: v for k, v in obs.items() if v}
        summaries[f"{key}_summary"] = " ".join(
            [f"{a} and {b} caught up on {date}.", *told]
            if told
            else [f"{a} and {b} made small talk on {date}."]
        )
    return {
        "sample_id": f"conv-{index + 1}",
        "conversation": conv,
        "qa": _questions(rng, disclosed, questions),
        "observation": observation,
        "session_summary": summaries,
    }


def _questions(rng: random.Random, said: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` questions over what was disclosed, in the published file's category mix."""
    out: list[dict[str, Any]] = []
    if not said:
        return out
    latest: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for d in said:
        latest.setdefault((d["who"], d["topic"]), []).append(d)
    weights = [(4, 42), (5, 22), (2, 16), (1, 14), (3, 6)]
    cats = [c for c, w in weights for _ in range(w)]
    while len(out) < n:
        d = rng.choice(said)
        _, _, _, ask, when, _ = TOPICS[d["topic"]]
        cat = rng.choice(cats)
        history = latest[(d["who"], d["topic"])]
        if cat == 4:
            last = history[-1]
            ev = [x["dia"] for x in history[-2:]] if len(history) > 1 else [last["dia"]]
            out.append(
                {
                    "question": ask.format(s=d["who"]),
                    "answer": last["v"],
                    "evidence": ev,
                    "category": 4,
                }
            )
        elif cat == 2:
            out.append(
                {
                    "question": when.format(s=d["who"], v=d["v"]),
                    "answer": d["date"],
                    "evidence": [d["dia"]],
                    "category": 2,
                }
            )
        elif cat == 5:
            out.append(
                {
                    "question": ask.format(s=d["other"]),
                    "evidence": [d["dia"]],
                    "category": 5,
                    "adversarial_answer": d["v"],
                }
            )
        elif cat == 1:
            e = rng.choice(said)
            out.append(
                {
                    "question": f"{ask.format(s=d['who'])[:-1]}, and "
                    f"{TOPICS[e['topic']][3].format(s=e['who'])[0].lower()}"
                    f"{TOPICS[e['topic']][3].format(s=e['who'])[1:]}",
                    "answer": f"{d['v']}; {e['v']}",
                    "evidence": [d["dia"], e["dia"]],
                    "category": 1,
                }
            )
        else:
            out.append(
                {
                    "question": f"Would {d['who']} enjoy talking about {d['v']}?",
                    "answer": "Yes",
                    "evidence": [d["dia"]],
                    "category": 3,
                }
            )
    return out


def locomo(
    seed: int = 20261201,
    sizes: tuple[tuple[int, int], ...] = LOCOMO_SIZES,
) -> list[dict[str, Any]]:
    """Conversations in the LoCoMo format: one per (turns, questions) in ``sizes``."""
    rng = random.Random(seed)
    return [_conversation(rng, i, t, q) for i, (t, q) in enumerate(sizes)]
