#!/usr/bin/env python3
"""A document set with questions whose answers lie in known passages, for measuring retrieval
(recall@5 of vector search, word search and the hybrid; bench/documents.py and
crates/store/tests/it/retrieval_set.rs).

    /work/venv-docs-index/bin/python tests/reference/make_retrieval_set.py

Needs reportlab (the one PDF; `pip install reportlab` into any venv). Works offline, in a second.
CI never runs it; the outputs are committed (about 70 KB) in tests/reference/fixtures/retrieval/:

  library_report.pdf   a library's annual report, 6 pages, reportlab platypus (headings, wrapped
                       paragraphs: the text comes back through Confab's PDF reader, line breaks and all)
  espresso_manual.md   a coffee machine's manual
  hiking_handbook.md   a hiking club's handbook
  ops_runbook.md       an operations runbook
  rate_limiter.py      source code with docstrings
  questions.json       [{"question", "document", "answer"}]: `answer` is a phrase that occurs once in the
                       document (compare with whitespace collapsed: the PDF wraps lines); a passage that
                       contains it holds the answer.

Held-out style: each question paraphrases the passage that answers it (other words for the same
thing: "car park" for "parking garage", "kids" for "children") rather than copying it, as a person
asks about a document they have not memorised. Every document also has filler sections written from
templates with a seeded generator, in the document's own vocabulary (dates, fees, hours, the same
nouns), so that the answer competes with many passages that share the question's words.
"""
import json
import os
import pathlib
import random

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "reference" / "fixtures" / "retrieval"
os.environ["SOURCE_DATE_EPOCH"] = "1764806400"

# (heading, paragraphs) with the answers' paragraphs; filler sections are added between them.
LIBRARY = [
    ("Budget", [
        "The board approved a total operating budget of 4.2 million dollars for the year, of which the largest share "
        "went to staff salaries. Capital spending was kept separate: the trustees voted to fund the renovation of the "
        "children's wing before the planned expansion of the parking garage, which was postponed to 2027.",
    ]),
    ("Opening hours", [
        "From September the central branch stays open until nine in the evening on Thursdays, a change requested by "
        "students preparing for exams. Sunday opening remains limited to the afternoon, from one to five.",
    ]),
    ("Lending rules", [
        "Borrowers may now keep up to thirty items at once, up from twenty, and late fees on children's books were "
        "abolished entirely in March after a trial showed that returns did not slow down.",
    ]),
    ("Digital collections", [
        "E-book loans grew by 38 percent, overtaking audiobook loans for the first time; the most borrowed title in "
        "digital form was a cookbook of regional recipes.",
    ]),
    ("Volunteers", [
        "Forty-two volunteers gave a combined 5,600 hours, mostly in the homework help program and the weekly English "
        "conversation circle for newcomers.",
    ]),
    ("Makerspace", [
        "The makerspace added two laser cutters and a sewing station; sessions must be booked at least two days ahead "
        "and first-time users complete a thirty-minute safety induction.",
    ]),
]

ESPRESSO = [
    ("Descaling", [
        "Descale the machine every 200 shots if your water is hard, or every 500 shots with soft water. Fill the tank "
        "with one sachet of citric descaler dissolved in a litre of warm water, then hold the steam and hot water "
        "buttons together for five seconds to start the cycle.",
    ]),
    ("Error codes", [
        "Error E4 means the boiler did not reach temperature within three minutes; it usually points to a blown "
        "thermal fuse. Error E7 means the flow meter saw no water, which happens when the tank is seated incorrectly.",
    ]),
    ("Dialling in the grind", [
        "If a double shot runs faster than twenty seconds, make the grind finer by two steps; if it takes longer than "
        "thirty-five seconds, make it coarser. Change one variable at a time.",
    ]),
    ("Steaming milk", [
        "For microfoam, purge the steam wand, keep the tip just below the surface until the jug feels warm to the "
        "touch, then sink it deeper to spin the milk. Stop at about 60 degrees Celsius; hotter milk tastes flat.",
    ]),
    ("Warranty", [
        "The warranty covers parts and labour for two years from purchase, but not damage caused by skipping "
        "descaling; keep the receipt, as the serial number alone is not accepted as proof of purchase.",
    ]),
    ("Weekly cleaning", [
        "Backflush with the blind basket once a week using a detergent tablet, and soak the portafilter basket "
        "overnight once a month.",
    ]),
]

