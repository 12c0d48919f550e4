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

Every turn carries its session's date as `occurred_at` (noon UTC), and every question the
time it is asked in the dialogue's timeline (the evening of the first session after what
it asks about), its reference time (see also benchmarks/conversation_time.py).

Generated from a seed; no network.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

from benchmarks import conversation_words as words
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
    did: str = ""  # what they did, in the past tense: the anchor of an `anchored` question


EVENTS = [
    Event(
        "pet",
        "oh before I forget, we adopted a {species} on Saturday! the kids named her {pet}",
        "What is the name of {who}'s new {species}?",
        "When did {who} bring home the {species}?",
        "Does {who} have an animal at home?",
        "What are the names of {who}'s pets?",
        did="adopted the {species}",
    ),
    Event(
        "trip",
        "just got back from {city} on Sunday, the {sight} was unreal",
        "Which city did {who} visit to see the {sight}?",
        "When did {who} travel to {city}?",
        None,
        "Which cities has {who} traveled to?",
        did="traveled to {city}",
    ),
    Event(
        "instrument",
        "I finally started {instrument} lessons on Tuesdays, my fingers are killing me lol",
        "What musical instrument is {who} learning to play?",
        "When did {who} begin the {instrument} lessons?",
        "Would {who} enjoy going to a {genre} concert?",
        did="started the {instrument} lessons",
    ),
    Event(
        "race",
        "ran the {race} last weekend and finished in {time}, so proud",
        "How long did it take {who} to complete the {race}?",
        "When did {who} run the {race}?",
        "Is {who} into endurance sports?",
        "Which races has {who} taken part in?",
        did="ran the {race}",
    ),
    Event(
        "book",
        "I'm halfway through {book} right now, {friend} lent it to me and I can't put it down",
        "Which novel did {friend} lend to {who}?",
        "When was {who} reading {book}?",
        None,
        "What books has {who} read?",
        did="was reading {book}",
    ),
    Event(
        "job",
        "big news, I got the offer from {company}! starting as a {role} next month",
        "What position did {who} accept at the new employer?",
        "When did {who} get the job offer from {company}?",
        "Has {who} changed careers recently?",
        did="got the offer from {company}",
    ),
    Event(
        "class",
        "signed up for a {hobby} class at the community center, the teacher {teacher} is hilarious",
        "What is the name of the instructor of {who}'s {hobby} course?",
        "When did {who} start the {hobby} class?",
        "Does {who} have a creative hobby?",
        "What classes has {who} taken?",
        did="signed up for the {hobby} class",
    ),
    Event(
        "family",
        "my {relative} {relname} is flying in from {city2} next week, haven't seen them in ages",
        "Where does {who}'s {relative} live?",
        "When was {who}'s {relative} {relname} coming to visit?",
        did="heard that {relname} was flying in from {city2}",
    ),
    Event(
        "cooking",
        "made {dish} for dinner tonight using my grandma's recipe, the whole house smells amazing",
        "What did {who} cook from the grandmother's recipe?",
        "When did {who} make {dish}?",
        "Does {who} enjoy cooking?",
        did="made {dish}",
    ),
    Event(
        "injury",
        "twisted my ankle playing {sport} yesterday so I'm stuck on the couch",
        "How did {who} get hurt?",
        "When did {who} injure the ankle?",
        did="twisted the ankle playing {sport}",
    ),
    Event(
        "volunteer",
        "spent the morning volunteering at the {place}, sorting donations with {friend}",
        "Who helped {who} out at the {place}?",
        "When did {who} volunteer at the {place}?",
        "Does {who} do community service?",
        "Where has {who} volunteered?",
        did="volunteered at the {place}",
    ),
    Event(
        "concert",
        "saw {band} live at {venue} on Friday, I screamed so much I lost my voice",
        "Which band did {who} see perform at {venue}?",
        "When did {who} go to the {band} show?",
        None,
        "Which bands has {who} seen live?",
        did="saw {band} live",
    ),
    Event(
        "gift",
        "{friend} surprised me with a {gift} for my birthday, I almost cried",
        "What birthday present did {who} receive from {friend}?",
        "When is {who}'s birthday?",
        did="got the {gift} from {friend}",
    ),
    Event(
        "move",
        "we signed the lease on a place in {hood}, moving at the end of the month",
        "Which neighborhood is {who} relocating to?",
        "When did {who} sign the new lease?",
        "Is {who} moving house soon?",
        did="signed the lease in {hood}",
    ),
]


