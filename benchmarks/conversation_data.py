"""A retrieval evaluation shaped like real conversations: two people chatting over months.

Each conversation is a namespace: two friends, 24 sessions a week or three apart, about 23
turns a session, and every turn observed as one memory (`D<session>:<turn>` ->
`[<date>] <speaker>: <text>`), the way a client that keeps whole dialogues stores them. The
evidence is a turn said in passing ("ugh, long week. oh — we adopted a beagle on Saturday,
named her Biscuit!"), surrounded by small talk that is near-identical from session to
session ("haha, so true!", "take care, talk soon!") and by chatter on the same topics that
answers nothing ("dogs are the best honestly"). Both friends do the same kinds of things
with different details, so a question must find the right person's turn.

Questions, each with the keys of the turns that answer it:
- `single_hop`: one turn, asked in other words than it was said;
- `multi_hop`: several turns from different sessions ("which cities has Mia visited?");
- `temporal`: when something happened ("when did Mia adopt the beagle?") or what someone
  did in a month ("what did Mia do in May 2023?");
- `open_domain`: an inference from what was said ("would Mia enjoy a string quartet?").

Generated from a seed; no network.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from benchmarks.eval_set import Dataset, Question

PEOPLE = """Caroline Melanie Jon Gina Nate Joanna Tim John Audrey Andrew Evan Sam Maria Deborah
Calvin Dave Jolene James Hana Omar Priya Lukas Ines Tomas""".split()


@dataclass(frozen=True)
class Event:
    """Something a person did, how they mention it, and what one may ask about it."""

    kind: str
    said: str  # the evidence, with {slots}
    ask: str  # single-hop question, in other words
    when: str  # temporal question
    infer: str | None = None  # open-domain question
    group: str | None = None  # multi-hop question over every event of this kind


EVENTS = [
    Event(
        "pet",
        "oh before I forget, we adopted a {species} on Saturday! the kids named her {pet}",
        "What is the name of {who}'s new {species}?",
        "When did {who} bring home the {species}?",
        "Does {who} have an animal at home?",
        "What are the names of {who}'s pets?",
    ),
    Event(
        "trip",
        "just got back from {city} on Sunday, the {sight} was unreal",
        "Which city did {who} visit to see the {sight}?",
        "When did {who} travel to {city}?",
        None,
        "Which cities has {who} traveled to?",
    ),
    Event(
        "instrument",
        "I finally started {instrument} lessons on Tuesdays, my fingers are killing me lol",
        "What musical instrument is {who} learning to play?",
        "When did {who} begin the {instrument} lessons?",
        "Would {who} enjoy going to a {genre} concert?",
    ),
    Event(
        "race",
        "ran the {race} last weekend and finished in {time}, so proud",
        "How long did it take {who} to complete the {race}?",
        "When did {who} run the {race}?",
        "Is {who} into endurance sports?",
        "Which races has {who} taken part in?",
    ),
    Event(
        "book",
        "I'm halfway through {book} right now, {friend} lent it to me and I can't put it down",
        "Which novel did {friend} lend to {who}?",
        "When was {who} reading {book}?",
        None,
        "What books has {who} read?",
    ),
    Event(
        "job",
        "big news, I got the offer from {company}! starting as a {role} next month",
        "What position did {who} accept at the new employer?",
        "When did {who} get the job offer from {company}?",
        "Has {who} changed careers recently?",
    ),
    Event(
        "class",
        "signed up for a {hobby} class at the community center, the teacher {teacher} is hilarious",
        "What is the name of the instructor of {who}'s {hobby} course?",
        "When did {who} start the {hobby} class?",
        "Does {who} have a creative hobby?",
        "What classes has {who} taken?",
    ),
    Event(
        "family",
        "my {relative} {relname} is flying in from {city2} next week, haven't seen them in ages",
        "Where does {who}'s {relative} live?",
        "When was {who}'s {relative} {relname} coming to visit?",
    ),
    Event(
        "cooking",
        "made {dish} for dinner tonight using my grandma's recipe, the whole house smells amazing",
        "What did {who} cook from the grandmother's recipe?",
        "When did {who} make {dish}?",
        "Does {who} enjoy cooking?",
    ),
    Event(
        "injury",
        "twisted my ankle playing {sport} yesterday so I'm stuck on the couch",
        "How did {who} get hurt?",
        "When did {who} injure the ankle?",
    ),
    Event(
        "volunteer",
        "spent the morning volunteering at the {place}, sorting donations with {friend}",
        "Who helped {who} out at the {place}?",
        "When did {who} volunteer at the {place}?",
        "Does {who} do community service?",
        "Where has {who} volunteered?",
    ),
    Event(
        "concert",
        "saw {band} live at {venue} on Friday, I screamed so much I lost my voice",
        "Which band did {who} see perform at {venue}?",
        "When did {who} go to the {band} show?",
        None,
        "Which bands has {who} seen live?",
    ),
    Event(
        "gift",
        "{friend} surprised me with a {gift} for my birthday, I almost cried",
        "What birthday present did {who} receive from {friend}?",
        "When is {who}'s birthday?",
    ),
    Event(
        "move",
        "we signed the lease on a place in {hood}, moving at the end of the month",
        "Which neighborhood is {who} relocating to?",
        "When did {who} sign the new lease?",
        "Is {who} moving house soon?",
    ),
]

SLOTS: dict[str, list[str]] = {
    "species": "beagle;tabby cat;corgi;parakeet;rabbit;golden retriever;turtle;husky;"
    "hamster;dachshund".split(";"),
    "pet": "Biscuit;Luna;Pepper;Mochi;Olive;Maple;Juniper;Clementine;Pickles;Hazel;Nugget;"
    "Poppy;Ziggy;Waffles;Bean;Sunny".split(";"),
    "city": "Lisbon;Kyoto;Reykjavik;Marrakesh;Vancouver;Prague;Cusco;Hanoi;Edinburgh;Seville;"
    "Tbilisi;Oaxaca;Bergen;Havana;Istanbul;Dubrovnik".split(";"),
    "sight": "old cathedral;night market;harbor at sunset;mountain gondola;castle on the hill;"
    "street food;botanical garden;hot springs;river cruise;tiled palace".split(";"),
    "instrument": "cello;violin;ukulele;saxophone;drums;piano;banjo;trumpet;flute;harp".split(";"),
    "race": "city half marathon;Trail 10K;charity 5K;river marathon;harbor fun run;"
    "mountain trail race;Turkey Trot;color run".split(";"),
    "time": "1:52;48 minutes;27 minutes;4:05;2:10;55 minutes;3:38;31 minutes".split(";"),
    "book": "The Night Circus;Project Hail Mary;Pachinko;Circe;The Overstory;Educated;"
    "Klara and the Sun;Station Eleven;The Midnight Library;Normal People;Dune;"
    "Where the Crawdads Sing".split(";"),
    "company": "Brightwave;Northwind Labs;Acme Health;Globex;Pinecone Studio;Helios Energy;"
    "Bluebird Bank;Orbit Logistics".split(";"),
    "role": "product designer;nurse practitioner;data analyst;sous chef;project manager;"
    "school counselor;sales lead;UX researcher".split(";"),
    "hobby": "pottery;watercolor;woodworking;salsa dance;photography;calligraphy;"
    "improv comedy;stained glass".split(";"),
    "relative": "sister;brother;cousin;aunt;grandpa;niece".split(";"),
    "relname": "Rosa;Dmitri;Keiko;Amara;Felix;Ingrid;Tariq;Lucia;Bram;Nadia".split(";"),
    "city2": "Denver;Glasgow;Nairobi;Osaka;Toronto;Porto;Melbourne;Krakow;Austin;Dublin".split(";"),
    "dish": "chicken tikka masala;lasagna;pierogi;paella;pho;shepherd's pie;jollof rice;"
    "ratatouille;beef stew;dumplings".split(";"),
    "sport": "volleyball;soccer;basketball;tennis;badminton;pickleball;frisbee".split(";"),
    "place": "food bank;animal shelter;homeless shelter;children's hospital;library book sale;"
    "community garden;senior center".split(";"),
    "friend": "Becca;Marcus;Lena;Tom;Priscilla;Kwame;Jess;Viktor".split(";"),
    "band": "Arctic Monkeys;Fleetwood Mac tribute band;Coldplay;Florence and the Machine;"
    "Vampire Weekend;Hozier;The Lumineers;Phoebe Bridgers".split(";"),
    "gift": "vintage record player;handmade quilt;telescope;espresso machine;silver necklace;"
    "polaroid camera;pair of hiking boots".split(";"),
    "teacher": "Marco;Dolores;Yusuf;Greta;Ollie;Sunita;Pierre;Wanda".split(";"),
    "venue": "the Roxy;Red Rocks;the Fillmore;Madison Square Garden;the Hollywood Bowl;"
    "the O2 Arena;the Paradiso;the Ryman".split(";"),
    "hood": "Maple Heights;the Old Town;Riverside;Cedar Park;Westbrook;Harbor View;Elm Grove".split(
        ";"
    ),
}
GENRE = {
    "cello": "classical",
    "violin": "classical",
    "ukulele": "folk",
    "saxophone": "jazz",
    "drums": "rock",
    "piano": "classical",
    "banjo": "bluegrass",
    "trumpet": "jazz",
    "flute": "classical",
    "harp": "classical",
}

# Turns that answer nothing: greetings, reactions, sign-offs — near-identical across sessions.
SMALL_TALK = [
    "hey {other}! how have you been?",
    "hi {other}, long time no talk!",
    "haha, so true!",
    "omg that's amazing, I'm so happy for you!",
    "wow, that sounds like a lot. hang in there",
    "yeah totally, I feel the same way",
    "that's so cool {other}!",
    "lol same here",
    "aww, that's sweet",
    "thanks {other}, that means a lot",
    "I know right?? crazy week",
    "good for you, seriously",
    "hmm, I hadn't thought of it like that",
    "anyway, enough about me, what's new with you?",
    "not much, just the usual work stuff honestly",
    "it's been pretty quiet on my end",
    "ha, I can imagine!",
    "you deserve it!",
    "ugh, Mondays, am I right",
    "sounds like a plan!",
    "take care {other}, talk soon!",
    "bye {other}! catch up soon",
    "have a great weekend!",
    "miss you, let's talk again soon",
    "I'm doing well, thanks for asking!",
    "same old, same old haha",
    "that's wild, tell me more",
    "oh nice, how did that go?",
    "so exciting!!",
    "love that for you",
]

# Chatter on an event's topic that answers no question about it.
TOPIC_CHATTER = {
    "pet": ["animals make everything better honestly", "I've always wanted a pet of my own"],
    "trip": ["I really need a vacation too", "traveling always recharges me"],
    "instrument": ["music is such a good outlet", "I played something as a kid but gave up"],
    "race": ["running is so hard for me, respect", "I keep saying I'll start jogging"],
    "book": ["I need a good book recommendation", "I haven't read anything in months lol"],
    "job": ["work has been so stressful lately", "new jobs are scary but exciting"],
    "class": ["I love trying new hobbies", "classes are a great way to meet people"],
    "family": ["family visits are the best", "I should call my family more often"],
    "cooking": ["I'm such a bad cook haha", "homemade food just hits different"],
    "injury": ["oh no, hope you feel better soon!", "rest up and take it easy"],
    "volunteer": ["that's so kind of you", "I've been meaning to volunteer somewhere"],
    "concert": ["live music is the best feeling", "I haven't been to a concert in forever"],
    "gift": ["happy belated birthday!!", "that's such a thoughtful present"],
    "move": ["moving is so stressful", "new neighborhood, new adventures!"],
}
REACTIONS = [
    "wait really? tell me everything",
    "no way, that's awesome",
    "oh wow, how was it?",
    "that's huge!",
]
FOLLOW_UPS = [
    "yeah it was honestly the highlight of my month",
    "still can't believe it tbh",
    "I'll send you pictures later",
    "it was a lot but so worth it",
]
OPENERS = ["ugh, long week. ", "so, ", "", "okay random update: ", "oh hey! "]
CLOSERS = ["", ". anyway, how are you?", ". what have you been up to?", ". life is good lol"]


@dataclass
class _Person:
    name: str
    events: list[tuple[Event, dict[str, str], str, date]] = field(default_factory=list)


def _fill(rng: random.Random, event: Event, taken: set[tuple[str, str]]) -> dict[str, str]:
    slots: dict[str, str] = {}
    for name, options in SLOTS.items():
        if "{" + name + "}" not in event.said + event.ask + event.when + (event.infer or ""):
            continue
        free = [o for o in options if (name, o) not in taken] or options
        slots[name] = rng.choice(free)
        if name not in ("time", "relative", "friend", "teacher"):
            taken.add((name, slots[name]))
    if "instrument" in slots:
        slots["genre"] = GENRE[slots["instrument"]]
    return slots


def _conversation(rng: random.Random, number: int, sessions: int) -> tuple[str, Dataset]:
    a, b = rng.sample(PEOPLE, 2)
    people = {a: _Person(a), b: _Person(b)}
    namespace = f"conv-{number}"
    data = Dataset()
    taken: set[tuple[str, str]] = set()
    day = date(2022, 1, 3) + timedelta(days=rng.randrange(400))
    for s in range(1, sessions + 1):
        day += timedelta(days=rng.choice([5, 7, 9, 12, 14, 18, 21]))
        stamp = f"{day.day} {day:%B %Y}"
        turns: list[tuple[str, str]] = []
        speaker, other = (a, b) if rng.random() < 0.5 else (b, a)
        turns.append((speaker, rng.choice(SMALL_TALK[:2]).format(other=other)))
        turns.append((other, rng.choice(SMALL_TALK[14:16] + SMALL_TALK[24:26])))
        # each speaker brings up one thing (sometimes two), in passing
        for teller in rng.sample([a, b], 2) + ([rng.choice([a, b])] if rng.random() < 0.3 else []):
            listener = b if teller == a else a
            done = {e.kind for e, *_ in people[teller].events}
            # repeatable kinds come back; others happen once per person
            options = [e for e in EVENTS if e.kind not in done or e.group]
            event = rng.choice(options)
            slots = _fill(rng, event, taken)
            text = rng.choice(OPENERS) + event.said.format(**slots) + rng.choice(CLOSERS)
            turns.append((teller, text))
            people[teller].events.append((event, slots, f"D{s}:{len(turns)}", day))
            turns.append((listener, rng.choice(REACTIONS)))
            turns.append((teller, rng.choice(FOLLOW_UPS)))
            for line in rng.sample(TOPIC_CHATTER[event.kind], 2):
                turns.append((rng.choice([teller, listener]), line))
            for _ in range(rng.randrange(2, 5)):
                speaker = rng.choice([a, b])
                turns.append((speaker, rng.choice(SMALL_TALK[2:20]).format(other=listener)))
        while len(turns) < 21:
            turns.append((rng.choice([a, b]), rng.choice(SMALL_TALK[2:20]).format(other=a)))
        turns.append((a, rng.choice(SMALL_TALK[20:24]).format(other=b)))
        turns.append((b, rng.choice(SMALL_TALK[20:24]).format(other=a)))
        for t, (who, text) in enumerate(turns, start=1):
            data.observations.append(
                (namespace, f"D{s}:{t}", f"[{stamp}] {who}: {text}", "experience")
            )
    _questions(rng, namespace, people, data)
    return namespace, data


def _questions(
    rng: random.Random, namespace: str, people: dict[str, _Person], data: Dataset
) -> None:
    asked: list[Question] = []
    for person in people.values():
        groups: dict[str, list[str]] = {}
        months: dict[str, list[str]] = {}
        for event, slots, key, day in person.events:
            fill = {**slots, "who": person.name}
            asked.append(Question(namespace, event.ask.format(**fill), "single_hop", [key]))
            if rng.random() < 0.6:
                asked.append(Question(namespace, event.when.format(**fill), "temporal", [key]))
            if event.infer and rng.random() < 0.5:
                asked.append(Question(namespace, event.infer.format(**fill), "open_domain", [key]))
            if event.group:
                groups.setdefault(event.group.format(who=person.name), []).append(key)
            months.setdefault(f"{day:%B %Y}", []).append(key)
        for text, keys in groups.items():
            if len(keys) >= 2:
                asked.append(Question(namespace, text, "multi_hop", keys))
        for month, keys in sorted(months.items()):
            if rng.random() < 0.5:
                text = f"What did {person.name} do in {month}?"
                asked.append(Question(namespace, text, "temporal", keys))
    # an open-domain question whose answer several events share ("does X have an animal")
    # is asked once, with every such event as evidence
    merged: dict[str, Question] = {}
    for q in asked:
        if q.text in merged:
            merged[q.text].gold.extend(k for k in q.gold if k not in merged[q.text].gold)
        else:
            merged[q.text] = q
    questions = list(merged.values())
    rng.shuffle(questions)
    data.questions.extend(questions)


def build(seed: int = 12, conversations: int = 10, sessions: int = 24) -> Dataset:
    rng = random.Random(seed)
    data = Dataset("conversations")
    for number in range(conversations):
        _, conv = _conversation(rng, number, sessions)
        data.observations.extend(conv.observations)
        data.questions.extend(conv.questions)
    return data


if __name__ == "__main__":
    built = build()
    kinds: dict[str, int] = {}
    for q in built.questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
    print(len(built.observations), "turns,", len(built.questions), "questions", kinds)
    for observation in built.observations[:30]:
        print(*observation)
    for q in built.questions[:20]:
        print(q)
