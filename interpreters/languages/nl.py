"""Dutch: "goedgekeurd", "afgekeurd: te duur"; "niet" negates before or after the verb."""

from interpreters.languages import Language

LANGUAGE = Language(
    code="nl",
    name="Nederlands",
    negation_after=True,
    hint='Antwoord "goedgekeurd" of "afgekeurd: <reden>", of gebruik de knoppen.',
    reply_help=(
        "Ik begrijp deze antwoorden:\n"
        "• om goed te keuren: goedgekeurd, ja, ok, akkoord, prima of 👍\n"
        "• om af te keuren: afgekeurd, nee, afgewezen of 👎, met de reden na een dubbele punt, "
        "zoals afgekeurd: verkeerde klant\n"
        "Of gebruik de knoppen bij het bericht."
    ),
    approvals=("goedgekeurd", "ja", "ok", "akkoord", "prima", "👍"),
    rejections=("afgekeurd", "nee", "afgewezen", "👎"),
    rejection_with_reason=("afgekeurd: verkeerde klant", "verkeerde klant"),
    causes={
        "The reply has no words.": "Het antwoord bevat geen woorden.",
        "The reply reads as a question.": "Het antwoord leest als een vraag.",
        'The reply is unsure or asks to wait ("{}").': 'Het antwoord twijfelt of vraagt om te wachten ("{}").',
        'The reply sets a condition ("{}").': 'Het antwoord stelt een voorwaarde ("{}").',
        'The reply takes something back or makes an exception ("{}").': 'Het antwoord neemt iets terug of maakt een uitzondering ("{}").',
        'The reply asks for a change ("{}").': 'Het antwoord vraagt om een wijziging ("{}").',
        "The reply both approves and rejects.": "Het antwoord keurt tegelijk goed en af.",
        'An approval cannot carry "{}": it may change the call.': 'Een goedkeuring kan "{}" niet bevatten: dat kan de aanroep veranderen.',
        "The reply negates a negation.": "Het antwoord ontkent een ontkenning.",
        'Cannot tell which verdict "{}" negates.': 'Onduidelijk welk besluit "{}" ontkent.',
        'Cannot tell what "{}" refers to.': 'Onduidelijk waar "{}" op slaat.',
        "No verdict found.": "Geen besluit gevonden.",
        'Cannot tell what "{}" after the verdict means.': 'Onduidelijk wat "{}" na het besluit betekent.',
        'Put a reason after a colon: "reject: <reason>".': 'Zet de reden na een dubbele punt: "afgekeurd: <reden>".',
        "The reply quotes a verdict: answer without the quote.": "Het antwoord citeert een besluit: antwoord zonder het citaat.",
        "The reply reads as an approval in one language, a rejection in another.": "Het antwoord leest in de ene taal als goedkeuring, in een andere als afwijzing.",
    },
    tables="""
NEGATOR standalone = nooit
NEGATOR = niet|geen|noch
APPROVE verb = goedgekeurd|goedkeuren|keur goed|keur het goed|keur dit goed|keur dat goed|
     keur ik goed|akkoord|geaccepteerd|accepteer|accepteren|toegestaan|sta toe|bevestigd|bevestig|
     ga door|ga je gang|ga maar|ga verder|ga maar door|doorgaan|uitvoeren|voer uit|toegekend|
     verleend|goedkeuring verleend|vrijgegeven|geef vrij
APPROVE = ja|jawel|jep|jup|yes|ok|oké|okay|oke|prima|is goed|is prima|dat is goed|dat is prima|
     dat mag|mag|mag wel|mag door|zeker|natuurlijk|uiteraard|tuurlijk|helemaal goed|in orde|lgtm|
     doe maar|doe het maar|geen bezwaar|geen bezwaren|prima zo|duim omhoog|groen licht|
     akkoord van mij|vind ik goed|lijkt me goed
REJECT verb = afgekeurd|afkeuren|keur af|keur het af|keur dit af|keur dat af|keur ik af|
     keur het niet goed|keur dit niet goed|keur dat niet goed|keur ik niet goed|afgewezen|
    afwijzen| wijs af|wijs het af|geweigerd|weiger|weigeren|geannuleerd|annuleer|annuleren|stop|
    stoppen| halt|verboden|geblokkeerd|blokkeer|tegengehouden
REJECT = nee|neen|nope|nee bedankt|nee dank je|geen sprake van|echt niet|zeker niet|
     absoluut niet|natuurlijk niet|uiteraard niet|niet doen|ben ik niet mee eens|duim omlaag|
     geen denken aan|mooi niet|no way|vind ik niet goed|liever niet
APPROVE_HINT = goed|mooi|top|perfect|super|correct|juist|klopt|geldig|fijn|netjes|uitstekend
REJECT_HINT = fout|verkeerd|onjuist|incorrect|slecht|te hoog|te veel|te duur|riskant|verdacht|
     fraude|dubbel|duplicaat|ongeldig|afwijzing
FILLER = hoi|hallo|hey|hé|goedemorgen|goedemiddag|dank|dank je|dank je wel|dankjewel|bedankt|
     thanks|alsjeblieft|alstublieft|aub|graag|ik|wij|we|heb|hebben|al|hierbij|gewoon|dan|dus|nou|
     oh|ah|echt|helemaal|absoluut|heel|erg|geen probleem|geen zorgen|geen punt|van mij|voor mij|
     wat mij betreft|mijnerzijds|team|🙏
OBJECT = het|t|dit|dat|deze|die|de|een|mijn|je|jouw|ons|onze|hun|met|van|voor|en|ermee
CONNECTOR = omdat|want|vanwege|aangezien|doordat|reden
DOUBT = misschien|wellicht|mogelijk|waarschijnlijk|onzeker|weet niet|weet ik niet|geen idee|
     niet zeker|weet het niet|wacht|wacht even|even wachten|momentje|moment|later|straks|nog niet|
     nu niet|helemaal niet|ik denk|denk het|denk het wel|ik geloof|geloof het|soort van|
     een beetje|hmm|hm|eh|uh|laat maar|laat me|even kijken|we zien wel|ja hoor|jaja|ja ja|haha|
     lol|ironie|maakt niet uit|boeit niet|nee hoor
CONDITION = als|indien|mits|tenzij|zodra|zolang|op voorwaarde|afhankelijk|hangt af|hangt ervan af|
     anders|in afwachting|onder voorbehoud|wanneer
CONTRAST = maar|echter|toch|hoewel|alhoewel|eigenlijk|behalve|in plaats van|liever|correctie|
     daarentegen
CHANGE = verander|veranderen|wijzig|wijzigen|gewijzigd|aanpassen|pas aan|aangepast|helft|alleen|
     slechts|enkel|verlaag|verlagen|verhoog|verhogen|verdubbel|verdubbelen|gedeeltelijk|deels|
     vervang|vervangen|wissel
QUESTION = wat|waarom|hoe|wie|welke|welk|waar|moet|moeten|zal|zullen|kan|kunnen|kun|mag ik|
     mag het|mag dat|is|zijn|ben|was|waren|heb je|hebben we
COMPARE = minder|meer|kleiner|groter|hoger|lager|goedkoper|ander|andere|extra|max|maximaal|
     maximum|minimaal|minimum|tot|hooguit|limiet|grens|plafond
""",
)