@dataclass(frozen=True)
class Language:
    """What a set's dialogues are made of, and how its lines and month questions read.
    `small_talk` keeps English's layout: [0:2] greetings, [2:20] fillers (of which 14 and
    15 answer a greeting, with 24 and 25), [20:24] goodbyes."""

    name: str
    people: list[str]
    events: list[Event]
    slots: dict[str, list[str]]
    genre: dict[str, str]
    small_talk: list[str]
    topic_chatter: dict[str, list[str]]
    reactions: list[str]
    follow_ups: list[str]
    openers: list[str]
    closers: list[str]
    line: Callable[[date, str, str], str]  # (day, speaker, text) -> the memory's text
    month_question: Callable[[str, date], str]  # (person, a day of the month)
    # the month questions asked two more ways (benchmarks/conversation_time.py): by the
    # month's name, and as "last month"
    month_name_question: Callable[[str, date], str]
    last_month_question: Callable[[str], str]
    # (person, what they did) -> "what did they do in the month after that?"
    anchored_question: Callable[[str, str], str]


ENGLISH = Language(
    "conversations",
    PEOPLE,
    EVENTS,
    words.SLOTS,
    words.GENRE,
    words.SMALL_TALK,
    words.TOPIC_CHATTER,
    words.REACTIONS,
    words.FOLLOW_UPS,
    words.OPENERS,
    words.CLOSERS,
    lambda day, who, text: f"[{day.day} {day:%B %Y}] {who}: {text}",
    lambda who, day: f"What did {who} do in {day:%B %Y}?",
    lambda who, day: f"What did {who} do in {day:%B}?",
    lambda who: f"What did {who} do last month?",
    lambda who, did: f"What did {who} do in the month after {who} {did}?",
)


@dataclass
class _Person:
    name: str
    events: list[tuple[Event, dict[str, str], str, date]] = field(default_factory=list)


def _fill(
    rng: random.Random, lang: Language, event: Event, taken: set[tuple[str, str]]
) -> dict[str, str]:
    slots: dict[str, str] = {}
    for name, options in lang.slots.items():
        if "{" + name + "}" not in event.said + event.ask + event.when + (event.infer or ""):
            continue
        free = [o for o in options if (name, o) not in taken] or options
        slots[name] = rng.choice(free)
        if name not in ("time", "relative", "friend", "teacher"):
            taken.add((name, slots[name]))
    if "instrument" in slots:
        slots["genre"] = lang.genre[slots["instrument"]]
    return slots


def _conversation(
    rng: random.Random, lang: Language, number: int, sessions: int, anchored: bool = False
) -> tuple[str, Dataset]:
    a, b = rng.sample(lang.people, 2)
    people = {a: _Person(a), b: _Person(b)}
    namespace = f"conv-{number}" if lang is ENGLISH else f"{lang.name}-{number}"
    small_talk = lang.small_talk
    data = Dataset()
    taken: set[tuple[str, str]] = set()
    day = date(2022, 1, 3) + timedelta(days=rng.randrange(400))
    days: list[date] = []
    for s in range(1, sessions + 1):
        day += timedelta(days=rng.choice([5, 7, 9, 12, 14, 18, 21]))
        days.append(day)
        turns: list[tuple[str, str]] = []
        speaker, other = (a, b) if rng.random() < 0.5 else (b, a)
        turns.append((speaker, rng.choice(small_talk[:2]).format(other=other)))
        turns.append((other, rng.choice(small_talk[14:16] + small_talk[24:26])))
        # each speaker brings up one thing (sometimes two), in passing
        for teller in rng.sample([a, b], 2) + ([rng.choice([a, b])] if rng.random() < 0.3 else []):
            listener = b if teller == a else a
            done = {e.kind for e, *_ in people[teller].events}
            # repeatable kinds come back; others happen once per person
            options = [e for e in lang.events if e.kind not in done or e.group]
            event = rng.choice(options)
            slots = _fill(rng, lang, event, taken)
            said = event.said.format(**slots)
            text = rng.choice(lang.openers) + said + rng.choice(lang.closers)
            turns.append((teller, text))
            people[teller].events.append((event, slots, f"D{s}:{len(turns)}", day))
            turns.append((listener, rng.choice(lang.reactions)))
            turns.append((teller, rng.choice(lang.follow_ups)))
            for line in rng.sample(lang.topic_chatter[event.kind], 2):
                turns.append((rng.choice([teller, listener]), line))
            for _ in range(rng.randrange(2, 5)):
                speaker = rng.choice([a, b])
                turns.append((speaker, rng.choice(small_talk[2:20]).format(other=listener)))
        while len(turns) < 21:
            turns.append((rng.choice([a, b]), rng.choice(small_talk[2:20]).format(other=a)))
        turns.append((a, rng.choice(small_talk[20:24]).format(other=b)))
        turns.append((b, rng.choice(small_talk[20:24]).format(other=a)))
        for t, (who, text) in enumerate(turns, start=1):
            data.observations.append(
                (namespace, f"D{s}:{t}", lang.line(day, who, text), "experience")
            )
            data.occurred[(namespace, f"D{s}:{t}")] = f"{day.isoformat()}T12:00:00+00:00"
    _questions(rng, lang, namespace, people, data, days)
    if anchored:  # after the others, and without the generator: they stay as they were
        data.questions.extend(_anchored(lang, namespace, people, days))
    return namespace, data


