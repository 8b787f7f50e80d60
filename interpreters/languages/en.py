"""English: the keyword interpreter's first table; its emoji and Slack shortcodes are shared."""

from interpreters.languages import Language

HOW_TO_ANSWER = 'Reply "approve" or "reject: <reason>", or use the buttons.'

LANGUAGE = Language(
    code="en",
    name="English",
    fold_accents=False,
    hint=HOW_TO_ANSWER,
    reply_help=(
        "I understand these replies:\n"
        "• to approve: approve, yes, ok, lgtm, go ahead or 👍\n"
        "• to reject: reject, no, deny or 👎, with your reason after a colon, like "
        "reject: wrong customer\n"
        "Or use the buttons on the message."
    ),
    approvals=("approve", "yes", "ok", "lgtm", "go ahead", "👍"),
    rejections=("reject", "no", "deny", "👎"),
    rejection_with_reason=("reject: wrong customer", "wrong customer"),
    tables="""
NEGATOR standalone = never|don't|dont|do not
NEGATOR = not|doesn't|does not|didn't|did not|won't|wont|will not| wouldn't|would not|can't|cant|
    cannot|can not|couldn't|could not|shouldn't|should not| mustn't|must not|isn't|is not|aren't|
    haven't|hasn't|ain't|neither|nor
APPROVE verb = approve|approved|approving|accept|accepted|allow|allowed|authorize|authorized|
     authorise|authorised|confirm|confirmed|proceed|go ahead|grant|granted|approval granted|
     permission granted
APPROVE = yes|yep|yeah|yup|affirmative|ok|okay|sure|alright|all right|fine|lgtm|agree|agreed|go|
     sounds good|looks good|all good|good to go|ship it|do it|go for it|of course|fine by me|
     works for me|hell yes|hell yeah|no objection|no objections|thumbs up|+1|👍|✅|✔|☑|👌|🆗|🟢|
    :+1:| :thumbsup:|:white_check_mark:|:heavy_check_mark:|:ok_hand:|:ok:|:ballot_box_with_check:|
     :green_circle:
REJECT verb = reject|rejected|rejecting|deny|denied|decline|declined|disallow|disallowed|
     disapprove|disapproved|refuse|refused|veto|vetoed|cancel|cancelled|canceled|abort|stop|halt
REJECT = no|nope|nah|nay|negative|no way|no-go|no go|no thanks|no thank you|no good|hell no|
     no chance|not a chance|absolutely not|definitely not|certainly not|of course not|
     don't think so|thumbs down|-1|👎|❌|❎|✖|🚫|⛔|🛑|🔴|:-1:|:thumbsdown:|:x:|
     :heavy_multiplication_x:|:no_entry_sign:|:no_entry:|:octagonal_sign:|
     :negative_squared_cross_mark:|:red_circle:
APPROVE_HINT = good|great|perfect|correct|right|valid|legit|nice|cool|awesome
REJECT_HINT = wrong|incorrect|bad|invalid|mistake|too high|too much|too many|too expensive|
     too risky|risky|suspicious|fraud|duplicate|rejection|denial|refusal
FILLER = hi|hey|hello|yo|bye|thanks|thank you|thank|thx|ty|cheers|please|pls|plz|sir|mate|boss|
     team|all|everyone|i|we|i'm|im|we're|i'll|we'll|i've|we've|will|have|has|am|already|hereby|
     just|then|so|well|now|oh|ah|really|totally|absolutely|definitely|certainly|indeed|very|much|
     a lot|again|no problem|no problems|not a problem|no prob|no probs|np|no worries|no worry|
     don't worry|no rush|no hurry|no doubt|no issue|no issues|no concerns|no complaints|
     no brainer|no-brainer|with it|with that|with this|with me|by me|from me|to me|for me|
     on my end|on my side|from my side|🙏|🎉|🚀|🙂|😊|😀|😄|💪|🙌|👏|💯|:pray:|:tada:|:rocket:|
     :slightly_smiling_face:|:smile:|:smiley:|:muscle:|:raised_hands:|:clap:|:100:|:)|:-)|:d|:p|
     ;)|:(|:-(
OBJECT = it|this|that|these|those|them|the|a|an|my|your|our|their|his|her|with|of|for|and|it's|
     that's|this one
CONNECTOR = because|because of|since|due to|bc|cuz|coz
DOUBT = maybe|perhaps|probably|possibly|unsure|dunno|idk|hmm|hm|hmmm|um|umm|uh|wait|later|tbd|
     not sure|not certain|don't know|do not know|no idea|no clue|hold on|hang on|hold off|let me|
     let's see|not yet|not now|not at all|i guess|guess so|i think|think so|kind of|kinda|
     sort of|sorta|never mind|nevermind|nvm|scratch that|oh no|🤔|🤷|:thinking_face:|:shrug:| 🙄|
    😏|🙃|😒|:roll_eyes:|:smirk:|:upside_down_face:|:unamused:
CONDITION = if|only if|unless|once|provided|providing|assuming|as long as|so long as|in case|
     otherwise|depending|depends|whether|pending|subject to|contingent
CONTRAST = but|however|though|although|actually|except|instead|rather|nevertheless|correction|
     on second thought|then again
CHANGE = change|changed|changing|half|halve|only|modify|modified|adjust|adjusted|edit|reduce|
     reduced|lower|lowered|raise|increase|decrease|double|twice|partial|partially|partly|replace|
     switch|swap|update|make it|set it
QUESTION = what|why|how|who|whom|whose|which|where|when|should|shall|can|could|would|is|are|was|
     were|do|does|did|may|might|must
COMPARE = less|more|fewer|smaller|bigger|larger|higher|cheaper|different|other|another|else|
     extra|max|maximum|min|minimum|limit|cap|capped|up to
""",
)
