"""Remarks around a question that are not the question (:func:`drop_remarks`): a guess or banter about the
answer, an aside about what it is for or who said what, a claim that asks only for agreement, a letter's sign-off.

Read as the question, their places and numbers answered another one ("lowest poverty rate states, bottom 5. new
hampshire gonna win this easy" was New Hampshire's poverty rate).  They are set aside before any reader sees the
text, and the plan's notes name each one, so the card says what was not read as the question.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ....census.mentions import find_mentions
from ....text import normalize
from ..catalog import counties_named
from .vocabulary import COMMON_ENGLISH, RANKING_START, REQUEST_START, sentences

if TYPE_CHECKING:
    from ..catalog import Catalog

#: a guess or banter about what the answer will be ("bet its all california", "columbus better be #1 or im rioting",
#: "new hampshire gonna win this easy", "feels like everyone moved there lately", "lol"): the guess names places and
#: numbers that are not what is asked
_REMARK = re.compile(
    r"\b(?:i\s+bet|bet(?:ting)?|gotta\s+be|got\s+to\s+be|has\s+to\s+be|have\s+to\s+be|must\s+be|better\s+be|"
    r"gonna\s+(?:be|win|lose|crush|top)|bound\s+to\s+be|prolly|i\s+(?:guess|suspect|reckon)|my\s+(?:guess|money)\s+is|"
    r"pretty\s+sure|feels\s+like|seems\s+like|expect(?:ing)?|guessing|"
    # what others say: "everyone keeps saying ...", "people always claim ...", "my uncle swears ..."
    r"(?:every(?:one|body)|people|folks|they)\s+(?:keeps?\s+|kept\s+|always\s+|still\s+)?(?:says?|saying|said|"
    r"thinks?|claims?|claiming|tells?|telling|told|swears?|knows|moved|moving|is\s+moving)|"
    r"people\s+love\s+to|(?:\d+|five|ten|twenty|a\s+few)\s+bucks\s+says|loser\s+buys|\w+\s+ppl\s+love|lol|lmao|lmfao|rofl|haha+|smh|ngl|no\s+cap|"
    r"or\s+im\s+\w+ing|cope|i\s+think\s+(?:its|it'?s|that'?s|thats)\s+(?:cuz|because|bc)|cuz)\b", re.IGNORECASE)
#: a run-on aside about what the answer is for or who said what ("i need it for my social studies project", "my
#: teacher said its really high", "we are learning about ...", "i have to write about it for spanish class")
_ASIDE = re.compile(r"\b(?:(?:i|we)\s+(?:need|needed)\s+(?:it|this|these|them)\s+for|need\s+it\s+for|"
                    r"(?:i|we)\s+(?:have|had)\s+to\s+write|(?:we|i)\s+(?:are|am|re|m)\s+learning|"
                    r"my\s+(?:teacher|professor|boss|editor|dad|mom|friend)\s+(?:said|says|thinks|told)|"
                    r"its\s+for\s+(?:my|a|our)\s+\w+\s+(?:class|project|report|homework|paper)|"
                    r"(?:have|got|showing|with)\s+(?:some\s+)?(?:clients?|buyers?|sellers?|customers?|"
                    r"a\s+(?:client|buyer|seller))|"
                    r"(?:they|he|she|we|i)(?:['’]?re|['’]?s|['’]?m|\s+are|\s+is|\s+am)?\s+(?:thinking|considering|"
                    r"planning|hoping)"
                    r"\s+(?:of|about|to)\s+(?:moving|relocating|buying|selling|retiring|visiting))\b", re.IGNORECASE)
#: a fragment after the question that says what the asker wants it for ("want the hard numbers", "Need the boom
#: counties", "want a big % for the speech", "need the number for tonight's talking points", "- go", "don't want to
#: get fact-checked"), unless it instructs (a map, only, top N ...)
_WANT = re.compile(r"^\W*(?:i\s+)?(?:just\s+)?(?:(?:want|need|needs|wanted|gotta\s+have)\b|go\W*$|dont\s+want\b|"
                   r"don'?t\s+want\b)", re.IGNORECASE)
_INSTRUCTS = re.compile(r"\b(map|chart|table|graph|bar|only|just\s+the|exclud\w*|includ\w*|except|without|top|bottom|"
                        r"(?:largest|biggest|smallest|highest|lowest|most|least|top|bottom)\s+first|ascending|"
                        r"descending|order|"
                        r"rank\w*|sort\w*|per|each|percent\w*|share|rate|rates|ratio|average|mean|median|total|sum|"
                        r"combined|change|difference|significan\w*|margins?|moe|nominal|inflation|dollars|both|all)\b|\d",
                        re.IGNORECASE)
#: after a dash, a want with no object of its own ("- go", "- need the number for tonight's talking points"; not
#: "— I need median home values for Travis County ...", which is the request)
_WANT_GENERIC = re.compile(r"\W*(?:go\W*$|(?:i\s+)?(?:just\s+)?(?:need|want|needs)\s+(?:the|a|an|it|this|that|those|"
                           r"these|them|some)?\s*(?:number|numbers|figure|figures|stat|stats|data|answer|it|this|that)"
                           r"\b)", re.IGNORECASE)
#: a claim that asks only for agreement ("Our Cape is still the affordable one, right?"), after the request
_TAG_CLAIM = re.compile(r",\s*(?:right|correct|yeah|yes|no|isn'?t it|aren'?t they|don'?t you think|huh)\s*\?+\s*$",
                        re.IGNORECASE)
#: a letter's closing ("Sincerely, M.", "Warm regards, Dot", "Thank you kindly, Marjorie", "God bless, Ruth Ann",
#: "With love, Grandma June", "Thank you, Pastor Dale's wife, Betty"): a closing phrase and the names after it
_SIGN_OFF = re.compile(r"(?:(?<=[.!?,])\s+|^|\s+(?=(?i:sincerely|regards|cheers)))(?i:sincerely|regards|warm regards|"
                       r"kind regards|best regards|best wishes|yours truly|respectfully|cheers|thanks again|"
                       r"many thanks|with thanks|god bless|blessings|(?:with\s+)?love|warmly|take care|"
                       r"(?:thank\s+you|thanks)(?:\s+(?:so\s+much|kindly|very\s+much|again|in\s+advance))?(?=\s*,))"
                       r"\b,?(?:\s*,?\s+(?:[A-Z][\w.']*|&|"
                       r"(?i:wife|husband|mom|dad|grandma|grandpa|aunt|uncle|of|the|from|and))){0,6}\.?\s*$")
#: a greeting that names who writes ("Hi, this is Gloria again."), and a name alone closing the letter (". Gloria")
_GREETING = re.compile(r"^\W*(?:hi|hello|hey|dear\s+\w+|good\s+(?:morning|afternoon|evening))\W+(?:this\s+is|it'?s|"
                       r"i'?m|my\s+name\s+is)\s+[A-Z]\w+(?:\s+[A-Z]\w+)?(?:\s+again)?\s*[.!]\s*", re.IGNORECASE)
_NAME_ALONE = re.compile(r"(?<=[.!?])(?<!\b[SMF]t\.)(?<!\bDr\.)(?<!\b[A-Z]\.)\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\.?\s*$")
#: emoji and other pictographs (they carry no words)
SYMBOLS = re.compile("[\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\U0001f000-\U0001faff]")
#: "... or is that cope", "... or am I wrong": a tag that doubts the question's own claim
_TAG = re.compile(r"\s+or\s+(?:is\s+(?:that|it|this)\s+(?:just\s+)?(?:cope|a\s+myth|a\s+meme|just\s+me|wrong|"
                  r"a\s+stereotype|an?\s+urban\s+legend|hype|propaganda)|am\s+i\s+(?:wrong|crazy|tripping|trippin|"
                  r"imagining\s+(?:it|things)))\b(?=[?.!]*\s*$)", re.IGNORECASE)


#: a statement about a place or its people ("burlington rents are absolutely insane and nobody believes me",
#: "canyon is always called the 'cheap side' of boise"): an opinion said around the question, not what it asks
_STATEMENT = re.compile(r"^\W*(?:the\s+)?[a-z]+(?:\s+[a-z]+){0,2}\s+(?:is|are|was|were|has|have|had|keeps|seems|seem|"
                        r"looks|feels|gets|got)\b(?!\s+(?:there|it|that|this|they)\b)", re.IGNORECASE)
#: a sentence or clause that asks
_ASKS = re.compile(r"^\W*(?:what|whats|which|how|hows|is|are|does|do|did|can|could|give|show|list|rank|compare|tell)\b",
                   re.IGNORECASE)


def _statement(text: str) -> bool:
    """Whether ``text`` states something (a place and a verb) and neither asks nor sets a term of the answer."""
    return bool(_STATEMENT.match(text)) and "?" not in text and not _INSTRUCTS.search(text) and \
        not _ASKS.match(text)


def drop_remarks(question: str, cat: Catalog | None = None, *, least: int = 3) -> tuple[str, list[str]]:
    """``question`` without its remarks about the answer, and those remarks: a sentence or a closing clause (after
    a comma) that guesses or banters ("top 10 counties for median home value, bet its literally all california";
    "5 biggest cities in ohio by population. columbus better be #1 or im rioting"), and a closing tag that doubts
    ("is charlotte nc actually bigger than nashville tn or is that cope").  The places and numbers of a guess are
    not the question's: read as the question, they answered another one (the guess instead of the ranking).  A
    remark is dropped only when a question of ``least`` words or more is left (a follow-up's may be one: "and
    Missoula?"); the plan's notes name it."""
    text = " ".join(SYMBOLS.sub(" ", question).split())
    remarks: list[str] = []
    hello = _GREETING.match(text)
    if hello and hello.end() < len(text):
        remarks.append(hello.group(0).strip(" ,.!"))
        text = text[hello.end():]
    alone = _NAME_ALONE.search(text)
    if alone and (cat is None or not _names_place(alone.group(0), cat)):
        remarks.append(alone.group(0).strip(" ,."))
        text = text[:alone.start()]
    sign = _SIGN_OFF.search(text)
    if sign and sign.start() > 0:
        remarks.append(sign.group(0).strip(" ,."))
        text = text[:sign.start()]
    pieces = sentences(text)
    kept: list[str] = []
    # (without a question mark, the first sentence that asks: "top 5 fla counties by median home value. asking for my
    # sister who ...", "5 largest places in Ga. by housing units. Expect Atlanta, then Columbus")
    asks = [i for i, piece in enumerate(pieces) if REQUEST_START.match(piece) or RANKING_START.match(piece)]
    first_ask = next((i for i, piece in enumerate(pieces) if "?" in piece), asks[0] if asks else len(pieces))
    for i, piece in enumerate(pieces):
        body = piece
        if i > 0 and _TAG_CLAIM.search(body) and not _INSTRUCTS.search(body) and kept:
            # "...: Barnstable vs Dukes vs Nantucket counties. Our Cape is still the affordable one, right?"
            remarks.append(body.strip(" ?.!"))
            continue
        if i > first_ask and "?" not in body and _WANT.search(body) and not _INSTRUCTS.search(body):
            remarks.append(body.strip(" ?.!"))  # "Which 5 states have the WORST poverty rates? want the hard numbers"
            continue
        # "TOP 10 BIGGEST CITIES IN OHIO GO.": a request ending in "go"
        go = re.search(r"\s+go\W*$", body, re.IGNORECASE)
        if go and len(body[:go.start()].split()) >= 3 and not re.search(r"\b(?:did|does|do|will|would|to|can)\s*$",
                                                                          body[:go.start()], re.IGNORECASE):
            remarks.append(go.group(0).strip(" ?.!"))
            body = body[:go.start()] + _end_mark(body)
        # "Top 5 richest counties in Georgia by median household income - go", "... rate - need the number for ..."
        dash = re.search(r"\s[-—–]+\s+(?=\S)", body)
        if dash and _WANT_GENERIC.match(body[dash.end():]) and not _INSTRUCTS.search(body[dash.end():]):
            remarks.append(body[dash.end():].strip(" ?.!"))
            body = body[:dash.start()]
        if i > first_ask and "?" not in body and cat is not None and not _INSTRUCTS.search(body) and \
                not _names_place(body, cat) and not _names_measure(body, cat):
            # "which 5 Nebraska counties have the highest unemployment rate? figure hiring would be easier there",
            # "... in michigan rn? econ project due tmrw": after the ask, words that name no place, no measure and
            # no term of the answer
            remarks.append(body.strip(" ?.!"))
            continue
        if i > first_ask and "?" not in body and (_REMARK.search(body) or _ASIDE.search(body)):
            # "Key West housing units — how many are there?! curious how many places there are to stay lol": a
            # sentence of banter after the question is all remark
            remarks.append(body.strip(" ?.!"))
            continue
        # "canyon is always called the 'cheap side' of boise so how big is the gap really": a statement, then the ask
        turn = re.search(r"\s+so\s+(?=(?:how|what|which|is|are|does|do|did|can)\b)", body, re.IGNORECASE)
        if i > 0 and turn and _statement(body[:turn.start()]):
            remarks.append(body[:turn.start()].strip(" ?.!"))
            body = body[turn.end():]
        # "whats the median rent in chittenden county vermont these days, burlington rents are absolutely insane":
        # an opinion after the ask, after a comma
        comma = body.rfind(", ")
        if comma > 0 and _ASKS.match(body) and len(body[:comma].split()) >= 3 and _statement(body[comma + 2:]):
            remarks.append(body[comma + 2:].strip(" ?.!"))
            body = body[:comma] + _end_mark(body)
        tag = _TAG.search(body)
        if tag and not _REMARK.search(body[:tag.start()]):
            remarks.append(tag.group(0).strip(" ?.!"))
            body = body[:tag.start()] + body[tag.end():]
        mt = _REMARK.search(body) or _ASIDE.search(body)
        if mt is not None:
            comma = body.rfind(",", 0, mt.start())
            if comma >= 0 and len(body[comma + 1:mt.start()].split()) > 2:
                comma = -2  # the marker does not open the clause after the comma ("Williamson County, Texas since ...")
            elif comma >= 0 and cat is not None and cat.state_pattern.match(body[comma + 1:].strip().lower()):
                comma = -2  # "Out here in Custer County, Nebraska it seems like ...": the comma is the county's
            lead = body[:comma] if comma >= 0 else ""
            if comma >= 0 and len(re.findall(r"[A-Za-z0-9]+", lead)) >= 3 and not _REMARK.search(lead) and \
                    not _ASIDE.search(lead):
                remarks.append(body[comma + 1:].strip(" ?.!"))  # "..., bet its literally all california"
                body = lead + _end_mark(body)
            elif comma < 0 and len(re.findall(r"[A-Za-z0-9]+", body[:mt.start()])) >= 4 and \
                    not _REMARK.search(body[:mt.start()]) and not _ASIDE.search(body[:mt.start()]):
                # a run-on: "which counties in montana have a median age over 50 i think its cuz lots of retired ..."
                remarks.append(body[mt.start():].strip(" ?.!"))
                body = body[:mt.start()].rstrip() + _end_mark(body)
            elif comma == -1:
                remarks.append(body.strip(" ?.!"))
                body = ""
        if body.strip():
            kept.append(body.strip())
    rest = " ".join(kept)
    if not remarks or len(re.findall(r"[A-Za-z0-9]+", rest)) < least:
        return question, []
    return rest, remarks


def _names_place(text: str, cat: Catalog) -> bool:
    """Whether ``text`` names a state, a postal code, or (capitalised) a county or a Census place."""
    low = normalize(text, lower=True)
    if cat.state_pattern.search(low) or any(w in cat.state_by_abbr for w in re.findall(r"\b[A-Z]{2}\b", text)):
        return True
    names = [re.sub(r"\s+(?:county|parish|city)$", "", n.lower())
             for n in re.findall(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?", text)]
    return any(cat.localities_named(n) or counties_named(n, cat) for n in names if n not in COMMON_ENGLISH)


def _names_measure(text: str, cat: Catalog) -> bool:
    """Whether ``text`` names a measure the planner knows."""
    return any(not m.weak for m in find_mentions(normalize(text, lower=True), cat.measures))


def _end_mark(sentence: str) -> str:
    """The mark that ends ``sentence`` ("?", ".", "!"), kept when its closing clause is set aside: without it the
    sentence ran into the next one ("... incomes down Is the median ...")."""
    mt = re.search(r"[.?!]+(?=\s*$)", sentence)
    return mt.group(0) if mt else ""


__all__ = ["SYMBOLS", "drop_remarks"]
