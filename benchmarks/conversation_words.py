"""The conversation set's words: what fills an event's slots, and the small talk around
the evidence (benchmarks/conversation_data.py)."""

from __future__ import annotations

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
