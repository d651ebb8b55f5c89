"""Write ``claims.jsonl``: the labelled claim set for the offline judge (see README.md).

Every label comes from a source independent of the judge: the captions shipped with the
media, the known text of the JFK recording, the energy envelope of the countdown, and the
data manifest's notes on each file (its origin and licence are in ``tests/data/real/LICENSES.md``).
Run: ``python tests/data/embedded_claims/make_claims.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (media, window, what is said, source); what is said is the caption/known text, lightly trimmed
SPEECH = [
    ("friday.mp4", "0:00-0:01", "Hildy", "friday.vtt caption 1 (0.0-1.0 s)"),
    ("friday.mp4", "0:01-0:02", "How are you?", "friday.vtt caption 2 (1.0-1.5 s)"),
    ("friday.mp4", "0:01-0:03", "the lord of the universe is in", "friday.vtt caption 3 (1.5-3.0 s)"),
    ("friday.mp4", "0:03-0:04", "he is in a bad humor", "friday.vtt caption 4 (3.0-4.3 s)"),
    ("friday.mp4", "0:04-0:06", "somebody must have stolen the crown jewels", "friday.vtt caption 5 (4.3-6.0 s)"),
    ("nasa_13013.mp4", "0:00-0:04", "this is the optical and science segment of the Webb", "nasa_13013 caption 1 (0.21-4.26 s)"),
    ("nasa_13013.mp4", "0:04-0:08", "the telescope is in one of the largest cleanrooms in the world", "nasa_13013 caption 2 (4.26-8.35 s)"),
    ("nasa_13013.mp4", "0:08-0:12", "it is at NASA's Goddard Space Flight Center in Greenbelt, Maryland",
     "nasa_13013 caption 3 (8.35-12.47 s)"),
    ("jfk.flac", "0:00-0:02", "my fellow Americans", "known text; times from the waveform's pauses"),
    ("jfk.flac", "0:03-0:07", "ask not what your country can do for you", "known text; times from the waveform's pauses"),
    ("jfk.flac", "0:08-0:10", "ask what you can do for your country", "known text; last word ends at 10.4 s (edge rule)"),
]
COUNT = [(n, t) for n, t in zip(["nine", "eight", "seven", "six", "five", "four", "three", "two", "one", "zero"],
                                [0, 2, 4, 6, 8, 10, 12, 14, 16, 18], strict=True)]
# one content word of each said text, swapped for another of the same kind (label: false)
SWAPS = {
    "Hildy": ("Hildy", "Walter"), "How are you?": ("you", "Bob"),
    "the lord of the universe is in": ("universe", "castle"), "he is in a bad humor": ("bad", "good"),
    "somebody must have stolen the crown jewels": ("crown", "royal"),
    "this is the optical and science segment of the Webb": ("optical", "propulsion"),
    "the telescope is in one of the largest cleanrooms in the world": ("largest", "smallest"),
    "it is at NASA's Goddard Space Flight Center in Greenbelt, Maryland": ("Maryland", "Virginia"),
    "my fellow Americans": ("Americans", "Canadians"),
    "ask not what your country can do for you": ("country", "city"),
    "ask what you can do for your country": ("country", "family"),
}
NEGATE = {
    "Hildy": None, "How are you?": None,
    "the lord of the universe is in": "the lord of the universe is not in",
    "he is in a bad humor": "he is not in a bad humor",
    "somebody must have stolen the crown jewels": "nobody has stolen the crown jewels",
    "this is the optical and science segment of the Webb": "this is not the optical and science segment of the Webb",
    "the telescope is in one of the largest cleanrooms in the world": "the telescope is not in one of the largest cleanrooms in the world",
    "it is at NASA's Goddard Space Flight Center in Greenbelt, Maryland":
        "it is not at NASA's Goddard Space Flight Center in Greenbelt, Maryland",
    "my fellow Americans": None,
    "ask not what your country can do for you": "ask what your country can do for you",
    "ask what you can do for your country": "do not ask what you can do for your country",
}
# a window of the same file where the words are not said (label: false)
WRONG = {"0:00-0:01": "0:04-0:06", "0:01-0:02": "0:04-0:06", "0:01-0:03": "0:04-0:06", "0:03-0:04": "0:00-0:01",
         "0:04-0:06": "0:00-0:02", "0:00-0:04": "0:08-0:12", "0:04-0:08": "0:00-0:03", "0:08-0:12": "0:00-0:04",
         "0:00-0:02": "0:08-0:10", "0:03-0:07": "0:00-0:02", "0:08-0:10": "0:00-0:02"}
TIME_WORDS = {0: "At the very start", 1: "About a second in", 2: "Around two seconds in", 3: "After about three seconds",
              4: "Around four seconds in", 8: "At the 8 second mark", 0.5: "Then"}

SOUND = [
    # (media, window, claim, label, source)
    *[("chaplin.mp4", w, "Music plays", True, "MANIFEST: music soundtrack only") for w in ("0:00-0:03", "0:03-0:06", "0:06-0:09")],
    *[("chaplin.mp4", w, "Someone speaks", False, "MANIFEST: no speech") for w in ("0:00-0:03", "0:05-0:08")],
    ("chaplin.mp4", "0:02-0:05", "The soundtrack is silent", False, "MANIFEST: music soundtrack"),
    ("chaplin.mp4", "0:02-0:05", "No music plays", False, "MANIFEST: music soundtrack"),
    ("chaplin.mp4", "0:04-0:07", "A piano melody is heard", True, "MANIFEST: music soundtrack (a piano score)"),
    *[("flower.webm", w, "The audio is silent", True, "MANIFEST: digital silence (-91 dB)") for w in ("0:00-0:02", "0:02-0:04")],
    ("flower.webm", "0:01-0:03", "There is no sound at all", True, "MANIFEST: digital silence"),
    *[("flower.webm", w, "Music plays", False, "MANIFEST: digital silence") for w in ("0:00-0:02", "0:02-0:04")],
    ("flower.webm", "0:01-0:04", "Someone speaks", False, "MANIFEST: digital silence"),
    ("flower.webm", "0:00-0:03", "An engine roars", False, "MANIFEST: digital silence"),
    ("bigbuckbunny.mp4", "0:00-0:03", "Someone speaks", False, "MANIFEST: no speech"),
    ("bigbuckbunny.mp4", "0:01-0:04", "Nobody talks", True, "MANIFEST: no speech"),
    ("bigbuckbunny.mp4", "0:00-0:05", "The audio is completely silent", False, "MANIFEST: quiet music/effects, mean -41 dB"),
    *[("tears-of-steel-battle-clip-medium.webm", w, "The audio is silent", False,
       "MANIFEST: loud effects, mean volume -10.6 dB") for w in ("0:05-0:08", "0:30-0:33", "0:55-0:58")],
    ("tears-of-steel-battle-clip-medium.webm", "0:00-1:10", "Explosions are heard", True,
     "MANIFEST: a battle with explosions and loud effects"),
    *[("jfk.flac", w, "Someone speaks", True, "known text: speech throughout") for w in ("0:00-0:02", "0:05-0:07")],
    *[("jfk.flac", w, "Music plays", False, "known: a speech recording, no music") for w in ("0:00-0:03", "0:06-0:09")],
    ("jfk.flac", "0:03-0:06", "The recording is silent", False, "known text: speech"),
    ("jfk.flac", "0:05-0:08", "A dog barks", False, "known: a speech recording"),
    *[("friday.mp4", w, "People are talking", True, "friday.vtt: dialogue throughout") for w in ("0:00-0:02", "0:03-0:05")],
    ("friday.mp4", "0:02-0:04", "The scene is silent", False, "friday.vtt: dialogue"),
    ("friday.mp4", "0:01-0:04", "Gunshots are heard", False, "friday.vtt: an office dialogue"),
    *[("nasa_13013.mp4", w, "A narrator speaks", True, "captions: narration throughout") for w in ("0:01-0:04", "0:08-0:11")],
    ("nasa_13013.mp4", "0:04-0:07", "No one is talking", False, "captions: narration"),
    *[("countdown.mp3", w, "A voice speaks", True, "energy bursts every 2 s (a voice counting)") for w in ("0:00-0:01", "0:08-0:09")],
    ("countdown.mp3", "0:04-0:06", "Music plays", False, "MANIFEST: a voice counting down"),
    *[("voices-around-a-fire.mp3", w, "Several people are talking", True, "MANIFEST: crowd chatter")
      for w in ("0:02-0:05", "0:15-0:18")],
    ("voices-around-a-fire.mp3", "0:10-0:13", "It is silent", False, "MANIFEST: crowd chatter"),
    ("pyannote_sample.wav", "0:14-0:17", "Two people are talking", True, "pyannote_sample.rttm: speaker turns"),
    ("pyannote_sample.wav", "0:02-0:04", "Music plays", False, "MANIFEST: telephone conversation"),
    ("apollo11.mp3", "0:00-0:30", "Someone speaks over the radio", True, "MANIFEST: air-to-ground radio"),
    ("apollo11.mp3", "0:30-1:00", "The recording is silent", False, "MANIFEST: noisy radio"),
    ("bikes.mp4", "0:02-0:05", "An engine roars", False, "MANIFEST: no audio stream"),
    ("chaplin.mp4", "0:01-0:04", "Gunfire is heard", False, "MANIFEST: music soundtrack only"),
    ("flower.webm", "0:02-0:05", "A dog barks", False, "MANIFEST: digital silence"),
    ("tears-of-steel-battle-clip-medium.webm", "0:00-1:10", "Someone speaks", True, "MANIFEST: sparse shouted dialogue"),
]
VISUAL = [
    ("friday.mp4", "0:02", "A woman in a hat sits at a desk", True),
    ("friday.mp4", "0:02", "A man in a helmet stands on a roof", False),
    ("friday.mp4", "0:01-0:04", "The scene is in black and white", True),
    ("friday.mp4", "0:01-0:04", "The scene is in bright colour", False),
    ("friday.mp4", "0:03", "Switchboard operators sit at their desks", True),
    ("nasa_13013.mp4", "0:05", "A worker in a bunny suit stands on an orange lift", True),
    ("nasa_13013.mp4", "0:05", "A worker in a bunny suit stands on a green lift", False),
    ("nasa_13013.mp4", "0:08", "A gold hexagonal mirror array is visible", True),
    ("nasa_13013.mp4", "0:08", "A silver round mirror is visible", False),
    ("chaplin.mp4", "0:03", "Chaplin and a policeman stand on a sidewalk", True),
    ("chaplin.mp4", "0:03", "Chaplin rides a horse on a beach", False),
    ("bigbuckbunny.mp4", "0:02", "A big rabbit stands on a grassy hill", True),
    ("bigbuckbunny.mp4", "0:02", "A small cat sits on a sofa", False),
    ("bikes.mp4", "0:03", "People ride bicycles", True),
    ("flower.webm", "0:02", "A flower is shown", True),
    ("tears-of-steel-battle-clip-medium.webm", "0:20", "Robots fight in a ruined building", True),
    ("tears-of-steel-battle-clip-medium.webm", "0:45", "A bald man climbs scaffolding", True),
    ("tears-of-steel-battle-clip-medium.webm", "0:45", "A bald man swims in a pool", False),
]

# written after the judge's rules were frozen (2026-11-30), in phrasings the rules were not
# developed on: a check that the figures above are not an artefact of tuning on the set
FRESH = [
    ("jfk.flac", "Kennedy addresses his fellow Americans (audio, 0:00-0:02).", True, "known text", "attribution"),
    ("jfk.flac", "Kennedy addresses his fellow Canadians (audio, 0:00-0:02).", False, "known text; swapped", "substituted"),
    ("jfk.flac", "Next he urges people to ask what they can do for their country (audio, 0:08-0:10).", True,
     "known text", "time_phrase"),
    ("jfk.flac", "He tells listeners to ask what their country can do for them (audio, 0:08-0:10).", False,
     "known text; the first clause, cited at the second", "wrong_time"),
    ("jfk.flac", "In the opening seconds the president says ask what your city can do for you (audio, 0:03-0:07).",
     False, "known text; swapped", "substituted"),
    ("friday.mp4", "The woman remarks that somebody stole the crown jewels (audio, 0:04-0:06).", True,
     "friday.vtt caption 5", "attribution"),
    ("friday.mp4", "Answer: she says someone stole the crown diamonds (audio, 0:04-0:06).", False,
     "friday.vtt caption 5; swapped", "substituted"),
    ("friday.mp4", "She reports that he is in a bad humor (audio, 0:03-0:05).", True, "friday.vtt caption 4",
     "attribution"),
    ("friday.mp4", "She reports that he is in a good mood (audio, 0:03-0:05).", False, "friday.vtt caption 4; swapped",
     "substituted"),
    ("nasa_13013.mp4", "The narration names Greenbelt, Maryland as the location (audio, 0:08-0:12).", True,
     "nasa caption 3", "attribution"),
    ("nasa_13013.mp4", "The narration names Houston, Texas as the location (audio, 0:08-0:12).", False,
     "nasa caption 3; swapped", "substituted"),
    ("nasa_13013.mp4", "Observation 3: the narrator mentions the Webb space telescope (audio, 0:02-0:05).", True,
     "nasa caption 1-2", "discourse_label"),
    ("nasa_13013.mp4", "The narrator mentions the Hubble space telescope (audio, 0:02-0:05).", False,
     "nasa caption 1-2; swapped", "substituted"),
    ("nasa_13013.mp4", "The narrator never mentions Goddard (audio, 0:08-0:12).", False, "nasa caption 3; negated",
     "negated"),
    ("countdown.mp3", "Midway through, the voice reaches four (audio, 0:10-0:11).", True, "countdown bursts",
     "time_phrase"),
    ("countdown.mp3", "The counting voice says eleven (audio, 0:10-0:11).", False, "countdown bursts; swapped",
     "substituted"),
    ("countdown.mp3", "The countdown ends with zero (audio, 0:18-0:19).", True, "countdown bursts", "true"),
    ("chaplin.mp4", "A lively tune accompanies the scene (audio, 0:01-0:05).", True, "MANIFEST: music", "sound"),
    ("chaplin.mp4", "Someone shouts (audio, 0:01-0:05).", False, "MANIFEST: no speech", "sound"),
    ("flower.webm", "Birds chirp (audio, 0:00-0:04).", False, "MANIFEST: digital silence", "sound"),
    ("flower.webm", "Nothing can be heard (audio, 0:00-0:04).", True, "MANIFEST: digital silence", "sound"),
    ("voices-around-a-fire.mp3", "A crowd chatters (audio, 0:05-0:09).", True, "MANIFEST: crowd chatter", "sound"),
    ("jfk.flac", "A car engine is audible (audio, 0:02-0:05).", False, "known: a speech recording", "sound"),
    ("bigbuckbunny.mp4", "A rabbit yawns on the hill (visual, 0:03).", True, "MANIFEST visual notes", "visual_only"),
]

# v3 (issue #26): one-fact claims in other words — written before the v3 rules, from the same
# independent sources (captions, known texts, countdown bursts, the Whisper-large transcript
# shipped in annotations/ for apollo11, the RTTM). Each entry is a pair or a small group on one
# base; whole groups go to one half: "dev" (read while writing the v3 rules) or "holdout"
# (only measured). Kinds: paraphrase, reported_speech, order, counting, negation, function_word.
FV = "friday.vtt caption"
NC = "nasa caption"
JK = "known text; clause windows from the waveform's pauses"
CD = "countdown bursts: nine at 0 s, then one number every 2 s down to zero at 18 s"
AP = "annotations/whisper_timestamped_large_apollo11 segment"
V3: list[tuple[str, str, list[tuple[str, bool, str]]]] = [
    # (kind, media, [(claim, label, source), ...]); groups alternate dev / holdout within a kind
    ("paraphrase", "friday.mp4", [
        ("She says he is in a foul mood (audio, 0:03-0:05).", True, f"{FV} 4: 'in a bad humor'"),
        ("She says he is in a cheerful mood (audio, 0:03-0:05).", False, f"{FV} 4: 'in a bad humor'; opposite")]),
    ("paraphrase", "friday.mp4", [
        ("The woman says someone must have taken the crown jewels (audio, 0:04-0:06).", True, f"{FV} 5"),
        ("The woman says someone must have taken the crown paintings (audio, 0:04-0:06).", False,
         f"{FV} 5; 'jewels' swapped")]),
    ("paraphrase", "nasa_13013.mp4", [
        ("The narrator says the telescope sits in one of the biggest cleanrooms on Earth (audio, 0:04-0:08).", True,
         f"{NC} 2"),
        ("The narrator says the telescope sits in one of the tiniest cleanrooms on Earth (audio, 0:04-0:08).", False,
         f"{NC} 2; 'largest' reversed")]),
    ("paraphrase", "nasa_13013.mp4", [
        ("The narrator places the Goddard center in Maryland (audio, 0:08-0:12).", True, f"{NC} 3"),
        ("The narrator places the Goddard center in Virginia (audio, 0:08-0:12).", False, f"{NC} 3; swapped")]),
    ("paraphrase", "jfk.flac", [
        ("Kennedy urges people to ask what they can do for their nation (audio, 0:08-0:10).", True, JK),
        ("Kennedy urges people to ask what they can do for their city (audio, 0:08-0:10).", False, f"{JK}; swapped")]),
    ("paraphrase", "apollo11.mp3", [
        ("Houston tells Apollo 11 it has a recommendation for the crew (audio, 0:00-0:07).", True, f"{AP} 1 (0.4-7.0 s)"),
        ("Houston tells Apollo 12 it has a recommendation for the crew (audio, 0:00-0:07).", False,
         f"{AP} 1 (0.4-7.0 s); swapped")]),
    ("reported_speech", "friday.mp4", [
        ("Someone asks whether the lord of the universe is in (audio, 0:01-0:03).", True, f"{FV} 3"),
        ("Someone asks whether the lord of the galaxy is in (audio, 0:01-0:03).", False, f"{FV} 3; swapped")]),
    ("reported_speech", "friday.mp4", [
        ("Someone answers that he is in a bad humor (audio, 0:03-0:05).", True, f"{FV} 4"),
        ("Someone answers that the lord of the universe is out (audio, 0:03-0:05).", False, f"{FV} 4: 'he's in'")]),
    ("reported_speech", "jfk.flac", [
        ("Kennedy addresses his listeners as fellow Americans (audio, 0:00-0:02).", True, JK),
        ("Kennedy addresses his listeners as fellow Britons (audio, 0:00-0:02).", False, f"{JK}; swapped")]),
    ("reported_speech", "nasa_13013.mp4", [
        ("The narrator introduces the optical and science segment of the Webb (audio, 0:00-0:04).", True, f"{NC} 1"),
        ("The narrator introduces the propulsion segment of the Webb (audio, 0:00-0:04).", False, f"{NC} 1; swapped")]),
    ("reported_speech", "jfk.flac", [
        ("Kennedy urges the audience to ask what they can do for their country (audio, 0:08-0:10).", True, JK),
        ("Kennedy urges the audience to ask what they can do for their employer (audio, 0:08-0:10).", False,
         f"{JK}; swapped")]),
    ("reported_speech", "apollo11.mp3", [
        ("A voice on the radio tells the other side to go ahead (audio, 0:10-0:12).", True, f"{AP} 2 (10.8-11.2 s)"),
        ("A voice on the radio tells the other side to stop (audio, 0:10-0:12).", False, f"{AP} 2 (10.8-11.2 s)")]),
    ("order", "countdown.mp3", [
        ("The voice says eight right after nine (audio, 0:00-0:03).", True, CD),
        ("The voice says nine right after eight (audio, 0:00-0:03).", False, f"{CD}; order reversed")]),
    ("order", "countdown.mp3", [
        ("The voice says six before five (audio, 0:06-0:09).", True, CD),
        ("The voice says five before six (audio, 0:06-0:09).", False, f"{CD}; order reversed")]),
    ("order", "countdown.mp3", [
        ("The last number the voice says is zero (audio, 0:16-0:19).", True, CD),
        ("The first number the voice says is zero (audio, 0:16-0:19).", False, f"{CD}; one comes first here")]),
    ("order", "jfk.flac", [
        ("Kennedy says fellow Americans first, then ask not what your country can do for you (audio, 0:00-0:07).", True,
         JK),
        ("Kennedy first says ask what you can do for your country, then ask not what your country can do for you "
         "(audio, 0:03-0:10).", False, f"{JK}; order reversed")]),
    ("order", "nasa_13013.mp4", [
        ("The narrator mentions Goddard before Greenbelt (audio, 0:08-0:12).", True, f"{NC} 3"),
        ("The narrator mentions Maryland before Goddard (audio, 0:08-0:12).", False, f"{NC} 3; order reversed")]),
    ("order", "friday.mp4", [
        ("The woman mentions the lord of the universe and then says he is in a bad humor (audio, 0:01-0:05).", True,
         f"{FV} 3-4"),
        ("The woman says he is in a bad humor and then mentions the lord of the universe (audio, 0:01-0:05).", False,
         f"{FV} 3-4; order reversed")]),
    ("counting", "countdown.mp3", [
        ("The voice counts down from nine to zero (audio, 0:00-0:19).", True, CD),
        ("The voice counts up from zero to nine (audio, 0:00-0:19).", False, f"{CD}; direction reversed")]),
    ("counting", "countdown.mp3", [
        ("The voice counts backwards from five to three (audio, 0:08-0:13).", True, CD),
        ("The voice counts down from six to two (audio, 0:08-0:13).", False, f"{CD}; five, four, three here")]),
    ("counting", "countdown.mp3", [
        ("The voice says three numbers (audio, 0:08-0:13).", True, f"{CD}: five, four, three"),
        ("The voice says two numbers (audio, 0:08-0:13).", False, f"{CD}: five, four, three")]),
    ("counting", "jfk.flac", [
        ("Kennedy says country twice (audio, 0:03-0:10).", True, JK),
        ("Kennedy says country three times (audio, 0:03-0:10).", False, JK)]),
    ("counting", "countdown.mp3", [
        ("The countdown goes from four down to one (audio, 0:10-0:17).", True, CD),
        ("The count goes up from one to four (audio, 0:10-0:17).", False, f"{CD}; direction reversed")]),
    ("counting", "jfk.flac", [
        ("Kennedy says ask twice (audio, 0:03-0:10).", True, JK),
        ("Kennedy says ask four times (audio, 0:03-0:10).", False, JK)]),
    ("negation", "jfk.flac", [
        ("Kennedy tells Americans not to ask what their country can do for them (audio, 0:03-0:07).", True, JK),
        ("Kennedy tells Americans to ask what their country can do for them (audio, 0:03-0:07).", False,
         f"{JK}; 'not' dropped")]),
    ("negation", "nasa_13013.mp4", [
        ("The narrator does not mention Houston (audio, 0:08-0:12).", True, f"{NC} 3"),
        ("The narrator does not mention Maryland (audio, 0:08-0:12).", False, f"{NC} 3")]),
    ("negation", "countdown.mp3", [
        ("The voice never says ten (audio, 0:00-0:19).", True, CD),
        ("The voice never says seven (audio, 0:00-0:19).", False, CD)]),
    ("negation", "flower.webm", [
        ("No one speaks (audio, 0:00-0:04).", True, "MANIFEST: digital silence"),
        ("No one speaks in the clip (audio, 0:01-0:04).", True, "MANIFEST: digital silence")]),
    ("negation", "jfk.flac", [
        ("Nobody speaks (audio, 0:03-0:07).", False, JK),
        ("Kennedy does not mention taxes (audio, 0:03-0:07).", True, JK)]),
    ("negation", "friday.mp4", [
        ("She says he is not in a good humor (audio, 0:03-0:05).", True, f"{FV} 4: 'in a bad humor'"),
        ("The speaker says the lord of the universe is not in (audio, 0:03-0:05).", False, f"{FV} 4: 'he's in'")]),
    ("function_word", "friday.mp4", [
        ("One speaker says somebody must have stolen the crown jewels (audio, 0:04-0:06).", True, f"{FV} 5"),
        ("One speaker says somebody must have stolen the crown diamonds (audio, 0:04-0:06).", False,
         f"{FV} 5; swapped")]),
    ("function_word", "nasa_13013.mp4", [
        ("One narrator explains that this is the optical and science segment of the Webb (audio, 0:00-0:04).", True,
         f"{NC} 1"),
        ("One narrator explains that this is the optical and science segment of Hubble (audio, 0:00-0:04).", False,
         f"{NC} 1; swapped")]),
    ("function_word", "jfk.flac", [
        ("Kennedy himself says ask not what your country can do for you (audio, 0:03-0:07).", True, JK),
        ("Kennedy himself says ask not what your state can do for you (audio, 0:03-0:07).", False, f"{JK}; swapped")]),
    ("function_word", "countdown.mp3", [
        ("One voice says four (audio, 0:10-0:11).", True, CD),
        ("One voice says eleven (audio, 0:10-0:11).", False, f"{CD}; swapped")]),
    ("function_word", "friday.mp4", [
        ("Here, she says he is in a bad humor (audio, 0:03-0:05).", True, f"{FV} 4"),
        ("Here, she says he is in a good humor (audio, 0:03-0:05).", False, f"{FV} 4; 'bad' reversed")]),
    ("function_word", "apollo11.mp3", [
        ("One of the voices says Houston (audio, 0:00-0:07).", True, f"{AP} 1"),
        ("One of the voices says Moscow (audio, 0:00-0:07).", False, f"{AP} 1; swapped")]),
]


# v4 (issue #37): claims whose parts the v3 rules left unchecked — written before the v4 rules,
# from the same independent sources plus the frames (contact sheets of friday.mp4 at 0.5/2/3.5/5 s
# and nasa_13013.mp4 at 1/3/6/9/12 s) and the RTTM's speaker turns. Kinds: adjacency (order words
# that mean "next to"), speaker (who speaks, to whom), question (question vs statement),
# quantifier (superlatives, "every", "only", "all"), mixed (an audio half and a visual half; the
# false ones invent the visual half), meta_word (linking and meta words: "the word X", "as well
# as", "rather than", "also", "the phrase"), quoted_name (a quoted name ASR may miss), hedge (a
# hedge or an evaluation inside the sentence: ``verifiable`` false; the content label still
# holds). Each entry is a pair on one base; whole pairs alternate dev / holdout within a kind.
# Every v4 claim carries ``verifiable`` (what the verifier should say of the sentence).
FR = "friday frames (0.5, 2, 3.5, 5 s): a woman in a top hat and striped jacket stands at a desk; operators " \
     "with headsets sit in the foreground; black and white"
NF = "nasa frames (1, 3, 6, 9, 12 s): a worker in a white suit on an orange lift beside a gold hexagonal mirror"
RT = "pyannote_sample.rttm: speaker90 6.69 s, speaker91 7.55 s, speaker90 8.32 s, speaker91 9.92 s"
V4: list[tuple[str, str, list[tuple[str, bool, str]]]] = [
    ("adjacency", "countdown.mp3", [
        ("The voice says two right after three (audio, 0:12-0:15).", True, CD),
        ("The voice says two right after four (audio, 0:10-0:15).", False, f"{CD}; three comes between")]),
    ("adjacency", "countdown.mp3", [
        ("Immediately after five, the voice says four (audio, 0:08-0:11).", True, CD),
        ("Immediately after six, the voice says four (audio, 0:06-0:11).", False, f"{CD}; five comes between")]),
    ("adjacency", "jfk.flac", [
        ("Right after fellow, the speaker says Americans (audio, 0:00-0:03).", True, f"{JK}: 'my fellow Americans'"),
        ("Right after my, the speaker says Americans (audio, 0:00-0:03).", False,
         f"{JK}: 'my fellow Americans'; fellow comes between")]),
    ("adjacency", "nasa_13013.mp4", [
        ("The narrator says Greenbelt immediately before Maryland (audio, 0:08-0:12).", True, f"{NC} 3"),
        ("The narrator says Goddard immediately before Greenbelt (audio, 0:08-0:12).", False,
         f"{NC} 3; 'Space Flight Center in' comes between")]),
    ("adjacency", "friday.mp4", [
        ("The word jewels comes right after crown (audio, 0:04-0:06).", True, f"{FV} 5"),
        ("The word jewels comes right after stolen (audio, 0:04-0:06).", False, f"{FV} 5; 'the crown' comes between")]),
    ("adjacency", "countdown.mp3", [
        ("Zero follows directly after one (audio, 0:16-0:19).", True, CD),
        ("Zero follows directly after two (audio, 0:14-0:19).", False, f"{CD}; one comes between")]),
    ("adjacency", "nasa_13013.mp4", [
        ("Right after optical, the narrator says and science (audio, 0:00-0:04).", True, f"{NC} 1"),
        ("Right after optical, the narrator says segment (audio, 0:00-0:04).", False,
         f"{NC} 1; 'and science' comes between")]),
    ("speaker", "apollo11.mp3", [
        ("Houston tells Apollo 11 it has a recommendation (audio, 0:00-0:07).", True,
         f"{AP} 1: 'Apollo 11, Houston' (Houston calling)"),
        ("Apollo 11 tells Houston it has a recommendation (audio, 0:00-0:07).", False,
         f"{AP} 1: 'Apollo 11, Houston' (Houston calling, not the crew)")]),
    ("speaker", "apollo11.mp3", [
        ("The crew answers Houston with go ahead (audio, 0:10-0:12).", True, f"{AP} 2: the called side answers"),
        ("Houston says go ahead to the crew (audio, 0:10-0:12).", False, f"{AP} 2: the called side (the crew) answers")]),
    ("speaker", "friday.mp4", [
        ("One voice asks whether the lord of the universe is in and another voice answers that he is in "
         "(audio, 0:01-0:05).", True, f"{FV} 3-4: a question, then its answer"),
        ("The voice that asks whether the lord of the universe is in also answers that he is in (audio, 0:01-0:05).",
         False, f"{FV} 3-4: a question and its answer, two voices")]),
    ("speaker", "pyannote_sample.wav", [
        ("Two different voices speak in turn (audio, 0:06-0:11).", True, RT),
        ("Only one voice speaks (audio, 0:06-0:11).", False, RT)]),
    ("speaker", "jfk.flac", [
        ("A single voice speaks throughout (audio, 0:00-0:10).", True, "known: one speaker, Kennedy"),
        ("Two voices alternate (audio, 0:00-0:10).", False, "known: one speaker, Kennedy")]),
    ("question", "friday.mp4", [
        ("A question is asked about whether the lord of the universe is in (audio, 0:01-0:03).", True,
         f"{FV} 3: 'is the lord of the universe in?'"),
        ("Someone states that the lord of the universe is in (audio, 0:01-0:03).", False,
         f"{FV} 3: asked, not stated, in this window")]),
    ("question", "friday.mp4", [
        ("Someone asks how they are (audio, 0:01-0:02).", True, f"{FV} 2: 'How are you?'"),
        ("Someone says that they are fine (audio, 0:01-0:02).", False, f"{FV} 2: 'How are you?'")]),
    ("question", "friday.mp4", [
        ("The reply to the question is that he is in a bad humor (audio, 0:01-0:05).", True, f"{FV} 3-4"),
        ("Someone asks whether he is in a bad humor (audio, 0:03-0:05).", False, f"{FV} 4: a statement")]),
    ("question", "jfk.flac", [
        ("The speaker tells the listeners to ask what they can do for their country (audio, 0:08-0:10).", True,
         f"{JK}: an imperative"),
        ("The speaker asks the listeners what they can do for their country (audio, 0:08-0:10).", False,
         f"{JK}: an imperative, not a question put to them")]),
    ("quantifier", "nasa_13013.mp4", [
        ("The narrator says the telescope is in one of the largest cleanrooms in the world (audio, 0:04-0:08).", True,
         f"{NC} 2"),
        ("The narrator says the telescope is in the largest cleanroom in the world (audio, 0:04-0:08).", False,
         f"{NC} 2: 'one of the largest'")]),
    ("quantifier", "nasa_13013.mp4", [
        ("The narrator says the cleanroom is among the largest in the world (audio, 0:04-0:08).", True, f"{NC} 2"),
        ("The narrator says the cleanroom is the world's largest (audio, 0:04-0:08).", False,
         f"{NC} 2: 'one of the largest'")]),
    ("quantifier", "countdown.mp3", [
        ("The voice says every number from nine down to zero (audio, 0:00-0:19).", True, CD),
        ("The voice says every number from ten down to zero (audio, 0:00-0:19).", False, f"{CD}; it starts at nine")]),
    ("quantifier", "jfk.flac", [
        ("The speaker mentions both what the country can do and what the listeners can do (audio, 0:03-0:10).", True,
         JK),
        ("The speaker mentions only what the country can do (audio, 0:03-0:10).", False,
         f"{JK}: both clauses are said")]),
    ("quantifier", "friday.mp4", [
        ("The speaker says the crown jewels must have been stolen by somebody (audio, 0:04-0:06).", True, f"{FV} 5"),
        ("The speaker says somebody must have stolen all the crown jewels (audio, 0:04-0:06).", False,
         f"{FV} 5: 'all' is not said")]),
    ("quantifier", "countdown.mp3", [
        ("The smallest number the voice says is zero (audio, 0:00-0:19).", True, CD),
        ("The largest number the voice says is ten (audio, 0:00-0:19).", False, f"{CD}: nine is the largest")]),
    ("quantifier", "apollo11.mp3", [
        ("The first word heard is Apollo (audio, 0:00-0:07).", True, f"{AP} 1: 'Apollo 11, Houston'"),
        ("The first word heard is Houston (audio, 0:00-0:07).", False, f"{AP} 1: 'Apollo 11, Houston'")]),
    ("mixed", "nasa_13013.mp4", [
        ("The narrator mentions the Webb telescope while a worker in a white suit stands on an orange lift "
         "(audio, 0:00-0:04; visual, 0:02).", True, f"{NC} 1; {NF}"),
        ("The narrator mentions the Webb telescope while a dog sits on a sofa (audio, 0:00-0:04; visual, 0:02).",
         False, f"{NC} 1; {NF}: no dog, no sofa")]),
    ("mixed", "friday.mp4", [
        ("While a woman in a top hat stands at a desk, someone says somebody must have stolen the crown jewels "
         "(audio, 0:04-0:06; visual, 0:05).", True, f"{FV} 5; {FR}"),
        ("While a man in a helmet stands on a roof, someone says somebody must have stolen the crown jewels "
         "(audio, 0:04-0:06; visual, 0:05).", False, f"{FV} 5; {FR}: no helmet, no roof")]),
    ("mixed", "nasa_13013.mp4", [
        ("The narrator names Goddard as a gold hexagonal mirror is shown (audio, 0:08-0:12; visual, 0:09).", True,
         f"{NC} 3; {NF}"),
        ("The narrator names Goddard as a rocket lifts off (audio, 0:08-0:12; visual, 0:09).", False,
         f"{NC} 3; {NF}: no rocket")]),
    ("mixed", "friday.mp4", [
        ("Someone says he is in a bad humor while operators wearing headsets sit in the foreground "
         "(audio, 0:03-0:05; visual, 0:04).", True, f"{FV} 4; {FR}"),
        ("Someone says he is in a bad humor while a horse stands in the office (audio, 0:03-0:05; visual, 0:04).",
         False, f"{FV} 4; {FR}: no horse")]),
    ("mixed", "nasa_13013.mp4", [
        ("While a worker stands on an orange lift, the narrator says this is the optical and science segment "
         "(audio, 0:00-0:04).", True, f"{NC} 1; {NF}"),
        ("While a cat walks across the mirror, the narrator says this is the optical and science segment "
         "(audio, 0:00-0:04).", False, f"{NC} 1; {NF}: no cat")]),
    ("meta_word", "countdown.mp3", [
        ("The voice says the word four once (audio, 0:10-0:11).", True, CD),
        ("The voice says the word four twice (audio, 0:10-0:13).", False, f"{CD}: four, then three")]),
    ("meta_word", "jfk.flac", [
        ("The speaker says the word country twice (audio, 0:03-0:10).", True, JK),
        ("The speaker says the word country once (audio, 0:03-0:10).", False, f"{JK}: 'your country' in each clause")]),
    ("meta_word", "nasa_13013.mp4", [
        ("The narrator names Greenbelt as well as Maryland (audio, 0:08-0:12).", True, f"{NC} 3"),
        ("The narrator names Greenbelt as well as Virginia (audio, 0:08-0:12).", False, f"{NC} 3; swapped")]),
    ("meta_word", "friday.mp4", [
        ("Rather than a good humor, the speaker says he is in a bad humor (audio, 0:03-0:05).", True, f"{FV} 4"),
        ("Rather than a bad humor, the speaker says he is in a good humor (audio, 0:03-0:05).", False,
         f"{FV} 4; reversed")]),
    ("meta_word", "nasa_13013.mp4", [
        ("The narrator also mentions the name Goddard (audio, 0:08-0:12).", True, f"{NC} 3"),
        ("The narrator also mentions the name Hubble (audio, 0:08-0:12).", False, f"{NC} 3; swapped")]),
    ("meta_word", "jfk.flac", [
        ("The speaker uses the phrase fellow Americans (audio, 0:00-0:03).", True, JK),
        ("The speaker uses the phrase fellow Europeans (audio, 0:00-0:03).", False, f"{JK}; swapped")]),
    ("quoted_name", "friday.mp4", [
        ("Someone calls out \"Hildy!\" (audio, 0:00-0:01).", True, f"{FV} 1 (0.0-1.0 s)"),
        ("Someone calls out \"Walter!\" (audio, 0:00-0:01).", False, f"{FV} 1: 'Hildy!'")]),
    ("quoted_name", "nasa_13013.mp4", [
        ("The narrator says \"Webb\" (audio, 0:02-0:04).", True, f"{NC} 1 (ends 'of the Webb' at 4.26 s)"),
        ("The narrator says \"Hubble\" (audio, 0:02-0:04).", False, f"{NC} 1: 'the Webb'")]),
    ("quoted_name", "nasa_13013.mp4", [
        ("The narrator says \"Goddard\" (audio, 0:08-0:11).", True, f"{NC} 3"),
        ("The narrator says \"Glenn\" (audio, 0:08-0:11).", False, f"{NC} 3: 'Goddard'")]),
    ("quoted_name", "apollo11.mp3", [
        ("A voice says \"Houston\" (audio, 0:00-0:03).", True, f"{AP} 1: 'Houston.' at 1.5-1.7 s"),
        ("A voice says \"Moscow\" (audio, 0:00-0:03).", False, f"{AP} 1: 'Apollo 11, Houston'")]),
    ("quoted_name", "jfk.flac", [
        ("The speaker says \"Americans\" (audio, 0:00-0:03).", True, JK),
        ("The speaker says \"Canadians\" (audio, 0:00-0:03).", False, f"{JK}: 'my fellow Americans'")]),
    ("quoted_name", "apollo11.mp3", [
        ("A voice says \"Mike's helmet\" (audio, 0:20-0:23).", True, f"{AP} 4: 'Mike's helmet' at 21.5-22.9 s"),
        ("A voice says \"Neil's helmet\" (audio, 0:20-0:23).", False, f"{AP} 4: 'Mike's helmet'")]),
    ("quoted_name", "apollo11.mp3", [
        ("Someone says \"Roger\" (audio, 0:50-0:51).", True, f"{AP} 9: 'Roger.' at 50.1-50.5 s"),
        ("Someone says \"Copy\" (audio, 0:50-0:51).", False, f"{AP} 9: 'Roger.'")]),
    ("hedge", "nasa_13013.mp4", [
        ("The narrator appears to say the telescope is in one of the largest cleanrooms (audio, 0:04-0:08).", True,
         f"{NC} 2; hedged ('appears to')"),
        ("The narrator appears to say the telescope is in the smallest cleanroom (audio, 0:04-0:08).", False,
         f"{NC} 2; hedged; reversed")]),
    ("hedge", "jfk.flac", [
        ("The speaker delivers a powerful and moving line, ask not what your country can do for you "
         "(audio, 0:03-0:07).", True, f"{JK}; evaluative ('powerful and moving')"),
        ("The speaker delivers a powerful and moving line, ask not what your city can do for you (audio, 0:03-0:07).",
         False, f"{JK}; evaluative; swapped")]),
    ("hedge", "friday.mp4", [
        ("The woman seems to ask whether the lord of the universe is in (audio, 0:01-0:03).", True,
         f"{FV} 3; hedged ('seems to')"),
        ("The woman seems to ask whether the lord of the galaxy is in (audio, 0:01-0:03).", False,
         f"{FV} 3; hedged; swapped")]),
    ("hedge", "countdown.mp3", [
        ("The voice counts down, likely from nine to zero (audio, 0:00-0:19).", True, f"{CD}; hedged ('likely')"),
        ("The voice counts down, likely from twenty to zero (audio, 0:00-0:19).", False, f"{CD}; hedged; from nine")]),
    ("hedge", "nasa_13013.mp4", [
        ("The narrator gives an impressive description of the Goddard Space Flight Center in Greenbelt, Maryland "
         "(audio, 0:08-0:12).", True, f"{NC} 3; evaluative ('impressive')"),
        ("The narrator gives an impressive description of the Johnson Space Center in Houston, Texas "
         "(audio, 0:08-0:12).", False, f"{NC} 3; evaluative; swapped")]),
]
#: v4 claims that read as plain statements although their reported words hedge (the v3
#: statement rule): the verifier must keep them
V4_PLAIN: list[tuple[str, str, list[tuple[str, bool, str]]]] = [
    ("hedge", "friday.mp4", [
        ("Someone says somebody must have stolen the crown jewels (audio, 0:04-0:06).", True,
         f"{FV} 5; a report of hedged words is a statement"),
        ("Someone says somebody must have stolen the royal jewels (audio, 0:04-0:06).", False, f"{FV} 5; swapped")]),
]


# v5 (issue #46): claims about the classes of error the v4 rules were found to make — written and
# committed before the v5 rules, from the same independent sources (captions, the known JFK text,
# the countdown bursts, the Whisper-large Apollo transcript, the MANIFEST's audio and frame
# notes). Each claim carries its ``why``: the reason its label holds. Kinds: sound_pair (two
# sounds claimed together; every one must be present), channel (words shown vs words spoken:
# no media here has on-screen text, so a claim that a sign/caption/screen shows the spoken words
# is false), paraphrase5 (synonyms outside the v4 table, numbers in words, ordinals, "a dozen",
# "the first thing … says"), quoted_neg (a "not" inside a quoted phrase), speaker5 (passive
# voice, source nouns, "he/she says" on a one-voice file: JFK is one man speaking),
# sound_word (sound words outside the v4 table: on digital silence they are all false), tone
# (a tone word: ``verifiable`` false; the content label still holds). Pairs alternate dev /
# holdout within a kind, as for v3 and v4.
SIL = "MANIFEST: flower.webm's audio track is digital silence (-91 dB)"
CH = "MANIFEST: chaplin.mp4 has a music soundtrack only, no speech"
NOTEXT = "MANIFEST frame notes and the contact sheets: no sign, caption or on-screen text in the picture"
V5: list[tuple[str, str, list[tuple[str, bool, str, str]]]] = [
    ("sound_pair", "chaplin.mp4", [
        ("Music plays (audio, 0:00-0:03).", True, CH, "the soundtrack is music throughout"),
        ("Music plays while someone speaks (audio, 0:00-0:03).", False, CH,
         "music is present but nobody speaks: both sounds must be heard")]),
    ("sound_pair", "chaplin.mp4", [
        ("A piano melody is heard (audio, 0:03-0:06).", True, CH, "the score is a piano melody"),
        ("A dog barks while music plays (audio, 0:03-0:06).", False, CH,
         "music only: no dog is in the soundtrack")]),
    ("sound_pair", "chaplin.mp4", [
        ("Music is heard and no one talks (audio, 0:05-0:08).", True, CH, "music, no speech"),
        ("Music and speech are heard together (audio, 0:05-0:08).", False, CH, "no speech in the file")]),
    ("sound_pair", "countdown.mp3", [
        ("A voice speaks (audio, 0:00-0:05).", True, CD, "the countdown is spoken"),
        ("A voice speaks while an engine roars (audio, 0:00-0:05).", False, CD,
         "a voice counting; nothing in the source notes an engine, and an MDN countdown sample is a plain voice")]),
    ("channel", "friday.mp4", [
        ("Someone says somebody must have stolen the crown jewels (audio, 0:04-0:06).", True, f"{FV} 5",
         "the caption gives these words as spoken"),
        ("The sign reads crown jewels (audio, 0:04-0:06; visual, 0:05).", False, f"{FV} 5; {NOTEXT}",
         "the words are spoken; no sign or text is shown")]),
    ("channel", "nasa_13013.mp4", [
        ("The narrator says Goddard Space Flight Center (audio, 0:08-0:12).", True, f"{NC} 3",
         "the caption of the narration"),
        ("The screen shows the words Goddard Space Flight Center (audio, 0:08-0:12; visual, 0:10).", False,
         f"{NC} 3; {NOTEXT}", "the name is narrated, not written on screen")]),
    ("channel", "jfk.flac", [
        ("The speaker says my fellow Americans (audio, 0:00-0:03).", True, JK, "the known text"),
        ("A title card reads my fellow Americans (audio, 0:00-0:03).", False, JK,
         "an audio file has no picture: nothing can be read, only heard")]),
    ("channel", "friday.mp4", [
        ("The voice asks how are you (audio, 0:01-0:02).", True, f"{FV} 2", "'How are you?' is spoken"),
        ("The caption on screen reads how are you (audio, 0:01-0:02; visual, 0:01).", False, f"{FV} 2; {NOTEXT}",
         "the question is spoken; the frames carry no caption text")]),
    ("paraphrase5", "friday.mp4", [
        ("The speaker says somebody must have swiped the crown jewels (audio, 0:04-0:06).", True, f"{FV} 5",
         "'swiped' means stolen"),
        ("The speaker says somebody must have polished the crown jewels (audio, 0:04-0:06).", False, f"{FV} 5",
         "'polished' is not 'stolen'")]),
    ("paraphrase5", "friday.mp4", [
        ("The speaker says he is in a foul temper (audio, 0:03-0:05).", True, f"{FV} 4",
         "'a foul temper' is 'a bad humor'"),
        ("The speaker says he is in a cheerful temper (audio, 0:03-0:05).", False, f"{FV} 4",
         "'cheerful' is the opposite of 'bad'")]),
    ("paraphrase5", "nasa_13013.mp4", [
        ("The narrator says the telescope is in one of the biggest clean rooms in the world (audio, 0:04-0:08).", True,
         f"{NC} 2", "'biggest' for 'largest', 'clean rooms' for 'cleanrooms'"),
        ("The narrator says the telescope is in one of the dirtiest rooms in the world (audio, 0:04-0:08).", False,
         f"{NC} 2", "'dirtiest' is not said; the room is a cleanroom")]),
    ("paraphrase5", "countdown.mp3", [
        ("The first thing the voice says is nine (audio, 0:00-0:05).", True, CD, "the count starts at nine"),
        ("The first thing the voice says is seven (audio, 0:00-0:05).", False, CD,
         "nine and eight come before seven")]),
    ("paraphrase5", "countdown.mp3", [
        ("The third number the voice says is seven (audio, 0:00-0:07).", True, CD, "nine, eight, seven"),
        ("The fourth number the voice says is five (audio, 0:00-0:08).", False, CD, "nine, eight, seven, six")]),
    ("paraphrase5", "countdown.mp3", [
        ("The voice says ten numbers (audio, 0:00-0:19).", True, CD, "nine down to zero is ten numbers"),
        ("The voice says a dozen numbers (audio, 0:00-0:19).", False, CD, "ten numbers, not twelve")]),
    ("paraphrase5", "apollo11.mp3", [
        ("A voice calls Apollo eleven (audio, 0:00-0:03).", True, f"{AP} 1: 'Apollo 11, Houston'",
         "'eleven' in words is the 11 said"),
        ("A voice calls Apollo twelve (audio, 0:00-0:03).", False, f"{AP} 1: 'Apollo 11, Houston'",
         "the call sign is Apollo 11")]),
    ("quoted_neg", "jfk.flac", [
        ("The speaker says \"ask not\" before what your country can do for you (audio, 0:03-0:07).", True, JK,
         "'ask not what your country can do for you'"),
        ("The speaker says \"ask not\" before what your city can do for you (audio, 0:03-0:07).", False, JK,
         "'country', not 'city'")]),
    ("quoted_neg", "jfk.flac", [
        ("After the words \"ask not\", the speaker says what your country can do for you (audio, 0:03-0:07).", True,
         JK, "the clause follows 'ask not'"),
        ("After the words \"ask not\", the speaker says what your family can do for you (audio, 0:03-0:07).", False,
         JK, "'country', not 'family'")]),
    ("speaker5", "jfk.flac", [
        ("Listeners are told to ask what they can do for their country (audio, 0:08-0:10).", True, JK,
         "'ask what you can do for your country', an imperative to the listeners"),
        ("Listeners are told to ask what their city can do for them (audio, 0:08-0:10).", False, JK,
         "'your country', and what they can do for it, not it for them")]),
    ("speaker5", "jfk.flac", [
        ("The recording says ask not what your country can do for you (audio, 0:03-0:07).", True, JK,
         "the recording is the source, not a speaker"),
        ("The recording says ask what your country can do for you (audio, 0:03-0:07).", False, JK,
         "the 'not' is dropped")]),
    ("speaker5", "nasa_13013.mp4", [
        ("The broadcast mentions Goddard (audio, 0:08-0:12).", True, f"{NC} 3", "'NASA's Goddard Space Flight Center'"),
        ("The broadcast mentions Hubble (audio, 0:08-0:12).", False, f"{NC} 3", "Webb and Goddard; no Hubble")]),
    ("speaker5", "jfk.flac", [
        ("He says ask not what your country can do for you (audio, 0:03-0:07).", True, JK,
         "one man speaks throughout (Kennedy)"),
        ("She says ask not what your country can do for you (audio, 0:03-0:07).", False, JK,
         "the one voice is a man's")]),
    ("speaker5", "jfk.flac", [
        ("He says my fellow Americans (audio, 0:00-0:03).", True, JK, "one man speaks throughout"),
        ("He says my fellow Canadians (audio, 0:00-0:03).", False, JK, "'Americans'")]),
    ("sound_word", "flower.webm", [
        ("The audio is silent (audio, 0:00-0:03).", True, SIL, "digital silence"),
        ("A whistle blows (audio, 0:00-0:03).", False, SIL, "digital silence: no whistle")]),
    ("sound_word", "flower.webm", [
        ("Nothing can be heard (audio, 0:01-0:04).", True, SIL, "digital silence"),
        ("Bells chime (audio, 0:01-0:04).", False, SIL, "digital silence: no bells")]),
    ("sound_word", "flower.webm", [
        ("There is no sound at all (audio, 0:02-0:05).", True, SIL, "digital silence"),
        ("A cat meows (audio, 0:02-0:05).", False, SIL, "digital silence: no cat")]),
    ("tone", "friday.mp4", [
        ("The speaker irritably says he is in a bad humor (audio, 0:03-0:05).", True, f"{FV} 4",
         "the words are said; 'irritably' is a tone nobody can check from words"),
        ("The speaker irritably says he is in a good humor (audio, 0:03-0:05).", False, f"{FV} 4", "'bad', not 'good'")]),
    ("tone", "friday.mp4", [
        ("A cheerful voice calls out Hildy (audio, 0:00-0:01).", True, f"{FV} 1", "'Hildy!'; 'cheerful' is a tone"),
        ("A cheerful voice calls out Walter (audio, 0:00-0:01).", False, f"{FV} 1", "'Hildy', not 'Walter'")]),
]


def main() -> None:
    rows: list[dict] = []

    def add(kind: str, media: str, claim: str, label: bool, source: str, base: str | None = None) -> None:
        rows.append({"id": f"c{len(rows) + 1:03d}", "type": kind, "media": media, "claim": claim, "label": label,
                     "source": source, "base": base})

    for media, win, text, src in SPEECH:
        quote = text
        base_id = f"c{len(rows) + 1:03d}"
        add("true", media, f"The speaker says {text.rstrip('?')} (audio, {win}).", True, src)
        add("quoted", media, f"The speaker says \"{quote}\" (audio, {win}).", True, src, base_id)
        start = int(win.split("-")[0].split(":")[1])
        lead = TIME_WORDS.get(start, f"Around {start} seconds in")
        add("time_phrase", media, f"{lead}, the speaker says {text.rstrip('?')} (audio, {win}).", True, src, base_id)
        add("discourse_label", media, f"Reasoning: the speaker says {text.rstrip('?')} (audio, {win}).", True, src, base_id)
        add("attribution", media, f"We hear a voice saying that {text.rstrip('?')} (audio, {win}).", True, src, base_id)
        old, new = SWAPS[text]
        add("substituted", media, f"The speaker says {text.rstrip('?').replace(old, new)} (audio, {win}).", False,
            f"{src}; '{old}' replaced by '{new}'", base_id)
        if NEGATE.get(text):
            add("negated", media, f"The speaker says {NEGATE[text]} (audio, {win}).", False, f"{src}; negated", base_id)
        add("wrong_time", media, f"The speaker says {text.rstrip('?')} (audio, {WRONG[win]}).", False,
            f"{src}; cited where it is not said", base_id)
    for i, (word, t) in enumerate(COUNT):
        win = f"0:{t:02d}-0:{t + 1:02d}"
        src = f"countdown 9..0, one number per energy burst; burst {i + 1} at {t} s"
        base_id = f"c{len(rows) + 1:03d}"
        add("true", "countdown.mp3", f"The voice says {word} (audio, {win}).", True, src)
        add("time_phrase", "countdown.mp3", f"Around {t + 0.5:g} seconds in, the voice says {word} (audio, {win}).",
            True, src, base_id)
        add("negated", "countdown.mp3", f"The voice does not say {word} (audio, {win}).", False, f"{src}; negated",
            base_id)
        other = COUNT[(i + 3) % 10][0]
        add("substituted", "countdown.mp3", f"The voice says {other} (audio, {win}).", False,
            f"{src}; '{word}' replaced by '{other}'", base_id)
        if i % 2 == 0:
            add("discourse_label", "countdown.mp3", f"Step {i // 2 + 1}: the voice counts {word} (audio, {win}).",
                True, src, base_id)
        else:
            far = COUNT[(i + 5) % 10][1]
            add("wrong_time", "countdown.mp3", f"The voice says {word} (audio, 0:{far:02d}-0:{far + 1:02d}).", False,
                f"{src}; cited at the burst of another number", base_id)
    for media, win, claim, label, src in SOUND:
        add("sound", media, f"{claim} (audio, {win}).", label, src)
    for media, win, claim, label in VISUAL:
        add("visual_only", media, f"{claim} (visual, {win}).", label, "MANIFEST visual notes (contact sheets)")
    for media, claim, label, src, kind in FRESH:
        add(kind, media, claim, label, src)
        rows[-1]["fresh"] = True
    seen: dict[str, int] = {}
    for kind, media, group in V3:
        k = seen[kind] = seen.get(kind, -1) + 1
        split = "dev" if k % 2 == 0 else "holdout"
        for claim, label, src in group:
            add(kind, media, claim, label, src)
            rows[-1]["v3"] = split
    seen4: dict[str, int] = {}
    for kind, media, group in [*V4, *V4_PLAIN]:
        k = seen4[kind] = seen4.get(kind, -1) + 1
        split = "dev" if k % 2 == 0 else "holdout"
        plain = any(group is g for _, _, g in V4_PLAIN)
        for claim, label, src in group:
            add(kind, media, claim, label, src)
            rows[-1]["v4"] = split
            rows[-1]["verifiable"] = kind != "hedge" or plain
    seen5: dict[str, int] = {}
    for kind, media, group5 in V5:
        k = seen5[kind] = seen5.get(kind, -1) + 1
        split = "dev" if k % 2 == 0 else "holdout"
        for claim, label, src, why in group5:
            add(kind, media, claim, label, src)
            rows[-1].update({"v5": split, "why": why, "verifiable": kind != "tone"})
    with open(HERE / "claims.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r["type"]] = kinds.get(r["type"], 0) + 1
    print(len(rows), kinds)


if __name__ == "__main__":
    main()
