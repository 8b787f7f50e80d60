"""Italian: "approvato", "rifiutato: troppo caro"; "non" negates, "sì" / "si" alone approves."""

from interpreters.languages import Language

LANGUAGE = Language(
    code="it",
    name="Italiano",
    elisions=frozenset({"l'", "un'", "d'", "c'", "dell'", "all'", "nell'", "sull'", "quest'"}),
    hint='Rispondi "approvato" o "rifiutato: <motivo>", oppure usa i pulsanti.',
    reply_help=(
        "Capisco queste risposte:\n"
        "• per approvare: approvato, sì, ok, va bene, procedi o 👍\n"
        "• per rifiutare: rifiutato, no, respinto o 👎, con il motivo dopo i due punti, "
        "come rifiutato: cliente sbagliato\n"
        "Oppure usa i pulsanti del messaggio."
    ),
    approvals=("approvato", "sì", "ok", "va bene", "procedi", "👍"),
    rejections=("rifiutato", "no", "respinto", "👎"),
    rejection_with_reason=("rifiutato: cliente sbagliato", "cliente sbagliato"),
    causes={
        "The reply has no words.": "La risposta non contiene parole.",
        "The reply reads as a question.": "La risposta sembra una domanda.",
        'The reply is unsure or asks to wait ("{}").': "La risposta è incerta o chiede di aspettare («{}»).",
        'The reply sets a condition ("{}").': "La risposta pone una condizione («{}»).",
        'The reply takes something back or makes an exception ("{}").': "La risposta ritratta qualcosa o fa un'eccezione («{}»).",
        'The reply asks for a change ("{}").': "La risposta chiede una modifica («{}»).",
        "The reply both approves and rejects.": "La risposta approva e rifiuta insieme.",
        'An approval cannot carry "{}": it may change the call.': "Un'approvazione non può contenere «{}»: potrebbe cambiare la chiamata.",
        "The reply negates a negation.": "La risposta nega una negazione.",
        'Cannot tell which verdict "{}" negates.': "Non è chiaro quale decisione neghi «{}».",
        'Cannot tell what "{}" refers to.': "Non è chiaro a cosa si riferisca «{}».",
        "No verdict found.": "Nessuna decisione trovata.",
        'Cannot tell what "{}" after the verdict means.': "Non è chiaro cosa significhi «{}» dopo la decisione.",
        'Put a reason after a colon: "reject: <reason>".': "Metti il motivo dopo i due punti: «rifiutato: <motivo>».",
        "The reply quotes a verdict: answer without the quote.": "La risposta cita una decisione: rispondi senza la citazione.",
        "The reply reads as an approval in one language, a rejection in another.": "La risposta si legge come approvazione in una lingua e come rifiuto in un'altra.",
    },
    tables="""
NEGATOR standalone = mai|giammai
NEGATOR = non|né|nessun|nessuna|nessuno|mica
APPROVE verb = lo approvo|la approvo|l' approvo|lo accetto|lo autorizzo|lo confermo| approvo|
    approvato|approvata|approvare|approva|approviamo|accetto|accettato|accettata| accettare|
    autorizzo|autorizzato|autorizzata|autorizzare|confermo|confermato|confermata| confermare|
    procedi|procedete|procedere|prosegui|proseguire|vai avanti|andate avanti|vai pure| vai|
    concesso|concessa|consentito|permesso|via libera|do il via libera|do l' ok
APPROVE = sì|ok|okay|okey|va bene|va benissimo|d'accordo|daccordo|sono d'accordo|certo|certamente|
     certo che sì|sicuro|sicuramente|ovviamente|naturalmente|assolutamente sì|lgtm|
     nessuna obiezione|niente in contrario|nulla in contrario|pollice su|semaforo verde|fatto|
     affare fatto|volentieri|yes|senz'altro
APPROVE alone = si
REJECT verb = lo rifiuto|la rifiuto|lo respingo|rifiuto|rifiutato|rifiutata|rifiutare|respingo|
    respinto|respinta|respingere|nego| negato|negata|boccio|bocciato|bocciata|annullo|annullato|
    annullata|annulla|annullare|ferma| fermati|fermo|stop|blocca|bloccato|vietato|veto
REJECT = no|nope|no grazie|nemmeno per sogno|neanche per sogno|assolutamente no|
     assolutamente non|certo che no|manco per idea|nossignore|pollice giù|per carità|ma anche no|
     niente da fare|neanche|nemmeno|meglio di no|mai e poi mai|non se ne parla
APPROVE_HINT = bene|buono|perfetto|ottimo|giusto|corretto|valido|bello|benissimo|esatto|top|
     fantastico
REJECT_HINT = sbagliato|errato|errore|scorretto|troppo alto|troppo|troppo caro|caro|rischioso|
     sospetto|frode|duplicato|doppio|invalido
FILLER = ciao|salve|buongiorno|buonasera|grazie|grazie mille|mille grazie|per favore|per piacere|
     perfavore|prego|io|noi|ho|abbiamo|già|allora|quindi|dunque|beh|ah|oh|davvero|proprio|
     totalmente|assolutamente|decisamente|molto|nessun problema|non c' è problema|
     non ti preoccupare|tranquillo|tranquilla|per me|da parte mia|capo|ragazzi|pure|🙏
OBJECT = lo|la|li|le|l'|il|i|gli|un|una|uno|un'|questo|questa|questi|quello|quella|ciò|mio|mia|
     tuo|suo|nostro|con|di|del|della|per|e|ed|si|ne
CONNECTOR = perché|poiché|siccome|dato che|visto che|a causa di|causa|motivo|ragione
DOUBT = forse|magari|probabilmente|possibilmente|non so|non lo so|boh|mah|bah|chissà|
     non sono sicuro|non sono sicura|non ne sono sicuro|aspetta|aspettate|un attimo|un momento|
     un secondo|attimo|dopo|più tardi|non ancora|ancora no|non ora|adesso no|per niente|credo|
     credo di sì|penso|penso di sì|suppongo|hmm|mmm|ehm|vediamo|staremo a vedere|lascia perdere|
     lascia stare|vabbè|va beh|come vuoi|fai tu|haha|ahah|ahahah|lol|ironia|sì sì|si si|sisi|
     ma va|ma dai|figurati|seh
CONDITION = se|solo se|soltanto se|purché|a patto che|a condizione che|salvo che|a meno che|
     sempre che|quando|appena|una volta che|finché|nel caso|in caso|dipende|a seconda|altrimenti|
     in attesa|subordinato
CONTRAST = ma|però|tuttavia|comunque|invece|anzi|eccetto|tranne|salvo|piuttosto|anche se|sebbene|
     benché|in realtà|correzione
CHANGE = cambia|cambiare|cambiato|modifica|modificare|modificato|aggiusta|aggiustare|metà|dimezza|
     dimezzare|solo|soltanto|solamente|unicamente|riduci|ridurre|ridotto|abbassa|abbassare|
     aumenta|aumentare|alza|raddoppia|parziale|parzialmente|in parte|sostituisci|sostituire|
     aggiorna|correggi
QUESTION = che|cosa|che cosa|perché no|come|chi|quale|quali|dove|quanto|quanta|devo|dovrei|
     dobbiamo|posso|possiamo|può|è|sono|sei|hai
COMPARE = meno|più|minore|maggiore|più basso|più economico|diverso|diversa|altro|altra|altri|
     massimo|minimo|limite|tetto|fino a|al massimo
""",
)
