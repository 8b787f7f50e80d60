"""German: "genehmigt", "abgelehnt: zu teuer"; "nicht" negates before or after the verb."""

from interpreters.languages import Language

LANGUAGE = Language(
    code="de",
    name="Deutsch",
    negation_after=True,
    spellings=(("ae", "a"), ("oe", "o"), ("ue", "u"), ("ß", "ss")),
    hint="Antworte „genehmigt“ oder „abgelehnt: <Grund>“ oder nutze die Buttons.",
    reply_help=(
        "Ich verstehe diese Antworten:\n"
        "• zum Genehmigen: genehmigt, ja, ok, passt, einverstanden oder 👍\n"
        "• zum Ablehnen: abgelehnt, nein, nö oder 👎, mit dem Grund nach einem Doppelpunkt, "
        "etwa abgelehnt: falscher Kunde\n"
        "Oder nutze die Buttons an der Nachricht."
    ),
    approvals=("genehmigt", "ja", "ok", "passt", "einverstanden", "👍"),
    rejections=("abgelehnt", "nein", "nö", "👎"),
    rejection_with_reason=("abgelehnt: falscher Kunde", "falscher Kunde"),
    causes={
        "The reply has no words.": "Die Antwort enthält keine Wörter.",
        "The reply reads as a question.": "Die Antwort liest sich als Frage.",
        'The reply is unsure or asks to wait ("{}").': "Die Antwort ist unsicher oder bittet zu warten („{}“).",
        'The reply sets a condition ("{}").': "Die Antwort stellt eine Bedingung („{}“).",
        'The reply takes something back or makes an exception ("{}").': "Die Antwort nimmt etwas zurück oder macht eine Ausnahme („{}“).",
        'The reply asks for a change ("{}").': "Die Antwort verlangt eine Änderung („{}“).",
        "The reply both approves and rejects.": "Die Antwort genehmigt und lehnt zugleich ab.",
        'An approval cannot carry "{}": it may change the call.': "Eine Genehmigung kann „{}“ nicht enthalten: es könnte den Aufruf ändern.",
        "The reply negates a negation.": "Die Antwort verneint eine Verneinung.",
        'Cannot tell which verdict "{}" negates.': "Unklar, welche Entscheidung „{}“ verneint.",
        'Cannot tell what "{}" refers to.': "Unklar, worauf sich „{}“ bezieht.",
        "No verdict found.": "Keine Entscheidung gefunden.",
        'Cannot tell what "{}" after the verdict means.': "Unklar, was „{}“ nach der Entscheidung bedeutet.",
        'Put a reason after a colon: "reject: <reason>".': "Den Grund nach einem Doppelpunkt: „abgelehnt: <Grund>“.",
        "The reply quotes a verdict: answer without the quote.": "Die Antwort zitiert eine Entscheidung: antworte ohne das Zitat.",
        "The reply reads as an approval in one language, a rejection in another.": "Die Antwort liest sich in einer Sprache als Genehmigung, in einer anderen als Ablehnung.",
    },
    tables="""
NEGATOR standalone = nie|niemals
NEGATOR = nicht|nich|net|kann ich nicht|können wir nicht|darf ich nicht|werde ich nicht|
     will ich nicht|kein|keine|keinen|keinem|keiner|weder|noch nie
APPROVE verb = genehmigt|genehmige|genehmigen|genehmigung erteilt|freigegeben|freigeben|gebe frei|
     geben frei|gib frei|gebe das frei|gebe es frei|geb frei|akzeptiert|akzeptiere|akzeptieren|
     bestätigt|bestätige|bestätigen|erlaubt|erlaube|zugestimmt|stimme zu|stimmen zu|mach weiter|
     macht weiter|weitermachen|fortfahren|durchführen|ausführen|bewilligt|bewillige|bewilligen|
     abgesegnet|segne ab|gebilligt|billige
APPROVE = ja|jap|jo|jawohl|jep|jupp|yes|ok|okay|okey|oke|okidoki|klar|na klar|sicher|passt|
    passt so| alles klar|in ordnung|geht klar|geht in ordnung|einverstanden|gerne|gern|sehr gern|
    sehr gerne| los|los geht's|leg los|mach|mach das|mach es|mach's|machen|machen wir|go|lgtm|
    sieht gut aus| klingt gut|gut so|alles gut|keine einwände|kein einwand|keine bedenken|
    ohne einwände| von mir aus|daumen hoch|selbstverständlich|natürlich|auf jeden fall|genau|
    freigabe erteilt
REJECT verb = abgelehnt|ablehnen|lehne ab|lehnen ab|lehne das ab|lehne es ab|lehne ich ab|
     verweigert|verweigere|untersagt|verboten|abbrechen|abgebrochen|brich ab|stopp|stop|halt|
     storniert|stornieren|storniere|zurückgewiesen|verwehrt|gestoppt|abgewiesen
REJECT = nein|nö|nee|nix da|auf keinen fall|auf gar keinen fall|keinesfalls|kommt nicht in frage|
     kommt nicht infrage|bloß nicht|lieber nicht|besser nicht|daumen runter|nein danke|
     definitiv nicht|sicher nicht|nie im leben|keine genehmigung|bitte nicht|passt nicht|
    das geht nicht|geht nicht|natürlich nicht|ganz sicher nicht|no way|niemals nicht
REJECT alone = ne
APPROVE_HINT = gut|super|prima|perfekt|toll|korrekt|richtig|stimmt|fein|schön|top|spitze
REJECT_HINT = falsch|fehler|fehlerhaft|zu hoch|zu viel|zu teuer|zu riskant|riskant|verdächtig|
     betrug|doppelt|duplikat|ungültig|schlecht|ablehnung|absage
FILLER = hallo|hi|hey|moin|servus|danke|danke schön|dankeschön|vielen dank|besten dank|merci|
     bitte|bitteschön|gruß|grüße|lg|vg|ich|wir|hab|habe|haben|schon|bereits|hiermit|einfach|dann|
     also|so|nun|jetzt|na|ach|oh|wirklich|total|absolut|definitiv|sehr|kein problem| keine sorge|
    keine ursache|kein thema|von mir|für mich|meinerseits|chef|team|leute|🙏
OBJECT = das|es|dies|diese|dieser|dieses|den|die|der|dem|ein|eine|einen|mit|für|und|damit| davon|
    dafür|hier|sie|ihn
CONNECTOR = weil|da|denn|wegen|aufgrund|grund|begründung
DOUBT = vielleicht|eventuell|evtl|wahrscheinlich|vermutlich|möglicherweise|unsicher|keine ahnung|
     weiß nicht|weiss nicht|weiß ich nicht|weiss ich nicht|nicht sicher|bin mir nicht sicher|
     warte|warten|wartet|moment|einen moment|sekunde|später|noch nicht|jetzt nicht|gar nicht|
     überhaupt nicht|ich glaube|glaube schon|denke schon|ich denke|irgendwie|naja|na ja|hmm|hm|
     ähm|äh|mal sehen|mal schauen|schauen wir mal|egal|ist mir egal|vergiss es|jaja|ja ja| ironie|
    geht so|haha|lol|klar doch|ja genau
CONDITION = wenn|falls|sofern|solange|vorausgesetzt|sobald|es sei denn|unter der bedingung|
     abhängig|je nachdem|ob|ansonsten|sonst|vorbehaltlich
CONTRAST = aber|jedoch|allerdings|doch|sondern|trotzdem|eigentlich|stattdessen|außer|ausser|
     korrektur|obwohl|andererseits
CHANGE = ändern|ändere|ändert|geändert|änderung|hälfte|halb|halbieren|nur|lediglich|anpassen|
     angepasst|reduzieren|reduziert|senken|erhöhen|verdoppeln|teilweise|teils|ersetzen|tauschen|
     aktualisieren|korrigieren|statt|anteilig
QUESTION = was|warum|wieso|weshalb|wie|wer|wen|wem|wessen|welche|welcher|welches|wo|wann|soll|
     sollen|sollte|sollten|kann|kannst|können|könnte|darf|dürfen|muss|müssen|ist|sind|war|waren|
     hast|hat|habt|wird|würde|würdest|gibt
COMPARE = weniger|mehr|kleiner|größer|höher|niedriger|billiger|günstiger|anders|andere|anderen|
     anderes|extra|max|maximal|mindestens|höchstens|bis zu|limit|grenze|obergrenze
""",
)