def _asked(days: list[date], after: date) -> str:
    """The evening of the first session after `after` (a week after the last session if
    none): when a question about it is asked."""
    later = [d for d in days if d > after]
    return f"{(later[0] if later else days[-1] + timedelta(days=7)).isoformat()}T18:00:00+00:00"


def month_end(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)


def _questions(
    rng: random.Random,
    lang: Language,
    namespace: str,
    people: dict[str, _Person],
    data: Dataset,
    days: list[date],
) -> None:
    asked: list[Question] = []
    for person in people.values():
        groups: dict[str, list[str]] = {}
        last: dict[str, date] = {}
        months: dict[str, list[str]] = {}
        month_ends: dict[str, date] = {}
        for event, slots, key, day in person.events:
            fill = {**slots, "who": person.name}
            at = _asked(days, day)
            asked.append(Question(namespace, event.ask.format(**fill), "single_hop", [key], at))
            if rng.random() < 0.6:
                text = event.when.format(**fill)
                asked.append(Question(namespace, text, "temporal", [key], at))
            if event.infer and rng.random() < 0.5:
                text = event.infer.format(**fill)
                asked.append(Question(namespace, text, "open_domain", [key], at))
            if event.group:
                group = event.group.format(who=person.name)
                groups.setdefault(group, []).append(key)
                last[group] = day
            months.setdefault(f"{day:%B %Y}", []).append(key)
            month_ends[f"{day:%B %Y}"] = month_end(day)
        for text, keys in groups.items():
            if len(keys) >= 2:
                asked.append(Question(namespace, text, "multi_hop", keys, _asked(days, last[text])))
        for month, keys in sorted(months.items()):
            if rng.random() < 0.5:
                text = lang.month_question(person.name, month_ends[month])
                at = _asked(days, month_ends[month])
                about = (person.name, month_ends[month])
                asked.append(Question(namespace, text, "temporal", keys, at, about))
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


def _anchored(
    lang: Language, namespace: str, people: dict[str, _Person], days: list[date]
) -> list[Question]:
    """ "What did Mia do in the month after Mia adopted the beagle?": the person's events
    in the month after the one named (from the next day), when there are any."""
    out = []
    for person in people.values():
        for event, slots, _, day in person.events:
            after = day + timedelta(days=1)
            end = (after.replace(day=min(after.day, 28)) + timedelta(days=31)).replace(
                day=min(after.day, 28)
            )
            gold = [key for _, _, key, d in person.events if after <= d < end]
            if not gold or not event.did:
                continue
            did = event.did.format(**slots)
            text = lang.anchored_question(person.name, did)
            out.append(Question(namespace, text, "anchored", gold, _asked(days, end)))
    return out[::4]  # a quarter of them: enough to measure, and the run stays short


def build(
    seed: int = 12,
    conversations: int = 10,
    sessions: int = 24,
    anchored: bool = False,
    lang: Language = ENGLISH,
) -> Dataset:
    """The set; with `anchored`, also the questions timed by another event (for
    benchmarks/conversation_time.py), which leave the rest unchanged."""
    rng = random.Random(seed)
    data = Dataset(lang.name)
    for number in range(conversations):
        _, conv = _conversation(rng, lang, number, sessions, anchored)
        data.observations.extend(conv.observations)
        data.questions.extend(conv.questions)
        data.occurred.update(conv.occurred)
    return data


def show(built: Dataset) -> None:
    """A set's size by question kind, its first turns and questions: to read it by eye."""
    kinds: dict[str, int] = {}
    for q in built.questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
    print(len(built.observations), "turns,", len(built.questions), "questions", kinds)
    for observation in built.observations[:30]:
        print(*observation)
    for q in built.questions[:20]:
        print(q)


if __name__ == "__main__":
    show(build())
