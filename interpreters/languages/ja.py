"""Japanese, basic: 承認 / 却下; a suffix after the verb negates it (承認しません rejects).

Written without spaces: words are found by the longest piece of the tables. 大丈夫です and
いいです can decline as well as accept, so they are doubt, never a verdict.
"""

from interpreters.languages import Language

LANGUAGE = Language(
    code="ja",
    name="日本語",
    negation_after=True,
    fold_accents=False,
    unspaced=True,
    hint="「承認」または「却下：<理由>」と返信するか、ボタンを使ってください。",
    reply_help=(
        "次の返信を理解できます:\n"
        "• 承認する: 承認、はい、了解、OK または 👍\n"
        "• 却下する: 却下、いいえ、ダメ または 👎（理由はコロンの後に。例: 却下：顧客が違う）\n"
        "またはメッセージのボタンを使ってください。"
    ),
    approvals=("承認", "はい", "了解", "OK", "👍"),
    rejections=("却下", "いいえ", "ダメ", "👎"),
    rejection_with_reason=("却下：顧客が違う", "顧客が違う"),
    causes={
        "The reply has no words.": "返信に言葉がありません。",
        "The reply reads as a question.": "返信が質問として読めます。",
        'The reply is unsure or asks to wait ("{}").': "返信が不確かか、待つよう求めています（「{}」）。",
        'The reply sets a condition ("{}").': "返信に条件があります（「{}」）。",
        'The reply takes something back or makes an exception ("{}").': "返信が何かを取り消すか、例外を設けています（「{}」）。",
        'The reply asks for a change ("{}").': "返信が変更を求めています（「{}」）。",
        "The reply both approves and rejects.": "返信が承認と却下の両方を含んでいます。",
        'An approval cannot carry "{}": it may change the call.': "承認に「{}」は含められません。呼び出しが変わる可能性があります。",
        "The reply negates a negation.": "返信が否定を否定しています。",
        'Cannot tell which verdict "{}" negates.': "「{}」がどの判断を否定しているか分かりません。",
        'Cannot tell what "{}" refers to.': "「{}」が何を指しているか分かりません。",
        "No verdict found.": "判断が見つかりません。",
        'Cannot tell what "{}" after the verdict means.': "判断の後の「{}」の意味が分かりません。",
        'Put a reason after a colon: "reject: <reason>".': "理由はコロンの後に書いてください:「却下：<理由>」。",
        "The reply quotes a verdict: answer without the quote.": "返信が判断を引用しています。引用なしで答えてください。",
        "The reply reads as an approval in one language, a rejection in another.": "返信がある言語では承認、別の言語では却下として読めます。",
    },
    tables="""
NEGATOR = ません|ない|なかった|ないです|ず|できません|できない|しない|しません|しないで|ないで|
     ませんでした|できかねます|いたしません
APPROVE verb = 承認|承認します|承認しました|承認です|承認済み|了承|了承します|了承しました|許可|
     許可します|許可しました|進めて|進めてください|進めます|実行して|実行してください|承諾|
    承諾します| 認め|認めます|認める
APPROVE = はい|ええ|うん|オッケー|オーケー|おけ|ok|okay|ｏｋ|いいよ|いいですよ|問題ない|
     問題ないです|問題ありません|問題なし|どうぞ|賛成|同意|同意します|了解|了解です|了解しました|
    りょうかい| 承知しました|かしこまりました|それでお願いします
REJECT verb = 却下|却下します|却下しました|却下です|拒否|拒否します|拒否しました|不承認|不許可|
    中止| 中止して|中止してください|止めて|やめて|やめてください|ストップ|取り消し|キャンセル|否認
REJECT = いいえ|いや|だめ|ダメ|駄目|だめです|ダメです|不可|反対|無理|無理です|絶対だめ|絶対ダメ|
     ノー|お断りします
APPROVE_HINT = 良い|いい|よい|正しい|完璧|素晴らしい
REJECT_HINT = 間違い|間違って|誤り|高すぎ|高すぎる|多すぎ|多すぎる|怪しい|不正|重複|無効|ミス
FILLER = でお願いします|でおねがいします|です|ます|でした|よ|ね|よね|お願いします|おねがいします|
    ください|下さい|ありがとう| ありがとうございます|どうも|すみません|こんにちは|お疲れ様です|
    おつかれさまです|お疲れさまです| 私|僕|こちら|では|じゃあ|もう|🙏
OBJECT = これ|それ|この|その|件
CONNECTOR = なぜなら
DOUBT = たぶん|多分|かも|かもしれない|かもしれません|おそらく|恐らく|わからない|わかりません|
     分からない|分かりません|ちょっと待って|待って|待ってください|保留|あとで|後で|検討|
    検討します| 考えます|微妙|うーん|うーむ|えーと|えっと|大丈夫|大丈夫です|いいです|結構です|
    結構|まだ|笑|w| www|草|確認します|確認中
CONDITION = なら|ならば|たら|れば|場合|もし|もしも|次第|条件|限り|だったら
CONTRAST = でも|けど|けれど|けれども|しかし|ただし|ただ|ところが|やっぱり|やはり|実は|訂正|
    それとも
CHANGE = 半分|半額|だけ|のみ|変更|修正|減額|増額|一部|部分的|変えて|減らして|増やして
QMARK = か|ですか|ますか|でしょうか|かな|かね
QUESTION = 何|なぜ|なんで|どう|どうして|誰|どれ|どこ|いつ|いくら|べき
COMPARE = 以下|以上|未満|まで|少なく|多く|より|ほか|他|別|上限|最大|最小
""",
)
