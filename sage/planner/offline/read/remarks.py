"""Remarks around a question that are not the question (:func:`drop_remarks`): a guess or banter about the
answer, an aside about what it is for or who said what, a claim that asks only for agreement, a letter's sign-off.

Read as the question, their places and numbers answered another one ("lowest poverty rate states, bottom 5. new
hampshire gonna win this easy" was New Hampshire's poverty rate).  They are set aside before any reader sees the
text, and the plan's notes name each one, so the card says what was not read as the question.
"""

from __future__ import annotations

import re

#: a guess or banter about what the answer will be ("bet its all california", "columbus better be #1 or im rioting",
#: "new hampshire gonna win this easy", "feels like everyone moved there lately", "lol"): the guess names places and
#: numbers that are not what is asked
_REMARK = re.compile(
    r"\b(?:i\s+bet|bet(?:ting)?|gotta\s+be|got\s+to\s+be|has\s+to\s+be|have\s+to\s+be|must\s+be|better\s+be|"
    r"gonna\s+(?:be|win|lose|crush|top)|bound\s+to\s+be|prolly|i\s+(?:guess|suspect|reckon)|my\s+(?:guess|money)\s+is|"
    r"pretty\s+sure|feels\s+like|seems\s+like|every(?:one|body)\s+(?:says|thinks|knows|moved|is\s+moving)|"
    r"people\s+(?:say|keep\s+saying|love\s+to)|\w+\s+ppl\s+love|lol|lmao|lmfao|rofl|haha+|smh|ngl|no\s+cap|"
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
#: a letter's closing ("Sincerely, M.", "Warm regards, Dot")
_SIGN_OFF = re.compile(r"\s+(?:sincerely|regards|warm regards|kind regards|best regards|best wishes|yours truly|"
                       r"respectfully|cheers|thanks again|many thanks|with thanks)\b,?(?:\s+[A-Z][\w.]*){0,3}\.?\s*$",
                       re.IGNORECASE)
#: emoji and other pictographs (they carry no words)
SYMBOLS = re.compile("[\u2190-\u21ff\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\U0001f000-\U0001faff]")
#: "... or is that cope", "... or am I wrong": a tag that doubts the question's own claim
_TAG = re.compile(r"\s+or\s+(?:is\s+(?:that|it|this)\s+(?:just\s+)?(?:cope|a\s+myth|a\s+meme|just\s+me|wrong|"
                  r"a\s+stereotype|an?\s+urban\s+legend|hype|propaganda)|am\s+i\s+(?:wrong|crazy|tripping|trippin|"
                  r"imagining\s+(?:it|things)))\b(?=[?.!]*\s*$)", re.IGNORECASE)


def drop_remarks(question: str) -> tuple[str, list[str]]:
    """``question`` without its remarks about the answer, and those remarks: a sentence or a closing clause (after
    a comma) that guesses or banters ("top 10 counties for median home value, bet its literally all california";
    "5 biggest cities in ohio by population. columbus better be #1 or im rioting"), and a closing tag that doubts
    ("is charlotte nc actually bigger than nashville tn or is that cope").  The places and numbers of a guess are
    not the question's: read as the question, they answered another one (the guess instead of the ranking).  A
    remark is dropped only when a question of three words or more is left; the plan's notes name it."""
    text = " ".join(SYMBOLS.sub(" ", question).split())
    remarks: list[str] = []
    sign = _SIGN_OFF.search(text)
    if sign and sign.start() > 0:
        remarks.append(sign.group(0).strip(" ,."))
        text = text[:sign.start()]
    pieces = re.split(r"(?<=[.?!])\s+", text)
    kept: list[str] = []
    first_ask = next((i for i, piece in enumerate(pieces) if "?" in piece), len(pieces))
    for i, piece in enumerate(pieces):
        body = piece
        if i > 0 and _TAG_CLAIM.search(body) and not _INSTRUCTS.search(body) and kept:
            # "...: Barnstable vs Dukes vs Nantucket counties. Our Cape is still the affordable one, right?"
            remarks.append(body.strip(" ?.!"))
            continue
        if i > first_ask and "?" not in body and _WANT.search(body) and not _INSTRUCTS.search(body):
            remarks.append(body.strip(" ?.!"))  # "Which 5 states have the WORST poverty rates? want the hard numbers"
            continue
        # "Top 5 richest counties in Georgia by median household income - go", "... rate - need the number for ..."
        dash = re.search(r"\s[-—–]+\s+(?=\S)", body)
        if dash and _WANT_GENERIC.match(body[dash.end():]) and not _INSTRUCTS.search(body[dash.end():]):
            remarks.append(body[dash.end():].strip(" ?.!"))
            body = body[:dash.start()]
        if i > first_ask and "?" not in body and (_REMARK.search(body) or _ASIDE.search(body)):
            # "Key West housing units — how many are there?! curious how many places there are to stay lol": a
            # sentence of banter after the question is all remark
            remarks.append(body.strip(" ?.!"))
            continue
        tag = _TAG.search(body)
        if tag and not _REMARK.search(body[:tag.start()]):
            remarks.append(tag.group(0).strip(" ?.!"))
            body = body[:tag.start()] + body[tag.end():]
        mt = _REMARK.search(body) or _ASIDE.search(body)
        if mt is not None:
            comma = body.rfind(",", 0, mt.start())
            if comma >= 0 and len(body[comma + 1:mt.start()].split()) > 2:
                comma = -2  # the marker does not open the clause after the comma ("Williamson County, Texas since ...")
            lead = body[:comma] if comma >= 0 else ""
            if comma >= 0 and len(re.findall(r"[A-Za-z0-9]+", lead)) >= 3 and not _REMARK.search(lead) and \
                    not _ASIDE.search(lead):
                remarks.append(body[comma + 1:].strip(" ?.!"))  # "..., bet its literally all california"
                body = lead + ("?" if body.rstrip().endswith("?") else "")
            elif comma < 0 and len(re.findall(r"[A-Za-z0-9]+", body[:mt.start()])) >= 4 and \
                    not _REMARK.search(body[:mt.start()]) and not _ASIDE.search(body[:mt.start()]):
                # a run-on: "which counties in montana have a median age over 50 i think its cuz lots of retired ..."
                remarks.append(body[mt.start():].strip(" ?.!"))
                body = body[:mt.start()]
            elif comma == -1:
                remarks.append(body.strip(" ?.!"))
                body = ""
        if body.strip():
            kept.append(body.strip())
    rest = " ".join(kept)
    if not remarks or len(re.findall(r"[A-Za-z0-9]+", rest)) < 3:
        return question, []
    return rest, remarks


__all__ = ["SYMBOLS", "drop_remarks"]
