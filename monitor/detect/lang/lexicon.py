"""Word lists of general English that the text analysis reads: data only, no logic.

Every list here is ordinary English usage (function words, negators, common verbs, synonym and
antonym groups, the stock phrases of reminders and annoyance), written from general knowledge of
the language, not from any labelled pair. The pair scorer learns how much each signal counts;
these tables only say which words carry which signal.
"""

from __future__ import annotations

import re
from typing import Final


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _groups(text: str) -> dict[str, str]:
    """``head: word word ...`` lines (continued by indentation) -> word -> head."""
    out: dict[str, str] = {}
    for line in re.sub(r"\n\s+", " ", text).strip().splitlines():
        head, _, rest = line.partition(":")
        for w in (head, *rest.split()):
            out.setdefault(w.strip(), head.strip())
    return out


#: Function words: they carry grammar, not content.
STOPWORDS: Final = word_set("""
a an the and or but nor of to in on at for with by from as into onto over under about than then
so if when while until till before after during per via up down out off again also just only even
is are was were be been being am do does did done doing have has had having will would shall
should must can could may might need needs ought
i me my mine myself we us our ours you your yours he him his she her they them their it its this
that these those there here what which who whom whose why how where all any each every some
other such own same too very more most much many few both either neither
please pls plz thanks thank ok okay yes yeah yep sure now still already really actually right
one thing things way lot bit kind sort like through across within between against
let lets get got gonna wanna gotta hey hi hello so well oh um uh hmm also maybe perhaps ever
""")

#: Verbs nearly every instruction carries; they say little about *which* instruction it is.
#: The verbs that hedge an instruction ("I think we should …") are among them.
GENERIC_VERBS: Final = word_set("""
keep use make set put get go stay remain leave give take want need do write run add have try
ensure sure note always everything anything something stuff see look let start continue
think feel guess believe suppose reckon goes went gone everytime
""")

#: Words that negate what follows in their clause.
NEGATORS: Final = word_set("not no never nothing none nobody nowhere neither nor without cannot")
#: What may stand before a request's verb to negate it ("do not", "never", "don't").
NEGATING_OPENERS: Final = frozenset({"do", "not", "never", "dont", "don't"})

#: Auxiliaries, modals and copulas: a "not" after one negates the predicate ("should not"); a
#: "not" after a noun names a rejected alternative ("tabs not spaces").
AUXILIARIES: Final = word_set("""
do does did is are was were be been am will would shall should must can could may might need
have has had ought to if whether why or and but just please
""")

#: Words negative in themselves ("keep it disabled", "main.tex is off limits"): read by the
#: second, looser polarity (``Unit.polarity_loose``).
NEGATIVE_WORDS: Final = word_set("""
disabled hidden excluded omitted forbidden banned prohibited disallowed untouched unchanged
alone off-limits without none nothing nobody neither off free absent blocked
""")

#: Verbs that ask for the absence of their object ("avoid X" is "do not X").
NEGATIVE_VERBS: Final = word_set("""
avoid avoids avoided avoiding refrain skip skips skipping stop stops stopping quit cease ceases
omit omits omitted omitting exclude excludes excluded excluding
""")

#: Contractions written without their apostrophe in fast typing ("dont" -> "do not").
BARE_CONTRACTIONS: Final = {
    "dont": "do not",
    "doesnt": "does not",
    "didnt": "did not",
    "wont": "will not",
    "cant": "can not",
    "isnt": "is not",
    "arent": "are not",
    "wasnt": "was not",
    "werent": "were not",
    "shouldnt": "should not",
    "wouldnt": "would not",
    "couldnt": "could not",
    "havent": "have not",
    "hasnt": "has not",
    "hadnt": "had not",
    "mustnt": "must not",
    "neednt": "need not",
    "aint": "is not",
    "im": "i am",
    "ive": "i have",
    "youre": "you are",
    "youve": "you have",
    "theyre": "they are",
    "thats": "that is",
    "whats": "what is",
    "theres": "there is",
}

#: Shortened prepositions read as their words before anything else ("excl. tables" is
#: "excluding tables", so it negates what "excluding" negates).
SHORT_WORDS: Final = {"excl": "excluding", "incl": "including", "w/": "with", "w/o": "without"}