HIKING = [
    ("Membership", [
        "Annual membership costs 45 euros for adults and 20 euros for students under 26; families pay 80 euros "
        "regardless of the number of children.",
    ]),
    ("The turnaround rule", [
        "Every group sets a turnaround time before leaving the car park. If the summit has not been reached by that "
        "time, the group turns back, whatever the weather and however close the top seems.",
    ]),
    ("What to carry", [
        "Each member carries a head torch, a foil emergency blanket, two litres of water and a whistle; the leader "
        "also carries the first-aid kit and a satellite messenger.",
    ]),
    ("Thunderstorms", [
        "When thunder follows lightning by less than thirty seconds, leave ridges and summits immediately, spread the "
        "group out at least fifteen metres apart, and crouch on your rucksack away from lone trees.",
    ]),
    ("Route grades", [
        "Routes are graded T1 to T6. T3 routes involve exposed sections where hands are sometimes needed; members new "
        "to the club join at most T2 outings for their first three trips.",
    ]),
    ("Dogs", [
        "Dogs are welcome on outings graded T1 and T2 if kept on a lead in grazing areas, but not on overnight hut "
        "trips, where huts do not admit animals.",
    ]),
]

RUNBOOK = [
    ("Backups", [
        "Database snapshots are taken every six hours and kept for fourteen days; the weekly full backup on Sunday "
        "night is copied to the offsite bucket and kept for a year.",
    ]),
    ("Restoring a snapshot", [
        "To restore, stop the API workers first, then run restore.sh with the snapshot id; the script refuses to run "
        "while any worker still holds a connection.",
    ]),
    ("Incident severity", [
        "A SEV1 incident is one where customers cannot log in or pay; it pages the on-call engineer and the "
        "engineering manager at once, and a status page update is due within fifteen minutes.",
    ]),
    ("Certificates", [
        "TLS certificates renew automatically thirty days before expiry; if renewal fails three times in a row an "
        "alert opens a ticket for the platform team.",
    ]),
    ("On-call", [
        "On-call shifts last one week and hand over on Tuesday at ten; the outgoing engineer writes a handover note "
        "listing open incidents and silenced alerts.",
    ]),
    ("Deploy freeze", [
        "No deploys to production between Friday 16:00 and Monday 09:00 unless the change fixes a SEV1 or SEV2 "
        "incident.",
    ]),
]

QUESTIONS = [
    ("library_report.pdf", "Which construction project was given priority over the new car park?", "renovation of the children's wing"),
    ("library_report.pdf", "On which weekday can I visit the main branch late into the evening?", "until nine in the evening on Thursdays"),
    ("library_report.pdf", "Do kids still get charged when they bring books back late?", "late fees on children's books were abolished"),
    ("library_report.pdf", "How much did electronic book borrowing increase?", "E-book loans grew by 38 percent"),
    ("library_report.pdf", "How many hours did unpaid helpers contribute altogether?", "a combined 5,600 hours"),
    ("library_report.pdf", "What do I need to do before using the laser equipment for the first time?", "thirty-minute safety induction"),
    ("espresso_manual.md", "How do I begin the limescale removal program?", "hold the steam and hot water buttons together for five seconds"),
    ("espresso_manual.md", "What should I check when the display shows E7?", "Error E7 means the flow meter saw no water"),
    ("espresso_manual.md", "My coffee pours out too quickly, how should I adjust the grinder?", "make the grind finer by two steps"),
    ("espresso_manual.md", "At what temperature should I stop heating the milk?", "Stop at about 60 degrees Celsius"),
    ("espresso_manual.md", "Is a machine ruined by limescale repaired for free?", "not damage caused by skipping descaling"),
    ("espresso_manual.md", "How often should the group head be cleaned with the blank filter?", "Backflush with the blind basket once a week"),
    ("hiking_handbook.md", "What is the yearly fee for a young person still at university?", "20 euros for students under 26"),
    ("hiking_handbook.md", "What happens if we haven't reached the peak by the agreed hour?", "the group turns back"),
    ("hiking_handbook.md", "Who is responsible for bringing the medical supplies?", "the leader also carries the first-aid kit"),
    ("hiking_handbook.md", "How far apart should we stand during a lightning storm?", "at least fifteen metres apart"),
    ("hiking_handbook.md", "Which difficulty level are newcomers limited to at first?", "at most T2 outings for their first three trips"),
    ("hiking_handbook.md", "Can I bring my pet on a trip where we sleep in a mountain hut?", "not on overnight hut trips"),
    ("ops_runbook.md", "How long are the weekly complete copies retained?", "copied to the offsite bucket and kept for a year"),
    ("ops_runbook.md", "What must be shut down before bringing data back from a snapshot?", "stop the API workers first"),
    ("ops_runbook.md", "How quickly must the public status page be updated in the worst kind of outage?", "status page update is due within fifteen minutes"),
    ("ops_runbook.md", "When does the automatic HTTPS certificate renewal happen?", "renew automatically thirty days before expiry"),
    ("ops_runbook.md", "What day does the pager rotation change hands?", "hand over on Tuesday at ten"),
    ("ops_runbook.md", "Can I ship a release on the weekend?", "No deploys to production between Friday 16:00 and Monday 09:00"),
    ("rate_limiter.py", "What is the most a single client can send in one burst?", "capacity = burst"),
    ("rate_limiter.py", "How does the limiter tell a caller how long to wait before trying again?", "def retry_after"),
    ("rate_limiter.py", "How is memory kept from growing without limit when there are many clients?", "Buckets untouched for ten minutes are dropped"),
]

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]


