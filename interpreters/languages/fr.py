"""French: "validé", "refusé : trop cher"; "ne … pas" is one negation, "pas" alone negates."""

from interpreters.languages import Language

LANGUAGE = Language(
    code="fr",
    name="Français",
    negation_after=True,
    elisions=frozenset({"n'", "l'", "j'", "d'", "c'", "qu'", "s'", "m'", "t'", "jusqu'"}),
    hint="Répondez « approuvé » ou « refusé : <raison> », ou utilisez les boutons.",
    reply_help=(
        "Je comprends ces réponses :\n"
        "• pour approuver : approuvé, oui, ok, validé, d'accord ou 👍\n"
        "• pour refuser : refusé, non, rejeté ou 👎, avec la raison après deux-points, "
        "comme refusé : mauvais client\n"
        "Ou utilisez les boutons du message."
    ),
    approvals=("approuvé", "oui", "ok", "validé", "d'accord", "👍"),
    rejections=("refusé", "non", "rejeté", "👎"),
    rejection_with_reason=("refusé : mauvais client", "mauvais client"),
    causes={
        "The reply has no words.": "La réponse ne contient aucun mot.",
        "The reply reads as a question.": "La réponse se lit comme une question.",
        'The reply is unsure or asks to wait ("{}").': "La réponse est incertaine ou demande d'attendre (« {} »).",
        'The reply sets a condition ("{}").': "La réponse pose une condition (« {} »).",
        'The reply takes something back or makes an exception ("{}").': "La réponse revient sur quelque chose ou fait une exception (« {} »).",
        'The reply asks for a change ("{}").': "La réponse demande une modification (« {} »).",
        "The reply both approves and rejects.": "La réponse approuve et refuse à la fois.",
        'An approval cannot carry "{}": it may change the call.': "Une approbation ne peut pas contenir « {} » : cela pourrait changer l'appel.",
        "The reply negates a negation.": "La réponse nie une négation.",
        'Cannot tell which verdict "{}" negates.': "Impossible de savoir quelle décision « {} » nie.",
        'Cannot tell what "{}" refers to.': "Impossible de savoir à quoi « {} » se rapporte.",
        "No verdict found.": "Aucune décision trouvée.",
        'Cannot tell what "{}" after the verdict means.': "Impossible de savoir ce que « {} » veut dire après la décision.",
        'Put a reason after a colon: "reject: <reason>".': "Mettez la raison après deux-points : « refusé : <raison> ».",
        "The reply quotes a verdict: answer without the quote.": "La réponse cite une décision : répondez sans la citation.",
        "The reply reads as an approval in one language, a rejection in another.": "La réponse se lit comme une approbation dans une langue, un refus dans une autre.",
    },
    tables="""
NEGATOR standalone = jamais
NEGATOR pair = ne|n'
NEGATOR = pas|point|aucun|aucune|nullement|non|ni
REJECT alone = non
APPROVE verb = l' approuve|le valide|la valide|l' accepte|l' autorise|approuve|approuvé|approuvée|
    approuvés|approuver|approuvons|approuvez|valide|validé| validée|valider|validons|validez|
    accepte|accepté|acceptée|accepter|acceptons|autorise| autorisé|autorisée|autoriser|confirme|
    confirmé|confirmée|confirmer|accorde|accordé|accordée| vas-y|vas y|allez-y|allez y|procède|
    procédez|procéder|continue|continuez|continuer|lance| lancez|feu vert|go
APPROVE = oui|ouais|ouaip|yes|ok|okay|oké|okey|d'accord|dac|daccord|ça marche|ca marche|ça roule|
     ca roule|bien sûr|évidemment|carrément|c'est bon|c'est ok|c'est parfait|ça me va|ca me va|
     lgtm|pouce levé|volontiers|entendu|tout à fait|avec plaisir|let's go|allons-y|
    aucune objection| rien à redire|banco
REJECT verb = le refuse|la refuse|le rejette|refuse|refusé|refusée|refuser|refusons|refusez|
    rejette|rejeté|rejetée|rejeter| rejetons|décline|décliné|déclinée|annule|annulé|annulée|
    annuler|annulez|stop|arrête|arrêtez| arrêter|interdit|bloque|bloqué|bloquez|veto|recalé
REJECT = non merci|hors de question|pas question|surtout pas|certainement pas|absolument pas|
     sûrement pas|jamais de la vie|pouce baissé|niet|nan|nope|no way|bien sûr que non|
     évidemment pas|c'est non|sûrement non
APPROVE_HINT = bon|bien|très bien|parfait|super|génial|correct|juste|valable|nickel|top|impeccable
REJECT_HINT = faux|erroné|incorrect|mauvais|erreur|trop élevé|trop cher|trop|risqué|suspect|
     fraude|doublon|invalide|refus|rejet
FILLER = salut|bonjour|bonsoir|coucou|hello|merci|merci beaucoup|stp|svp|s' il te plaît|
     s' il vous plaît|je|j'|nous|on|moi|c'est|voilà|voila|alors|donc|ben|bah|eh bien|oh|ah|
     vraiment|totalement|absolument|définitivement|très|déjà|pas de souci|pas de soucis|
     pas de problème|aucun problème|aucun souci|sans souci|t'inquiète|pour moi|de mon côté|
     de ma part|chef|équipe|l' équipe|🙏
OBJECT = ça|ca|cela|ceci|ce|cette|cet|ces|le|la|les|l'|un|une|mon|ma|mes|ton|votre|notre|leur|
     avec|de|du|des|pour|et|lui|y
CONNECTOR = parce que|parce qu'|car|à cause de|a cause de|puisque|vu que|étant donné|raison
DOUBT = peut-être|peut être|probablement|sans doute|possible|possiblement|je sais pas|
     je ne sais pas|sais pas|chais pas|aucune idée|pas sûr|pas sûre|pas certain|attends|attendez|
     attendre|un instant|une seconde|une minute|plus tard|pas encore|pas maintenant|pas du tout|
     je crois|je pense|je suppose|bof|hmm|hm|euh|mouais|laisse tomber|laisse-moi|on verra|à voir|
     c'est ça|mdr|lol|ironie|haha|ouais ouais|oui oui|c'est cela oui
CONDITION = si|sauf si|seulement si|à condition|à condition que|pourvu que|tant que|dès que|
     une fois que|au cas où|en cas de|selon|dépend|ça dépend|sinon|en attendant|sous réserve
APPROVE alone = si
CONTRAST = mais|cependant|pourtant|toutefois|par contre|en fait|sauf|plutôt|au lieu|néanmoins|
     correction|quoique|bien que|finalement
CHANGE = change|changer|changé|changez|modifie|modifier|modifié|modifiez|ajuste|ajuster|moitié|
     seulement|uniquement|réduis|réduire|réduit|réduisez|baisse|baisser|baissez|augmente|
     augmenter|double|doubler|partiel|partiellement|en partie|remplace|remplacer|corrige|corriger|
     mets|mettez|mettre
QUESTION = quoi|que|qu'|pourquoi|pourquoi pas|comment|qui|quel|quelle|quels|quelles|où|quand|
     combien|est-ce|est-ce que|dois-je|puis-je|peut-on|faut-il|est|sont
COMPARE = moins|plus|davantage|plus petit|plus grand|plus bas|plus haut|moins cher|différent|
     différente|autre|autres|max|maximum|min|minimum|limite|plafond|jusqu'à|jusqu' à
""",
)
