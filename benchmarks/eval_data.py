"""A retrieval evaluation set: one user's memories from many sessions, and questions with
their gold evidence.

The memories are what an extraction step would keep from months of conversations with
"Alex": people and how they relate to Alex, where they live and what they do, birthdays,
preferences that changed over time (each observed in several sessions, the last value
wins), appointments with dates and times, work projects, health constraints, lessons
learned. Around them sit thousands of distractors: other people's facts, other projects
and events, everyday notes.

Questions come in four kinds, so the arms can be compared where each should shine:
- `lexical`: shares its rare words (names, dates) with the answer;
- `paraphrase`: asks in other words ("who is my boss" for "Alex's manager is ...");
- `two_hop`: needs two memories ("which city does my sister live in");
- `temporal`: asks for the current value of something that changed over time.
Every question lists the memory keys it needs (its gold evidence).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FIRST = """Maria Liam Noah Olivia Emma Ava Sophia Mia Lucas Ethan Mason Logan Ella Chloe Zoe
Nora Leah Ivy Hugo Felix Oscar Arthur Leo Theo Jonas Elias Ingrid Sigrid Astrid Freya
Priya Arjun Ravi Anika Mei Hiro Yuki Kenji Sana Omar Layla Amir Zara Tariq Nadia Pablo
Lucia Diego Sofia Mateo Elena Ivan Olga Dmitri Anya Kofi Amara Tunde Zainab""".split()
LAST = """Lopez Smith Chen Patel Nguyen Kim Larsen Berg Haugen Dahl Moreau Rossi Schmidt Novak
Kowalski Silva Costa Okafor Mensah Tanaka Sato Ivanova Petrov Haddad Khan Shah Murphy
Kelly Walsh Byrne Fischer Weber Meyer Jansen Bakker Lindqvist Nilsen Andersen Holm""".split()
CITIES = """Lyon Oslo Bergen Porto Lisbon Kyoto Osaka Denver Austin Toronto Dublin Vienna
Prague Krakow Turin Bologna Seville Valencia Malmo Aarhus Tampere Gdansk Ghent Utrecht
Leeds Bristol Glasgow Quebec Halifax Hobart Perth Nairobi Accra Lagos Marrakesh Tbilisi
Yerevan Hanoi Busan Taipei""".split()
JOBS = [
    "pediatric nurse",
    "civil engineer",
    "primary school teacher",
    "tax accountant",
    "veterinarian",
    "pastry chef",
    "firefighter",
    "marine biologist",
    "architect",
    "bus driver",
    "software tester",
    "pharmacist",
    "carpenter",
    "airline pilot",
    "museum curator",
    "dentist",
    "journalist",
    "electrician",
    "physiotherapist",
    "librarian",
    "court interpreter",
    "landscape gardener",
    "sound engineer",
    "structural welder",
    "data analyst",
    "midwife",
    "travel agent",
    "locksmith",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

# relation -> (paraphrased question asking who it is)
RELATIONS = {
    "sister": "Who is my female sibling?",
    "brother": "What's the name of my male sibling?",
    "mother": "What is my mom called?",
    "father": "Who is my dad?",
    "best friend": "Who is my closest buddy?",
    "partner": "Who am I in a relationship with?",
    "manager": "Who is my boss at work?",
    "dentist": "Which person looks after my teeth?",
    "landlord": "Who do I pay rent to?",
    "neighbour": "Who lives next door to me?",
    "personal trainer": "Who coaches me at the gym?",
    "accountant": "Who does my taxes?",
}

# preference -> (history of values, oldest first; paraphrased question; lexical question)
PREFERENCES = {
    "favorite cuisine": (
        [
            "Italian food, mostly pasta",
            "Mexican food, tacos above all",
            "Thai food, especially green curry",
        ],
        "What kind of cooking do I enjoy most these days?",
        "Which cuisine is my favorite?",
    ),
    "music taste": (
        ["classic rock", "jazz piano trios", "Afrobeat and highlife"],
        "What sort of songs am I into lately?",
        "What music do I listen to?",
    ),
    "coffee order": (
        ["flat white", "double espresso", "oat milk cortado"],
        "How do I take my caffeine in the morning?",
        "What is my coffee order?",
    ),
    "running goal": (
        ["a 5 km race", "a 10 km race under 50 minutes", "a half marathon in spring"],
        "What am I training towards with my jogging?",
        "What is my running goal?",
    ),
    "reading genre": (
        ["historical novels", "science fiction", "narrative nonfiction about science"],
        "Which books do I pick up these days?",
        "What genre do I read?",
    ),
    "preferred airline": (
        ["KLM", "Norwegian", "SAS"],
        "Which carrier do I like to fly with?",
        "What is my preferred airline?",
    ),
    "code editor": (
        ["Sublime Text", "VS Code", "Neovim"],
        "What program do I write software in?",
        "Which code editor do I use?",
    ),
    "phone": (
        ["an iPhone 12", "a Pixel 7", "a Fairphone 5"],
        "What mobile device do I carry?",
        "What phone do I have?",
    ),
    "seat preference": (
        ["window seat", "middle seat if travelling with family", "aisle seat"],
        "Where do I like to sit on a plane?",
        "What is my seat preference?",
    ),
    "tea": (
        ["English breakfast", "sencha green tea", "rooibos with honey"],
        "Which hot infusion do I drink in the afternoon?",
        "What tea do I like?",
    ),
    "workout time": (
        ["late evenings", "lunch breaks", "early mornings before work"],
        "When in the day do I exercise?",
        "When do I work out?",
    ),
    "holiday style": (
        ["beach resorts", "city breaks", "hiking in the mountains"],
        "What kind of vacations do I go for now?",
        "What holiday style do I like?",
    ),
}

HEALTH = [
    (
        "user.allergy",
        "Alex is allergic to peanuts and carries an EpiPen",
        "Is there anything I must never eat?",
        "What am I allergic to?",
    ),
    (
        "user.diet",
        "Alex eats pescatarian: fish is fine, no other meat",
        "Do I eat meat?",
        "What diet do I follow?",
    ),
    (
        "user.medication",
        "Alex takes 10 mg of cetirizine every morning for hay fever",
        "Which pills do I swallow daily?",
        "What medication do I take?",
    ),
    (
        "user.blood_type",
        "Alex's blood type is O negative",
        "What should a hospital know about my blood?",
        "What is my blood type?",
    ),
    (
        "user.sleep",
        "Alex needs eight hours of sleep and goes to bed at 22:30",
        "How long do I rest at night?",
        "What time do I go to bed?",
    ),
]

LESSONS = [
    (
        "lesson.flights",
        "When booking flights, choose morning departures: Alex gets anxious about evening delays",
        "What time of day should my plane leave?",
        "Which flight departures should I choose?",
    ),
    (
        "lesson.meetings",
        "Meetings with the finance team go better with a written agenda sent the day before",
        "How should I prepare to talk with the money people?",
        "How to prepare meetings with the finance team?",
    ),
    (
        "lesson.packing",
        "Always pack a universal power adapter; forgot it in Tokyo and lost a day",
        "What do I keep forgetting when I travel abroad?",
        "What should I pack for trips?",
    ),
    (
        "lesson.email",
        "Send important emails before 10 am; replies after lunch are slow",
        "When is the best moment to write to people if I need an answer?",
        "When should I send important emails?",
    ),
    (
        "lesson.deploys",
        "Never deploy on Fridays: the last two Friday releases needed weekend fixes",
        "Which day of the week is bad for shipping code?",
        "When should I avoid deploying?",
    ),
]

EVENT_KINDS = [
    "dentist appointment",
    "dinner",
    "team offsite",
    "flight",
    "job interview",
    "yoga class",
    "parent-teacher meeting",
    "car service",
    "concert",
    "wedding",
    "haircut",
    "tax advisor meeting",
    "vet visit",
    "book club",
    "visa appointment",
]
EVENT_PARAPHRASE = {
    "dentist appointment": "When do I get my teeth checked?",
    "car service": "When is my vehicle going to the garage?",
    "vet visit": "When does my pet see the animal doctor?",
    "haircut": "When am I getting my hair done?",
    "tax advisor meeting": "When do I discuss my taxes with someone?",
    "job interview": "When am I talking to a possible new employer?",
    "visa appointment": "When do I go to the embassy?",
}

PROJECTS = [
    "Atlas",
    "Borealis",
    "Cobalt",
    "Delta",
    "Ember",
    "Fjord",
    "Granite",
    "Helix",
    "Indigo",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meridian",
    "Nimbus",
    "Orion",
    "Pioneer",
    "Quasar",
    "Redwood",
    "Summit",
    "Tundra",
]

NOTE_TOPICS = [
    "the garden",
    "the kitchen renovation",
    "the weekly groceries",
    "the car",
    "the bike",
    "the quarterly report",
    "the team newsletter",
    "the conference",
    "the neighbourhood association",
    "the book club",
    "the laptop",
    "the printer",
    "the electricity bill",
    "the insurance",
    "the holiday photos",
    "the podcast",
    "the gym membership",
    "the balcony plants",
    "the internet provider",
    "the winter tyres",
    "the recycling schedule",
    "the dishwasher",
]
NOTE_ACTIONS = [
    "needs attention before the weekend",
    "was sorted out on Tuesday",
    "costs more than expected",
    "should be discussed with the family",
    "is waiting for a reply",
    "has a new deadline",
    "went better than planned",
    "needs a second opinion",
    "is on hold until next month",
    "was mentioned in the last call",
    "needs new parts",
    "was cancelled",
]


@dataclass
class Question:
    text: str
    kind: str
    gold: list[str]


@dataclass
class EvalSet:
    # (key, value, memory_type) in observation order; later values of a key supersede
    observations: list[tuple[str, str, str]] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def final_keys(self) -> set[str]:
        return {k for k, _, _ in self.observations}


def _slug(name: str) -> str:
    return name.lower().replace(" ", "_")


def _date(rng: random.Random) -> tuple[str, str]:
    """A date as a memory writes it and as a question might ask for it."""
    month = rng.randrange(12)
    day = rng.randint(1, 28)
    return f"{day} {MONTHS[month]}", f"{MONTHS[month]} {day}"


def build(seed: int = 2026, distractor_people: int = 400, notes: int = 1200) -> EvalSet:
    rng = random.Random(seed)
    out = EvalSet()
    names = rng.sample(
        [f"{first} {last}" for first in FIRST for last in LAST],
        len(RELATIONS) + distractor_people,
    )
    cities = list(CITIES)

    def person_facts(name: str) -> dict[str, str]:
        slug = _slug(name)
        city = rng.choice(cities)
        job = rng.choice(JOBS)
        written, _ = _date(rng)
        facts = {
            f"person.{slug}.city": f"{name} lives in {city}",
            f"person.{slug}.job": f"{name} works as a {job}",
            f"person.{slug}.birthday": f"{name}'s birthday is on {written}",
        }
        for key, value in facts.items():
            out.observations.append((key, value, "fact"))
        return {"city": city, "job": job, "birthday": written}

    # Alex's people, with one- and two-hop questions
    for (relation, paraphrase), name in zip(RELATIONS.items(), names, strict=False):
        key = f"user.{_slug(relation)}"
        out.observations.append((key, f"Alex's {relation} is {name}", "relation"))
        person_facts(name)
        slug = _slug(name)
        out.questions += [
            Question(f"Who is my {relation}?", "lexical", [key]),
            Question(paraphrase, "paraphrase", [key]),
            Question(f"Where does {name} live?", "lexical", [f"person.{slug}.city"]),
            Question(
                f"Which city does my {relation} live in?", "two_hop", [key, f"person.{slug}.city"]
            ),
            Question(
                f"What does my {relation} do for a living?", "two_hop", [key, f"person.{slug}.job"]
            ),
            Question(
                f"When should I wish my {relation} a happy birthday?",
                "two_hop",
                [key, f"person.{slug}.birthday"],
            ),
        ]
    for name in names[len(RELATIONS) :]:
        person_facts(name)

    # preferences that changed over time: every value observed, the last one current
    for preference, (history, paraphrase, lexical) in PREFERENCES.items():
        key = f"user.{_slug(preference)}"
        for value in history:
            out.observations.append((key, f"Alex's {preference}: {value}", "preference"))
        out.questions += [
            Question(paraphrase, "paraphrase", [key]),
            Question(lexical, "lexical", [key]),
            Question(f"What is my {preference} now, after the recent change?", "temporal", [key]),
        ]

    for key, value, paraphrase, lexical in HEALTH:
        out.observations.append((key, value, "fact"))
        out.questions += [
            Question(paraphrase, "paraphrase", [key]),
            Question(lexical, "lexical", [key]),
        ]
    for key, value, paraphrase, lexical in LESSONS:
        out.observations.append((key, value, "reflection"))
        out.questions += [
            Question(paraphrase, "paraphrase", [key]),
            Question(lexical, "lexical", [key]),
        ]

    # Alex's appointments, and many other people's
    for i, kind in enumerate(EVENT_KINDS):
        written, asked = _date(rng)
        hour = f"{rng.randint(8, 19)}:{rng.choice(['00', '15', '30', '45'])}"
        with_whom = rng.choice(names[len(RELATIONS) :])
        key = f"event.alex.{_slug(kind)}"
        out.observations.append(
            (key, f"Alex's {kind} is on {written} at {hour} with {with_whom}", "experience")
        )
        out.questions += [
            Question(f"When is my {kind}?", "lexical", [key]),
            Question(f"What do I have on {asked}?", "lexical", [key]),
        ]
        if kind in EVENT_PARAPHRASE:
            out.questions.append(Question(EVENT_PARAPHRASE[kind], "paraphrase", [key]))
        if i % 3 == 0:
            out.questions.append(Question(f"Who will I see on {asked}?", "lexical", [key]))
    for name in names[len(RELATIONS) : len(RELATIONS) + 250]:
        written, _ = _date(rng)
        kind = rng.choice(EVENT_KINDS)
        out.observations.append(
            (f"event.{_slug(name)}.{_slug(kind)}", f"{name}'s {kind} is on {written}", "experience")
        )

    # work projects: Alex's manager's and others; two-hop via the deadline
    for project in PROJECTS:
        lead = rng.choice(names)
        written, asked = _date(rng)
        budget = rng.randint(20, 900) * 1000
        base = f"project.{project.lower()}"
        out.observations += [
            (f"{base}.lead", f"Project {project} is led by {lead}", "fact"),
            (f"{base}.deadline", f"Project {project} is due on {written}", "fact"),
            (f"{base}.budget", f"Project {project} has a budget of {budget:,} euros", "fact"),
        ]
        if project in PROJECTS[:8]:
            out.questions += [
                Question(f"Who leads project {project}?", "lexical", [f"{base}.lead"]),
                Question(f"How much money does {project} have?", "paraphrase", [f"{base}.budget"]),
                Question(
                    f"Who leads the project that is due on {asked}?",
                    "two_hop",
                    [f"{base}.deadline", f"{base}.lead"],
                ),
            ]

    # everyday notes
    for i in range(notes):
        topic = rng.choice(NOTE_TOPICS)
        action = rng.choice(NOTE_ACTIONS)
        who = rng.choice(names)
        out.observations.append(
            (f"note.{i}", f"Note: {topic} {action}; {who} mentioned it", "experience")
        )
    rng.shuffle(out.questions)
    return out