#: Short forms and their full words (the prefix rule already covers "config" ~ "configuration").
ABBREVIATIONS: Final = {
    "db": "database",
    "dbs": "database",
    "k8s": "kubernetes",
    "pkg": "package",
    "msg": "message",
    "msgs": "message",
    "req": "request",
    "reqs": "request",
    "resp": "response",
    "pic": "picture",
    "pics": "picture",
    "img": "image",
    "imgs": "image",
    "info": "information",
    "dept": "department",
    "mgr": "manager",
    "mgmt": "management",
    "govt": "government",
    "approx": "approximately",
    "max": "maximum",
    "mins": "minute",
    "hr": "hour",
    "hrs": "hour",
    "wk": "week",
    "wks": "week",
    "yr": "year",
    "yrs": "year",
    "qty": "quantity",
    "amt": "amount",
    "num": "number",
    "nums": "number",
    "w/": "with",
    "w/o": "without",
    "b4": "before",
    "u": "you",
    "ur": "your",
    "thru": "through",
    "tho": "though",
    "bc": "because",
    "cuz": "because",
    "asap": "soon",
    "eod": "end_of_day",
    "eow": "end_of_week",
    "env": "environment",
    "envs": "environment",
    "repo": "repository",
    "repos": "repository",
    "dir": "directory",
    "dirs": "directory",
    "doc": "document",
    "docs": "documentation",
    "prod": "production",
    "dev": "develop",
    "auth": "authentication",
    "perf": "performance",
    "deps": "dependency",
    "dep": "dependency",
    "src": "source",
    "tmp": "temporary",
    "temp": "temporary",
    "eng": "engineering",
    "mktg": "marketing",
    "biz": "business",
    "acct": "account",
    "ref": "reference",
    "refs": "reference",
    "intl": "international",
    "natl": "national",
    "stats": "statistics",
    "admin": "administrator",
    "ppl": "people",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "ty": "thanks",
    "lmk": "tell",
    "sth": "something",
    "smth": "something",
    "char": "character",
    "chars": "character",
    "config": "configuration",
    "configs": "configuration",
    "param": "parameter",
    "params": "parameter",
    "arg": "argument",
    "args": "argument",
    "secs": "second",
    "func": "function",
    "funcs": "function",
    "var": "variable",
    "vars": "variable",
    "attr": "attribute",
    "attrs": "attribute",
    "cert": "certificate",
    "certs": "certificate",
    "spec": "specification",
    "specs": "specification",
    "impl": "implementation",
    "avg": "average",
    "txn": "transaction",
    "txns": "transaction",
    "addr": "address",
    "qtr": "quarter",
    "prev": "previous",
    "passwd": "password",
}

#: Irregular past forms and the base they are matched as.
IRREGULAR: Final = {
    "kept": "keep",
    "made": "make",
    "wrote": "write",
    "written": "write",
    "sent": "send",
    "built": "build",
    "ran": "run",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "chose": "choose",
    "chosen": "choose",
    "hid": "hide",
    "held": "hold",
    "broke": "break",
    "broken": "break",
    "spoke": "speak",
    "spoken": "speak",
    "froze": "freeze",
    "frozen": "freeze",
    "began": "begin",
    "begun": "begin",
    "drew": "draw",
    "drawn": "draw",
    "shown": "show",
    "found": "find",
    "bought": "buy",
    "sold": "sell",
    "told": "tell",
    "thought": "think",
    "brought": "bring",
    "caught": "catch",
    "taught": "teach",
    "paid": "pay",
    "laid": "lay",
    "led": "lead",
    "met": "meet",
    "read": "read",
    "set": "set",
    "cut": "cut",
    "shut": "shut",
    "split": "split",
    "spent": "spend",
    "lent": "lend",
    "lost": "lose",
    "won": "win",
    "got": "get",
    "gotten": "get",
    "went": "go",
    "gone": "go",
    "did": "do",
    "done": "do",
    "saw": "see",
    "seen": "see",
    "knew": "know",
    "known": "know",
    "grew": "grow",
    "grown": "grow",
    "threw": "throw",
    "thrown": "throw",
    "fell": "fall",
    "fallen": "fall",
    "felt": "feel",
    "meant": "mean",
    "understood": "understand",
    "forgot": "forget",
    "forgotten": "forget",
    "rewrote": "rewrite",
    "rewritten": "rewrite",
}

