"""Spanish: "aprobado", "rechazado: muy caro"; "no" alone rejects, before a verb it negates."""

from interpreters.languages import Language

LANGUAGE = Language(
    code="es",
    name="Español",
    hint="Responde «aprobado» o «rechazado: <motivo>», o usa los botones.",
    reply_help=(
        "Entiendo estas respuestas:\n"
        "• para aprobar: aprobado, sí, ok, vale, adelante o 👍\n"
        "• para rechazar: rechazado, no, denegado o 👎, con el motivo después de dos puntos, "
        "como rechazado: cliente equivocado\n"
        "O usa los botones del mensaje."
    ),
    approvals=("aprobado", "sí", "ok", "vale", "adelante", "👍"),
    rejections=("rechazado", "no", "denegado", "👎"),
    rejection_with_reason=("rechazado: cliente equivocado", "cliente equivocado"),
    causes={
        "The reply has no words.": "La respuesta no tiene palabras.",
        "The reply reads as a question.": "La respuesta se lee como una pregunta.",
        'The reply is unsure or asks to wait ("{}").': "La respuesta duda o pide esperar («{}»).",
        'The reply sets a condition ("{}").': "La respuesta pone una condición («{}»).",
        'The reply takes something back or makes an exception ("{}").': "La respuesta se retracta o hace una excepción («{}»).",
        'The reply asks for a change ("{}").': "La respuesta pide un cambio («{}»).",
        "The reply both approves and rejects.": "La respuesta aprueba y rechaza a la vez.",
        'An approval cannot carry "{}": it may change the call.': "Una aprobación no puede llevar «{}»: podría cambiar la llamada.",
        "The reply negates a negation.": "La respuesta niega una negación.",
        'Cannot tell which verdict "{}" negates.': "No se sabe qué decisión niega «{}».",
        'Cannot tell what "{}" refers to.': "No se sabe a qué se refiere «{}».",
        "No verdict found.": "No se encontró ninguna decisión.",
        'Cannot tell what "{}" after the verdict means.': "No se sabe qué significa «{}» después de la decisión.",
        'Put a reason after a colon: "reject: <reason>".': "Pon el motivo después de dos puntos: «rechazado: <motivo>».",
        "The reply quotes a verdict: answer without the quote.": "La respuesta cita una decisión: responde sin la cita.",
        "The reply reads as an approval in one language, a rejection in another.": "La respuesta se lee como aprobación en un idioma y como rechazo en otro.",
    },
    tables="""
NEGATOR standalone = nunca|jamás
NEGATOR = no|ni|tampoco|ningún|ninguna|ninguno
REJECT alone = no
APPROVE verb = lo apruebo|la apruebo|lo acepto|lo autorizo|lo confirmo|apruebo|aprobado|aprobada|
    aprobar|apruébalo|apruébala|aprueba|aprobamos|acepto| aceptado|aceptada|aceptar|autorizo|
    autorizado|autorizada|autorizar|confirmo|confirmado| confirmada|confirmar|adelante|procede|
    proceder|procedan|sigue|seguir|dale|hazlo|concedido| permitido|permito|validado|validada|
    valido|doy el visto bueno|visto bueno
APPROVE = sí|sip|sep|vale|ok|okay|okey|oki|claro|claro que sí|por supuesto|desde luego|de acuerdo|
     deacuerdo|está bien|todo bien|me parece bien|conforme|listo|venga|lgtm|sin objeciones|
     ninguna objeción|sin inconveniente|luz verde|pulgar arriba|hecho|vamos|yes|sin duda
CONDITION = si|solo si|sólo si|siempre que|siempre y cuando|a menos que|salvo que|en caso de|
     cuando|mientras|con tal de que|depende|según|dependiendo|de lo contrario|pendiente|sujeto a
APPROVE alone = si
REJECT verb = lo rechazo|la rechazo|lo deniego|lo cancelo|rechazo|rechazado|rechazada|rechazar|
    recházalo|rechazamos|deniego|denegado| denegada|denegar|niego|negado|deniega|declino|
    declinado|cancelo|cancelado|cancelada|cancelar| cancela|anula|anulado|anulada|detén|detener|
    alto|stop|prohibido|vetado|veto
REJECT = no gracias|de ninguna manera|de ningún modo|ni hablar|ni de broma|nel|nop|nope|negativo|
     claro que no|por supuesto que no|desde luego que no|ni loco|ni loca|pulgar abajo|imposible|
     para nada no|que no
APPROVE_HINT = bien|bueno|perfecto|genial|correcto|válido|excelente|estupendo|buenísimo
REJECT_HINT = mal|incorrecto|erróneo|equivocado|error|demasiado alto|demasiado|muy caro|caro|
     arriesgado|riesgoso|sospechoso|fraude|duplicado|inválido|denegación
FILLER = hola|buenas|buenos días|buenas tardes|gracias|muchas gracias|mil gracias|por favor|porfa|
     porfis|yo|nosotros|ya|pues|entonces|así que|oye|vaya|ah|oh|realmente|totalmente|
     absolutamente|definitivamente|muy|sin problema|sin problemas|ningún problema|
     no hay problema|no pasa nada|no te preocupes|tranquilo|tranquila|de mi parte|por mi parte|
     por mí|para mí|equipo|jefe|🙏
OBJECT = lo|la|los|las|le|les|esto|eso|este|esta|ese|esa|el|un|una|mi|tu|su|nuestro|con|de|del|
     al|y|e|para
CONNECTOR = porque|ya que|debido a|dado que|puesto que|motivo|razón
DOUBT = quizás|quizá|tal vez|a lo mejor|probablemente|posiblemente|no sé|ni idea|no estoy seguro|
     no estoy segura|no lo sé|espera|espérate|esperen|un momento|un segundo|momento|luego|
     más tarde|después|todavía no|aún no|ahora no|para nada|creo|creo que sí|supongo|mmm|hmm| eh|
    déjame|déjame ver|a ver|ya veremos|jaja|jajaja|jeje|ya claro|sí claro|sí, claro|ironía|
     olvídalo|lol|sí sí|si si
CONTRAST = pero|sin embargo|aunque|aun así|en realidad|excepto|salvo|en vez|en lugar|sino|
     más bien|corrección
CHANGE = cambia|cambiar|cambiado|modifica|modificar|ajusta|ajustar|mitad|solo|sólo|solamente|
     únicamente|reduce|reducir|baja|bajar|sube|subir|aumenta|aumentar|duplica|doble|parcial|
     parcialmente|reemplaza|cambio
QUESTION = qué|por qué|porqué|cómo|quién|quiénes|cuál|cuáles|dónde|cuándo|cuánto|cuánta|debo|
     debería|deberíamos|puedo|podemos|puede|es|son|hay
COMPARE = menos|más|menor|mayor|más bajo|más barato|diferente|distinto|otro|otra|otros|máximo|
     mínimo|límite|tope|hasta
""",
)
