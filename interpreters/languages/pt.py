"""Portuguese: "aprovado", "rejeitado: valor alto"; "não" alone rejects, "não … não" is one."""

from interpreters.languages import Language

LANGUAGE = Language(
    code="pt",
    name="Português",
    negation_after=True,
    hint='Responda "aprovado" ou "rejeitado: <motivo>", ou use os botões.',
    reply_help=(
        "Eu entendo estas respostas:\n"
        "• para aprovar: aprovado, sim, ok, pode seguir, de acordo ou 👍\n"
        "• para rejeitar: rejeitado, não, negado ou 👎, com o motivo depois de dois-pontos, "
        "como rejeitado: cliente errado\n"
        "Ou use os botões da mensagem."
    ),
    approvals=("aprovado", "sim", "ok", "pode seguir", "de acordo", "👍"),
    rejections=("rejeitado", "não", "negado", "👎"),
    rejection_with_reason=("rejeitado: cliente errado", "cliente errado"),
    causes={
        "The reply has no words.": "A resposta não tem palavras.",
        "The reply reads as a question.": "A resposta parece uma pergunta.",
        'The reply is unsure or asks to wait ("{}").': 'A resposta está em dúvida ou pede para esperar ("{}").',
        'The reply sets a condition ("{}").': 'A resposta impõe uma condição ("{}").',
        'The reply takes something back or makes an exception ("{}").': 'A resposta volta atrás ou abre uma exceção ("{}").',
        'The reply asks for a change ("{}").': 'A resposta pede uma alteração ("{}").',
        "The reply both approves and rejects.": "A resposta aprova e rejeita ao mesmo tempo.",
        'An approval cannot carry "{}": it may change the call.': 'Uma aprovação não pode conter "{}": isso pode mudar a chamada.',
        "The reply negates a negation.": "A resposta nega uma negação.",
        'Cannot tell which verdict "{}" negates.': 'Não dá para saber qual decisão "{}" nega.',
        'Cannot tell what "{}" refers to.': 'Não dá para saber a que "{}" se refere.',
        "No verdict found.": "Nenhuma decisão encontrada.",
        'Cannot tell what "{}" after the verdict means.': 'Não dá para saber o que "{}" depois da decisão significa.',
        'Put a reason after a colon: "reject: <reason>".': 'Coloque o motivo depois de dois-pontos: "rejeitado: <motivo>".',
        "The reply quotes a verdict: answer without the quote.": "A resposta cita uma decisão: responda sem a citação.",
        "The reply reads as an approval in one language, a rejection in another.": "A resposta parece uma aprovação num idioma e uma rejeição em outro.",
    },
    tables="""
NEGATOR standalone = nunca|jamais
NEGATOR pair = não
NEGATOR = nem|nenhum|nenhuma
REJECT alone = não
APPROVE verb = aprovo|aprovado|aprovada|aprovar|aprova|aprovamos|aceito|aceitado|aceita|aceitar|
     autorizo|autorizado|autorizada|autorizar|confirmo|confirmado|confirmada|confirmar|
    pode seguir| pode prosseguir|prossiga|prosseguir|siga|segue|seguir|manda ver|pode mandar|
    vai em frente| concedido|permitido|liberado|liberada|libero|validado|validada|deferido|
    pode fazer|faça
APPROVE = sim|ok|okay|okey|beleza|blz|claro|claro que sim|com certeza|certamente|de acordo|
     tudo bem|tudo certo|tá bom|tá certo|tá|pode|pode sim|fechado|combinado|lgtm|positivo|
     sem objeções|vamos|bora|joia|show|isso|isso aí|polegar para cima|sinal verde|yes
REJECT verb = rejeito|rejeitado|rejeitada|rejeitar|recuso|recusado|recusada|recusar|nego|negado|
     negada|negar|indeferido|cancelo|cancelado|cancelada|cancelar|cancela|pare|parar|interrompe|
     bloqueado|vetado|veto|reprovado|reprovada|reprovo|stop
REJECT = de jeito nenhum|de forma alguma|nem pensar|nem a pau|negativo|nops|nope|claro que não|
     com certeza não|polegar para baixo|não obrigado|não obrigada|nada disso
APPROVE_HINT = bom|bem|ótimo|perfeito|certo|correto|válido|excelente|legal|top|massa
REJECT_HINT = errado|incorreto|erro|muito alto|caro|muito caro|arriscado|suspeito|fraude|
    duplicado| duplicada|inválido|ruim|recusa|rejeição
FILLER = oi|olá|bom dia|boa tarde|boa noite|obrigado|obrigada|valeu|brigado|por favor|pfv|pf|eu|
     nós|a gente|já|então|aí|ah|oh|realmente|totalmente|absolutamente|definitivamente|muito|
     sem problema|sem problemas|tranquilo|de boa|por mim|da minha parte|pra mim|equipe|chefe|
     pessoal|🙏
OBJECT = isso aqui|isto|este|esta|esse|essa|o|a|os|as|um|uma|meu|minha|seu|sua|com|de|do|da|no|
     na|e|para|pra|ao|lo|la
CONNECTOR = porque|pois|já que|devido a|visto que|uma vez que|motivo|razão|por causa de
DOUBT = talvez|quiçá|provavelmente|possivelmente|pode ser|não sei|sei lá|não tenho certeza|
     sem certeza|espera|espere|peraí|pera|um momento|um segundo|momento|depois|mais tarde|
     ainda não|agora não|acho|acho que sim|acho que|creio|suponho|hmm|hum|ué|deixa eu ver|
     vamos ver|veremos|kkk|kkkk|rs|rsrs|haha|ironia|sei não|tá bom então|aham|sei
CONDITION = se|só se|somente se|desde que|contanto que|a menos que|a não ser que|caso|quando|
     assim que|enquanto|depende|dependendo|senão|pendente|sujeito a
CONTRAST = mas|porém|contudo|entretanto|todavia|embora|na verdade|exceto|em vez|ao invés|aliás|
     correção
CHANGE = muda|mudar|mude|alterar|altera|altere|ajusta|ajustar|ajuste|metade|só|somente|apenas|
     reduz|reduzir|reduza|diminui|diminuir|aumenta|aumentar|dobra|dobrar|parcial|parcialmente|
     troca|trocar|substitui|substituir|corrige|corrigir
QUESTION = que|o que|quê|por que|por quê|porquê|como|quem|qual|quais|onde|quanto|quanta|devo|
     deveria|devemos|posso|podemos|é|está|são|será|tem
COMPARE = menos|mais|menor|maior|mais baixo|mais barato|diferente|outro|outra|outros|máximo|
     mínimo|limite|teto|até
""",
)