def filler(rng, kind, n):
    """`n` paragraphs of plausible text in the document's vocabulary, none answering a question."""
    words = {
        "library": dict(
            places=["east branch", "north branch", "harbour branch", "mobile library", "reading room", "local history room"],
            things=["story time sessions", "author talks", "computer classes", "chess evenings", "film screenings", "book club meetings"],
            nouns=["visitors", "new members", "printed loans", "study room bookings", "interlibrary requests", "reference questions"],
            verbs=["rose", "fell slightly", "held steady", "doubled", "recovered"],
        ),
        "espresso": dict(
            places=["drip tray", "water tank", "bean hopper", "cup warmer", "control panel", "steam valve"],
            things=["cleaning cycles", "test shots", "pressure checks", "filter changes", "temperature readings", "seal inspections"],
            nouns=["the pump", "the gasket", "the shower screen", "the pressure gauge", "the tamper", "the brew unit"],
            verbs=["should be wiped", "can be removed", "is rinsed", "is checked", "may be replaced"],
        ),
        "hiking": dict(
            places=["valley trail", "lake circuit", "forest loop", "northern ridge", "old quarry path", "river gorge"],
            things=["evening walks", "navigation courses", "winter outings", "photography trips", "trail clean-ups", "family hikes"],
            nouns=["participants", "guides", "new routes", "trail reports", "map sheets", "club huts"],
            verbs=["was popular", "was rescheduled", "drew a crowd", "was cancelled once", "ran as planned"],
        ),
        "runbook": dict(
            places=["staging cluster", "metrics dashboard", "job queue", "log pipeline", "edge proxy", "read replica"],
            things=["load tests", "capacity reviews", "dependency upgrades", "chaos drills", "cost reports", "access audits"],
            nouns=["latency", "error rates", "disk usage", "queue depth", "cache hit ratio", "memory pressure"],
            verbs=["is reviewed", "is graphed", "is alerted on", "is sampled", "is archived"],
        ),
    }[kind]
    out = []
    for _ in range(n):
        sentences = []
        for _ in range(rng.randint(4, 6)):
            month = rng.choice(MONTHS)
            place, thing, noun, verb = (rng.choice(words[k]) for k in ("places", "things", "nouns", "verbs"))
            number = rng.randint(3, 480)
            sentences.append(rng.choice([
                f"In {month} the {place} hosted {number} {thing}, and {noun} {verb}.",
                f"{noun.capitalize()} at the {place} {verb} after {number} {thing} in {month}.",
                f"The {place} report for {month} lists {number} {thing}; {noun} {verb} over the period.",
                f"Staff at the {place} noted that {noun} {verb} once the {thing} moved to {month}.",
            ]))
        out.append(" ".join(sentences))
    return out