#: British spellings and the American forms they are matched as.
SPELLING: Final = {
    "colour": "color",
    "colours": "colors",
    "favourite": "favorite",
    "behaviour": "behavior",
    "honour": "honor",
    "labour": "labor",
    "neighbour": "neighbor",
    "centre": "center",
    "centres": "centers",
    "metre": "meter",
    "metres": "meters",
    "litre": "liter",
    "litres": "liters",
    "theatre": "theater",
    "licence": "license",
    "defence": "defense",
    "offence": "offense",
    "catalogue": "catalog",
    "dialogue": "dialog",
    "programme": "program",
    "grey": "gray",
    "cheque": "check",
    "tyre": "tire",
    "aluminium": "aluminum",
    "cancelled": "canceled",
    "cancelling": "canceling",
    "travelled": "traveled",
    "travelling": "traveling",
    "modelling": "modeling",
    "labelled": "labeled",
    "labelling": "labeling",
    "judgement": "judgment",
    "ageing": "aging",
    "enrolment": "enrollment",
    "fulfil": "fulfill",
    "email": "email",
    "e-mail": "email",
    "okay": "ok",
}
#: Endings spelled -ise / -yse in British English ("organise", "analyse").
BRITISH_ENDINGS: Final = (
    ("isation", "ization"),
    ("ising", "izing"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("ise", "ize"),
    ("yse", "yze"),
    ("ysed", "yzed"),
    ("ysing", "yzing"),
)
#: Words ending in -ise that are not British spellings of -ize.
ISE_WORDS: Final = word_set("""
advise advertise arise comprise compromise concise despise devise disguise enterprise excise
exercise expertise franchise improvise incise merchandise noise otherwise precise premise
promise raise revise rise supervise surprise televise treatise wise chemise cruise paradise
practise praise poise anise bruise
""")

#: Synonym groups: each word stands for its group's head, so a paraphrase shares concepts with
#: what it restates. Common words of instructions across domains; one group per line.
SYNONYMS: Final = _groups("""
remove: delete erase purge strip eliminate discard trash wipe scrap cut drop ditch dump toss nuke
add: include insert append attach incorporate
keep: retain preserve maintain stay remain hold
use: utilise utilize employ apply
avoid: skip omit exclude refrain bypass
change: modify alter edit tweak adjust amend revise touch
create: generate produce make build draft compose author
check: verify validate confirm double-check inspect examine audit
test: tests testing
send: email forward submit share deliver mail
publish: release ship deploy launch roll post
short: brief concise terse succinct compact
long: lengthy verbose wordy
big: large huge giant massive
small: little tiny minor
fast: quick rapid speedy swift
start: begin commence kick
stop: halt cease end finish terminate
tell: inform notify alert ping advise
show: display present render surface
hide: conceal mask suppress
file: document
folder: directory
picture: image photo photograph graphic illustration
cost: price expense fee charge
budget: spend spending
customer: client buyer
error: bug defect fault glitch
problem: issue trouble
meeting: call sync standup
message: note
title: heading headline header
reply: respond answer
copy: duplicate clone replicate
move: relocate transfer shift
merge: combine consolidate join unify
split: separate divide break
schedule: book arrange
cancel: scrap abort
approve: authorise authorize sanction endorse
reject: decline refuse deny
mention: reference cite name
format: style layout formatting
fix: repair correct resolve patch
write: type
read: review
talk: speak
ask: request query
buy: purchase order
sell: vend
help: assist support
need: require
wait: pause hold
finish: complete wrap
update: refresh
record: log
link: url hyperlink
number: figure digit
amount: quantity total sum
word: term phrase expression wording
page: sheet
day: daily
week: weekly
month: monthly
year: yearly annual annually
weekday: workday weekdays workdays
morning: am
evening: pm afternoon
boss: manager supervisor lead
employee: staff worker personnel
friendly: warm approachable
formal: professional
casual: informal relaxed
simple: plain basic easy
important: critical crucial essential key vital
exact: precise accurate
always: consistently
everyone: everybody
nobody: noone
anywhere: anyplace
""")

#: Antonym pairs, by concept key (see ``normalise.key``) or word: a word and its opposite stand
#: for one pole with opposite signs, so "enable X" and "disable X" share the pole and clash in
#: sign (a flip without a "not"). No word here is a negator: those count as negations.
ANTONYM_PAIRS: Final = tuple(
    tuple(p.split("/"))
    for p in sorted(
        word_set(
            """
enable/disable add/remove add/avoid put/remove keep/remove keep/avoid allow/block allow/forbid
allow/prohibit allow/ban permit/forbid allow/disallow allowed/forbidden allowed/banned
allowed/prohibited permitted/forbidden enable/off show/hide visible/hidden public/private
upper/lower uppercase/lowercase before/after open/close start/stop accept/reject approve/reject
increase/decrease first/last encrypt/decrypt lock/unlock install/uninstall
subscribe/unsubscribe merge/split together/separately expand/collapse formal/informal
formal/casual long/short big/small early/late earlier/later inside/outside internal/external
local/remote online/offline manual/automatic manually/automatically sync/async
synchronous/asynchronous required/optional mandatory/optional light/dark ascending/descending
top/bottom plural/singular active/passive push/pull import/export true/false pass/fail win/lose
up/down oldest/newest latest/earliest highest/lowest strict/lenient strict/loose tight/loose
mute/unmute pause/resume hard/soft bold/plain wide/narrow cheap/expensive fast/slow
weekday/weekend morning/evening daily/weekly north/south east/west left/right inbound/outbound
incoming/outgoing input/output keep/overwrite keep/replace capitalize/lowercase upload/download
buy/sell horizontal/vertical portrait/landscape summer/winter monthly/weekly yearly/monthly
single/double odd/even asc/desc past/future online/in-person remote/onsite
"""
        )
    )
)

#: Phrasal verbs read as the one verb they mean, so they meet their synonyms and antonyms.
PHRASES: Final = {
    "leave out": "omit",
    "leave off": "omit",
    "leave in": "keep",
    "leave on": "keep",
    "strip off": "remove",
    "strip out": "remove",
    "keep out": "omit",
    "put in": "include",
    "put back": "restore",
    "take out": "remove",
    "take off": "remove",
    "cut out": "remove",
    "get rid of": "remove",
    "throw away": "discard",
    "turn on": "enable",
    "switch on": "enable",
    "turn off": "disable",
    "switch off": "disable",
    "shut off": "disable",
    "roll back": "revert",
    "sign off on": "approve",
    "sign off": "approve",
    "hold off on": "postpone",
    "hold off": "postpone",
    "put off": "postpone",
    "push back": "postpone",
    "set up": "configure",
    "look at": "check",
    "look into": "investigate",
    "go through": "review",
    "write down": "record",
    "write up": "write",
    "point out": "mention",
    "bring up": "mention",
    "make sure": "ensure",
    "double check": "check",
    "double-check": "check",
    "carry on": "continue",
    "keep going": "continue",
    "stick to": "use",
    "stick with": "use",
    "go with": "use",
    "opt for": "use",
    "steer clear of": "avoid",
    "stay away from": "avoid",
    "keep away from": "avoid",
    "give up": "stop",
    "lower case": "lowercase",
    "upper case": "uppercase",
    "all caps": "uppercase",
    "in person": "in-person",
    "off limits": "off-limits",
    "out of bounds": "off-limits",
    "not allowed": "forbidden",
    "on site": "onsite",
    "e mail": "email",
    # "every time" says when, as "always" does, and names no time ("… together every time")
    "every time": "everytime",
    "each time": "everytime",
    "at most": "max",
    "at least": "min",
    "up to": "max",
    "no later than": "before",
    "no earlier than": "after",
    "ahead of": "before",
    "prior to": "before",
}

#: How a speaker marks that they said it before: "I (already / clearly / just …) said".
_SAID_HOW: Final = r"(?:(?:already|literally|clearly|just|specifically|explicitly|expressly)\s+)?"
#: Phrases that say the message repeats something said before.
REMINDER: Final = re.compile(
    r"\bagain\b|\bonce more\b|\bone more time\b|\breminder\b|\bremind(?:ing)?\b|"
    r"\bremember\b|\bdon'?t forget\b|\bdo not forget\b|\bhow many times\b|"
    # "as I said", and "after we agreed": the earlier word is what the later one goes against
    rf"\b(?:as|like|after|although|though)\s+(?:i|we)\s*(?:'ve|have|\s+was|\s+were)?\s+"
    rf"{_SAID_HOW}(?:said|mentioned|talked about|indicated|flagged|pointed out|specified|stressed|"
    r"emphasi[sz]ed|highlighted|"
    r"noted|told|asked|wrote|explained|agreed|discussed|requested|stated|say|tell|write|mention|"
    r"saying)\b|"
    r"\bas previously (?:instructed|mentioned|said|discussed|agreed|stated|requested|noted)\b|"
    # "How I told you before": how non-native writers often say "as I told you".
    r"\bhow (?:i|we) (?:told you|said|mentioned|wrote|asked)\b|"
    rf"\b(?:i|we)\s*(?:'ve|ve|have)?\s+{_SAID_HOW}(?:said|told you|asked you|asked for|"
    r"mentioned|explained)\b|\btold you\b|\balready (?:said|asked|told|mentioned)\b|"
    r"\bas\s+(?:noted|mentioned|discussed|agreed|requested|stated|said|instructed|asked|"
    r"indicated|specified|explained|pointed out|flagged|stressed)\b|"
    r"\bper my (?:earlier|previous|last|first|initial|original)\b|\bearlier i\b|\bbefore i\b|"
    r"\bper the (?:first|initial|original|earlier)\b|"
    r"\b(?:i did mention|i did say|i did ask|i did tell you|we did discuss)\b|"
    r"\bicymi\b|\bin case you missed it\b|\bbumping this\b|"
    r"\b(?:asked|said|requested|wrote) (?:originally|initially)\b|"
    r"\bthe (?:original|initial) (?:list|brief|instructions?|request|rules)\b|"
    r"\bthe rules? (?:i|we) (?:set|gave|made|laid down)\b|"
    r"\b(?:twice|three times)\b|\bfor (?:what is now )?the (?:second time|third time|fourth time|"
    r"last time|fifth time|hundredth time|umpteenth time|nth time)\b|"
    r"\bi keep (?:saying|telling|asking)\b|\bkeep forgetting\b|\bstill\b|\bjust to be clear\b|"
    r"\bonce again\b|\brepeat(?:ing)?\b|\breiterat\w*\b|\b(?:as|like) before\b|"
    r"\bper (?:my|our|the) (?:note|message|request|instructions?|brief|ground rules|rules)\b|"
    r"\bsame (?:note|point|comment|thing) as (?:last time|before)\b|\bsame as last time\b|"
    # "a third time", and "this is the fourth time"
    r"\b(?:a|is the|'s the) (?:second time|third time|fourth time|fifth time|umpteenth time|"
    r"nth time)\b|"
    r"\b(?:\d+|several|many|a few|multiple) times (?:now|already)\b|"
    r"\bthe first time (?:i|we) (?:asked|said|mentioned)\b|"
    r"\bwe(?:'ve| have)? (?:literally |already |just )?(?:covered|been over|gone over|went over|"
    r"went through|discussed|talked about) (?:this|that)\b",
    re.IGNORECASE,
)

#: The words the reminder and annoyance phrases turn on: typed with a slip ("mentoined",
#: "agian", "seriusly") they are still read as the cue (``normalise.SLIPS``).
CUE_WORDS: Final = word_set("""
mentioned mentioning mention already again reminder remind remember repeat repeating literally
clearly specifically explicitly expressly previously instructed discussed requested explained
seriously times forget forgetting before earlier originally initially original initial annoying
frustrating listen attention believe twice told asked
""")
#: Slips of those words, and of the request verbs (``VERBS``), that are words of their own.
SLIPS_THAT_ARE_WORDS: Final = word_set("forge strat")

#: Marks of annoyance beside capitals and repeated "!".
FRUSTRATION: Final = re.compile(
    r"\bseriously\b|\bugh+\b|\bwtf\b|\bcome on\b|\bwhy (?:are|is|did|do|does|would|the hell)\b|"
    r"\bstop ignoring\b|\bnot again\b|\bfor god'?s sake\b|\bfor real\b|\bannoying\b|"
    r"\bfrustrat\w*\b|\bcome on\b|\bidiot\w*\b|\bcan'?t believe\b|\bhow hard\b|\bpay attention\b|"
    r"\blisten\b|\bwhat did i (?:say|tell)\b|\bfor the love of\b|\bplease just\b|"
    # "I don't know how else to say it", "how many ways can I put this"
    r"\bhow else (?:to|can i|do i) (?:say|put|explain)\b|\bhow many ways\b",
    re.IGNORECASE,
)

#: Phrases that announce a changed value or a withdrawn instruction.
UPDATE: Final = re.compile(
    # "B rather than A" contrasts, as "B, not A" does; "I'd rather" changes.
    r"\binstead\b|\bactually\b|\brather\b(?! than\b)|"
    # A switch names where to: "the pump must never switch" is a rule, not a change.
    r"\bswitch(?:ed|ing)?\s+(?:\S+\s+){0,3}?(?:to|over|back|from)\b|"
    # "any change to the API" names a change; "change it to 20" makes one.
    # (The look-behinds follow the word: before it, they would run at every position.)
    r"\bchange(?<!\bany change)(?<!\ba change)(?<!\bthe change)(?<!\bevery change)"
    r"(?<!\beach change)(?<!\bno change)[sd]? (?:it |that |this )?to\b|"
    r"\bfrom now on\b|\bgoing forward\b|\bno longer\b|\banymore\b|\bany more\b|\breplace[sd]?\b|"
    r"\bscratch that\b|\bcorrection\b|\bchanged (?:my|his|her|their|our) mind\b|"
    r"\bon second thought\b|\bnew plan\b|"
    # "Forget the limit" withdraws a rule; "don't forget the limit" reminds of it.
    r"\bforget(?<!n't forget)(?<!not forget)(?<!dont forget)(?<!never forget) "
    r"(?:about )?(?:the|that|it|my)\b|"
    # "ignore the old limit" withdraws a rule; "it must ignore broadcasts" is one.
    r"\bignore(?<!n't ignore)(?<!not ignore)(?<!dont ignore)(?<!never ignore)(?<!\bto ignore)"
    r"(?<!should ignore)(?<!must ignore)(?<!always ignore)(?<!will ignore)\b|"
    r"\bnever ?mind\b|\bdon'?t worry about\b|\bno need\b|\bdrop the\b|\bmoving to\b|"
    r"\bmove to\b|\bturns out\b|\bwe decided\b|\bdecided\b",
    re.IGNORECASE,
)
#: Weaker hints of a change: common in restatements too ("do it now"), so scored apart.
UPDATE_WEAK: Final = re.compile(
    r"\bnow\b|\bnew\b|\bmake it\b|\bupdate[sd]?\b|\brevis\w+\b|\bchange[sd]?\b|\bthis time\b",
    re.IGNORECASE,
)

#: A contrast that names the rejected alternative: "B, not A", "B instead of A", "rather than A".
CONTRAST: Final = re.compile(
    r"(?:,|\band)\s*not\s+(?P<a>[^,.;!?]+)|\binstead of\s+(?P<b>[^,.;!?]+)|"
    r"\brather than\s+(?P<c>[^,.;!?]+)|\bin place of\s+(?P<d>[^,.;!?]+)|"
    r"\bnot\s+(?P<e>[^,.;!?]+?)\s+but\b|\bover\s+(?P<f>[^,.;!?]+?)\s+(?:please|thanks)?$",
    re.IGNORECASE,
)

#: Words that open an acknowledgement or thanks.
ACK_OPENERS: Final = word_set("""
ok okay k kk cool great nice thanks thank thx ty perfect awesome lgtm good excellent wonderful
yes yep yeah yup sure got sounds love amazing fantastic brilliant neat sweet ah oh wow noted
understood alright fine appreciated appreciate cheers gotcha
""")

#: Words that open a report of how things are rather than a request.
REPORT_OPENERS: Final = re.compile(
    r"^(?:fyi|btw|hmm+|looks like|it looks|seems|it seems|apparently|i think|i guess|i noticed|"
    r"i see|i wonder|not sure|just noticed|so far|i just|i found|i checked|i ran|i tried|"
    r"i was|we were|it was|there was|there were|there is|there are|currently|right now|today|"
    r"yesterday|last week|this morning|the client said|they said|he said|she said|"
    r"according to|note that|for context|context:|background:|update:|status:)\b",
    re.IGNORECASE,
)

WH_WORDS: Final = word_set("what how why when where which who whom whose")
#: Auxiliaries that open a yes/no question ("did you", "is it").
QUESTION_AUX: Final = word_set("""
is are was were am do does did has have had can could would will shall should may might
isnt arent wasnt didnt doesnt dont wont cant shouldnt wouldnt couldnt
""")
SUBJECTS: Final = word_set("""
i we you it they he she this that there these those someone anyone everyone anybody
""")
#: Verbs of a polite request that ask for information rather than work ("can you explain …?").
ASKING_VERBS: Final = word_set("""
explain tell show describe clarify summarise summarize remind confirm say walk elaborate recap
""")
#: Words that make a statement a rule ("X must …", "X goes through review").
OBLIGATION: Final = word_set("""
must should shall ought need needs please ensure always never only require requires required
mandatory remember
""")
#: Openers that only soften or connect ("also", "ok so"): skipped when finding the first verb.
FILLERS: Final = word_set("""
please pls plz also and then now next just so ok okay but oh hey hi finally first lastly plus
still again reminder quick note btw one more thing um well alright right yes yeah to
""")

#: Common English verbs in their base form: a sentence opening with one (after fillers) is an
#: imperative. General vocabulary of requests in any domain.
VERBS: Final = word_set("""
accept add adjust align allow analyse analyze answer apply approve archive arrange ask assign
attach avoid back bake be begin block bold book break bring build bump buy calculate call
cancel capitalise capitalize cap carry catch cc bcc center change charge check choose cite
clarify clean clear close collapse collect color combine come commit compare compile complete
compress confirm connect consider contact continue convert copy correct count cover create
credit crop cut date deal debug decide decline deduct define delete deliver deploy describe
design detail disable discard display ditch do document double download draft drop dump edit
email embed enable encrypt end enter estimate exclude expand explain export extract fetch file
fill filter finish fix flag follow force format forward freeze get give go group handle hide
highlight hold ignore import include increase indent index insert install invite italicise
italicize join keep label lay lead leave let limit link list load lock log look lower make mark
match measure mention merge migrate mind move name note notify number omit open order organise
organize output overwrite pack pad paste pause pay pick pin place plan plot point post prefer
prepare print prioritise prioritize process produce proofread protect provide publish pull push
put quote raise rank rate read rebase record redact reduce refer refactor refresh reject
release remember remind remove rename render reorder repeat replace reply report request
require rerun reset resize resolve respect respond restart restore resume retry return reuse
review revise rewrite rotate round run save scale schedule scroll search select send separate
set share shift ship shorten show sign skip sort specify spell split squash stage start stay
stick stop store stream strip submit summarise summarize swap switch sync tag take talk target
test thank toss track train transfer translate trim try turn type uncheck underline undo unify
unlock update upgrade upload use validate verify wait warn watch wrap write zip
""")

#: Pronouns and determiners that open a subject ("the build is …", "it works").
SUBJECT_OPENERS: Final = word_set("""
the a an this that these those it its there they he she we i our my their his her your you
someone somebody everyone nobody everything nothing
""")

#: Finite verbs of description: copulas and common irregular pasts ("it was", "they sent").
FINITE: Final = word_set("""
is are was were has had looks look seem seems appears spent took went ran got made broke grew
fell found saw came became began wrote built sent felt lost paid hit gave told thought kept
works worked fails failed failing broke breaks passes passed shows showed says said
""")

#: Words of a limit, by the side they bound: "under 20", "at most 20", "max 20" and "no more
#: than 20" all set an upper bound (a negation that governs one of these turns the bound, not
#: the instruction, so "don't exceed 20" is "at most 20"). Comparatives count only before
#: "than" ("a lower tier" bounds nothing).
BOUND_AT_MOST: Final = word_set("under below within beneath max maximum cap capped limit")
BOUND_AT_LEAST: Final = word_set("over above exceed exceeds exceeding beyond min minimum")
COMPARATIVE_AT_MOST: Final = word_set("less fewer shorter smaller lower cheaper")
COMPARATIVE_AT_LEAST: Final = word_set("more longer larger bigger higher greater")

#: Words for numbers spelled out.
NUMBER_WORDS: Final = {
    **{
        w: i
        for i, w in enumerate(
            [
                "zero",
                "one",
                "two",
                "three",
                "four",
                "five",
                "six",
                "seven",
                "eight",
                "nine",
                "ten",
                "eleven",
                "twelve",
                "thirteen",
                "fourteen",
                "fifteen",
                "sixteen",
                "seventeen",
                "eighteen",
                "nineteen",
                "twenty",
            ]
        )
    },
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "dozen": 12,
}
#: Multipliers written after a number ("10k", "2m").
SUFFIX_MULTIPLIERS: Final = {"k": 1_000, "m": 1_000_000, "bn": 1_000_000_000}