def with_filler(sections, rng, kind, filler_sections=4, paragraphs=3):
    """The answer sections with filler sections around them."""
    out = []
    for i, (heading, paragraphs_) in enumerate(sections):
        out.append((heading, filler(rng, kind, 1) + paragraphs_ + filler(rng, kind, 1)))
        if i % 2 == 1:
            for j in range(filler_sections // 2):
                out.append((f"{kind.capitalize()} notes {i}.{j}", filler(rng, kind, paragraphs)))
    return out


def markdown(title, sections):
    parts = [f"# {title}"]
    for heading, paragraphs in sections:
        parts.append(f"## {heading}")
        parts.extend(paragraphs)
    return "\n\n".join(parts) + "\n"


def pdf(path, title, sections):
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    story = [Paragraph(title, styles["Title"])]
    for i, (heading, paragraphs) in enumerate(sections):
        if i and i % 2 == 0:
            story.append(PageBreak())
        story.append(Paragraph(heading, styles["Heading2"]))
        story.extend(Paragraph(p.replace("&", "&amp;"), styles["BodyText"]) for p in paragraphs)
    SimpleDocTemplate(str(path), pagesize=A4, invariant=1, title=title).build(story)


CODE = '''"""A token-bucket rate limiter, one bucket per client key."""

import time


class Bucket:
    """Tokens are added continuously at `rate` per second, up to the bucket's capacity; a request
    costs one token and is refused when fewer than one remains."""

    def __init__(self, rate, burst):
        self.rate = rate
        # The most tokens the bucket holds: how many requests may arrive at once after a pause.
        self.capacity = burst
        self.tokens = burst
        self.updated = time.monotonic()

    def refill(self, now):
        elapsed = now - self.updated
        self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        self.updated = now

    def take(self, now):
        self.refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def retry_after(self, now):
        """Seconds until one token is back: sent to refused callers in the Retry-After header."""
        self.refill(now)
        return max(0.0, (1 - self.tokens) / self.rate)


class Limiter:
    """Buckets by client key (an API key, else the address)."""

    IDLE_SECONDS = 600

    def __init__(self, rate=5.0, burst=20):
        self.rate = rate
        self.burst = burst
        self.buckets = {}

    def allow(self, key, now=None):
        now = time.monotonic() if now is None else now
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket(self.rate, self.burst)
        return bucket.take(now)

    def sweep(self, now=None):
        """Buckets untouched for ten minutes are dropped, so memory stays bounded however many
        clients come and go; run it from a timer."""
        now = time.monotonic() if now is None else now
        idle = [key for key, bucket in self.buckets.items() if now - bucket.updated > self.IDLE_SECONDS]
        for key in idle:
            del self.buckets[key]
        return len(idle)


def parse_limit(text):
    """'5/s' or '300/min' as requests per second."""
    count, _, unit = text.partition("/")
    seconds = {"s": 1, "sec": 1, "min": 60, "h": 3600}[unit.strip()]
    return float(count) / seconds


def log_refusal(logger, key, wait):
    logger.info("refused %s, retry in %.1f s", key, wait)
'''


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(42)
    documents = {
        "library_report.pdf": ("Riverside Public Library: Annual Report", with_filler(LIBRARY, rng, "library")),
        "espresso_manual.md": ("Barista Pro 2 espresso machine: user manual", with_filler(ESPRESSO, rng, "espresso")),
        "hiking_handbook.md": ("Highland Hiking Club handbook", with_filler(HIKING, rng, "hiking")),
        "ops_runbook.md": ("Payments platform: operations runbook", with_filler(RUNBOOK, rng, "runbook")),
    }
    for name, (title, sections) in documents.items():
        if name.endswith(".pdf"):
            pdf(OUT / name, title, sections)
        else:
            (OUT / name).write_text(markdown(title, sections))
    (OUT / "rate_limiter.py").write_text(CODE)
    texts = {name: " ".join(" ".join(p) for _, p in sections) for name, (_, sections) in documents.items()}
    texts["rate_limiter.py"] = CODE
    for document, question, answer in QUESTIONS:
        count = " ".join(texts[document].split()).count(answer)
        assert count == 1, f"{answer!r} occurs {count} times in {document}"
    questions = [{"question": q, "document": d, "answer": a} for d, q, a in QUESTIONS]
    (OUT / "questions.json").write_text(json.dumps(questions, indent=1) + "\n")
    print(f"wrote {len(documents) + 1} documents and {len(questions)} questions to {OUT}")


if __name__ == "__main__":
    main()
