"""The conversation set in Japanese (`ja-conversations`): the same shape as
benchmarks/conversation_data.py — two friends over 24 sessions, every turn one memory
(`D<session>:<turn>` -> `[2023年5月3日] 陽菜：<text>`), the evidence said in passing among
near-identical small talk and chatter on the same topic — written as Japanese friends chat on
LINE, with questions in Japanese: single-hop in other words, multi-hop over sessions, temporal
("陽菜がリスボンへ旅行したのはいつですか？", "陽菜は2023年5月に何をしましたか？") and
open-domain.

Nothing in it is split by spaces, so keyword search has to segment the text (Hindsight and
the BM25 baseline both index character pairs) and the month questions need the Japanese
time expressions (hindsight.text.timeexpr_cjk). Generated from a seed; no network.
"""

from __future__ import annotations

from benchmarks.conversation_data import Event, Language, build, show
from benchmarks.conversation_time import build_time
from benchmarks.eval_set import Dataset

PEOPLE = """陽菜 結衣 翔太 大輝 美咲 拓海 さくら 健太 愛子 颯太 花子 直樹 優奈 亮介 彩花 浩二
真由 悠斗 千尋 和也 莉子 隼人 奈々 海斗""".split()

EVENTS = [
    Event(
        "pet",
        "そうそう言い忘れてた、土曜に{species}飼い始めたの！子どもたちが{pet}って名前つけたよ",
        "{who}が新しく迎えた{species}の名前は何ですか？",
        "{who}が{species}を家に連れて帰ったのはいつですか？",
        "{who}は家で動物を飼っていますか？",
        "{who}のペットたちは何という名前ですか？",
        did="{species}を飼い始めた",
    ),
    Event(
        "trip",
        "日曜に{city}から帰ってきたばっかり、{sight}がほんとにやばかった",
        "{who}が{sight}を見に行ったのはどの都市ですか？",
        "{who}が{city}へ旅行したのはいつですか？",
        None,
        "{who}はこれまでどの都市を旅行しましたか？",
        did="{city}へ旅行した",
    ),
    Event(
        "instrument",
        "ついに毎週火曜に{instrument}のレッスン始めたよ、指がめっちゃ痛いw",
        "{who}が習っている楽器は何ですか？",
        "{who}が{instrument}を習い始めたのはいつですか？",
        "{who}は{genre}のコンサートを楽しめそうですか？",
        did="{instrument}を習い始めた",
    ),
    Event(
        "race",
        "先週末{race}走ってきた！タイムは{time}、ちょっと自分を褒めたい",
        "{who}が{race}を完走するのにかかった時間は？",
        "{who}が{race}に出たのはいつですか？",
        "{who}は持久系のスポーツが好きですか？",
        "{who}はどんなレースに参加したことがありますか？",
        did="{race}を走った",
    ),
    Event(
        "book",
        "今{book}読んでて、もう半分くらい。{friend}が貸してくれたんだけど止まらないんだよね",
        "{who}が{friend}から借りた小説はどれですか？",
        "{who}が{book}を読んでいたのはいつですか？",
        None,
        "{who}はどんな本を読みましたか？",
        did="{book}を読んでいた",
    ),
    Event(
        "job",
        "ビッグニュース！{company}から内定もらった！来月から{role}として働くよ",
        "{who}は新しい会社でどんな職に就きますか？",
        "{who}に{company}から採用の連絡が来たのはいつですか？",
        "{who}は最近転職しましたか？",
        did="{company}から内定をもらった",
    ),
    Event(
        "class",
        "公民館の{hobby}教室に申し込んだんだけど、{teacher}先生がめっちゃ面白いの",
        "{who}の{hobby}講座の講師の名字は何ですか？",
        "{who}が{hobby}教室に通い始めたのはいつですか？",
        "{who}には何か創作系の趣味がありますか？",
        "{who}はどんな教室に通ったことがありますか？",
        did="{hobby}教室に申し込んだ",
    ),
    Event(
        "family",
        "{relative}の{relname}が来週{city2}から飛行機で来るの、すっごい久しぶり",
        "{who}の{relative}はどこに住んでいますか？",
        "{who}の{relative}の{relname}が訪ねてくるのはいつですか？",
        did="{relname}が{city2}から来ると聞いた",
    ),
    Event(
        "cooking",
        "今夜おばあちゃんのレシピで{dish}作ったら、家中いい匂いになった",
        "{who}がおばあちゃん直伝の作り方でこしらえた料理は何ですか？",
        "{who}が{dish}を作ったのはいつですか？",
        "{who}は料理をするのが好きですか？",
        did="{dish}を作った",
    ),
    Event(
        "injury",
        "昨日{sport}やってて足首ひねっちゃって、ソファから動けない",
        "{who}はどうしてケガをしたのですか？",
        "{who}が足首を捻挫したのはいつですか？",
        did="{sport}で足首をひねった",
    ),
    Event(
        "volunteer",
        "午前中は{place}でボランティアしてた、{friend}と一緒に寄付の品を仕分けしたよ",
        "{place}で{who}を手伝ってくれたのは誰ですか？",
        "{who}が{place}でボランティアをしたのはいつですか？",
        "{who}は地域の奉仕活動に参加していますか？",
        "{who}はどこでボランティアをしたことがありますか？",
        did="{place}でボランティアをした",
    ),
    Event(
        "concert",
        "金曜に{venue}で{band}のライブ見てきた、叫びすぎて声ガラガラ",
        "{who}が{venue}で見たのはどのバンドの公演ですか？",
        "{who}が{band}のライブに行ったのはいつですか？",
        None,
        "{who}はどのバンドのライブを見たことがありますか？",
        did="{band}のライブを見た",
    ),
    Event(
        "gift",
        "{friend}が誕生日に{gift}くれたの、泣きそうになった",
        "{who}が{friend}からもらった誕生日プレゼントは何ですか？",
        "{who}の誕生日はいつですか？",
        did="{friend}から{gift}をもらった",
    ),
    Event(
        "move",
        "{hood}の部屋、賃貸契約してきた！月末に引っ越すよ",
        "{who}はどの地区に移り住む予定ですか？",
        "{who}が新しい部屋の賃貸契約を結んだのはいつですか？",
        "{who}は近々引っ越しますか？",
        did="{hood}で賃貸契約を結んだ",
    ),
]

SLOTS: dict[str, list[str]] = {
    "species": "ビーグル トラ猫 コーギー インコ うさぎ ゴールデンレトリバー カメ ハスキー "
    "ハムスター ダックスフンド".split(),
    "pet": "ポチ ルナ モカ もち こむぎ まる ハナ ソラ きなこ あずき ココ チョコ ムギ ゆず ラテ "
    "コタロウ".split(),
    "city": "リスボン 台北 レイキャビク マラケシュ バンクーバー プラハ クスコ ハノイ エディンバラ "
    "セビリア トビリシ オアハカ ベルゲン ハバナ イスタンブール ドゥブロヴニク".split(),
    "sight": "古い大聖堂 夜市 夕暮れの港 山のロープウェイ 丘の上のお城 屋台グルメ 植物園 温泉 "
    "リバークルーズ タイルの宮殿".split(),
    "instrument": "チェロ バイオリン ウクレレ サックス ドラム ピアノ バンジョー トランペット "
    "フルート ハープ".split(),
    "race": "市民ハーフマラソン トレイル10K チャリティー5キロ 河川敷マラソン 港のファンラン "
    "山岳トレイルレース 皇居ラン カラーラン".split(),
    "time": "1時間52分 48分 27分 4時間5分 2時間10分 55分 3時間38分 31分".split(),
    "book": "『ノルウェイの森』 『コンビニ人間』 『蜜蜂と遠雷』 『告白』 『火花』 "
    "『博士の愛した数式』 『舟を編む』 『容疑者Xの献身』 『かがみの孤城』 "
    "『君たちはどう生きるか』 『羊と鋼の森』 『夜のピクニック』".split(),
    "company": "明光テック 北風ラボ 健康堂 グローバル商事 まつぼっくりスタジオ ひかりエナジー "
    "あおば銀行 オービット物流".split(),
    "role": "プロダクトデザイナー 看護師 データアナリスト 副料理長 プロジェクトマネージャー "
    "スクールカウンセラー 営業リーダー UXリサーチャー".split(),
    "hobby": "陶芸 水彩画 木工 サルサ 写真 書道 即興コメディ ステンドグラス".split(),
    "relative": "姉 兄 いとこ 叔母 祖父 姪".split(),
    "relname": "由美 健二 恵子 誠 裕子 隆 美穂 修 智子 剛".split(),
    "city2": "札幌 仙台 福岡 那覇 金沢 広島 新潟 松山 鹿児島 函館".split(),
    "dish": "肉じゃが 餃子 麻婆豆腐 筑前煮 ぶり大根 唐揚げ ちらし寿司 豚の角煮 おでん "
    "ロールキャベツ".split(),
    "sport": "バレーボール サッカー バスケ テニス バドミントン ピックルボール フリスビー".split(),
    "place": "フードバンク 動物保護施設 ホームレス支援センター 子ども病院 図書館の古本市 "
    "コミュニティ農園 老人ホーム".split(),
    "friend": "ミホ ケンジ ユカ タクヤ アヤ ショウ リナ ダイ".split(),
    "band": "スピッツ;サカナクション;King Gnu;back number;RADWIMPS;ELLEGARDEN;ONE OK ROCK;"
    "Official髭男dism".split(";"),
    "gift": "レコードプレーヤー 手作りのキルト 天体望遠鏡 エスプレッソマシン シルバーのネックレス "
    "チェキ 登山靴".split(),
    "teacher": "佐藤 林 梅田 中村 小林 吉田 松本 山口".split(),
    "venue": "日本武道館 東京ドーム Zepp羽田 横浜アリーナ 大阪城ホール さいたまスーパーアリーナ "
    "渋谷クアトロ ブルーノート東京".split(),
    "hood": "桜ヶ丘 谷中 二子玉川 杉並 西荻窪 港南 自由が丘".split(),
}
GENRE = {
    "チェロ": "クラシック",
    "バイオリン": "クラシック",
    "ウクレレ": "フォーク",
    "サックス": "ジャズ",
    "ドラム": "ロック",
    "ピアノ": "クラシック",
    "バンジョー": "ブルーグラス",
    "トランペット": "ジャズ",
    "フルート": "クラシック",
    "ハープ": "クラシック",
}

SMALL_TALK = [
    "{other}やっほー！元気してた？",
    "{other}、久しぶり！",
    "わかる〜ほんとそれw",
    "えーすごい！めっちゃ嬉しい！",
    "うわ、大変そう。がんばって",
    "うんうん、私も同じこと思ってた",
    "{other}かっこよすぎ！",
    "笑 私も",
    "えー、ほっこりする",
    "ありがと{other}、嬉しい",
    "だよね？！今週やばかった",
    "よかったね、ほんとに",
    "うーん、そういう考え方はしてなかったな",
    "てか私の話ばっかりだね、そっちは何か新しいことあった？",
    "特に何も、いつもの仕事って感じ",
    "こっちはわりと平和だよ",
    "はは、想像つく！",
    "がんばったもんね！",
    "はぁ、月曜日ってほんとつらい…",
    "いいね、そうしよ！",
    "じゃあまたね{other}、おつかれ！",
    "{other}バイバイ！また話そ",
    "いい週末を！",
    "会いたいな〜、またゆっくり話そ",
    "元気だよ、ありがと！",
    "相変わらずって感じw",
    "ヤバすぎ、もっと聞かせて",
    "おーいいね、どうだった？",
    "テンション上がる！！",
    "ほんとよかったね",
]
TOPIC_CHATTER = {
    "pet": ["動物がいるとなんでも癒されるよね", "私もずっと自分のペット欲しかったんだよな"],
    "trip": ["私も休みほしい〜", "旅行ってほんとリフレッシュになるよね"],
    "instrument": ["音楽ってストレス発散になるよね", "子どもの頃ちょっと習ってたけどやめちゃった"],
    "race": ["走るの苦手だから尊敬する", "ジョギング始めるって言い続けてるw"],
    "book": ["なんかおすすめの本教えて", "もう何ヶ月も本読んでないw"],
    "job": ["最近仕事のストレスすごい", "新しい仕事って怖いけどワクワクするよね"],
    "class": ["新しい趣味に挑戦するの大好き", "習い事って友達作るのにいいよね"],
    "family": ["家族が来てくれるのって最高だよね", "私ももっと実家に電話しなきゃ"],
    "cooking": ["私料理ほんと下手でさw", "やっぱ家のご飯って違うよね"],
    "injury": ["えー大丈夫？早く良くなりますように！", "無理しないでゆっくり休んでね"],
    "volunteer": ["優しすぎる", "私もどこかでボランティアしたいと思ってた"],
    "concert": ["生のライブってほんと最高", "もうずっとライブ行けてないや"],
    "gift": ["遅れたけど誕生日おめでとう！！", "めっちゃ気持ちこもったプレゼントだね"],
    "move": ["引っ越しってほんと疲れるよね", "新しい街で新生活だね！"],
}
REACTIONS = [
    "え、ほんと？詳しく教えて",
    "うそ、すごいじゃん",
    "わー、どうだった？",
    "それ大ニュースじゃん！",
]
FOLLOW_UPS = [
    "正直今月いちばん嬉しかったかも",
    "まだ信じられない",
    "あとで写真送るね",
    "大変だったけどやってよかった",
]
OPENERS = ["はぁ、今週長かった。", "ねえねえ、", "", "どうでもいい報告なんだけど、", "あ、そうだ！"]
CLOSERS = ["", "。てかそっちは元気？", "。最近何してる？", "。人生最高w"]

JAPANESE = Language(
    "ja-conversations",
    PEOPLE,
    EVENTS,
    SLOTS,
    GENRE,
    SMALL_TALK,
    TOPIC_CHATTER,
    REACTIONS,
    FOLLOW_UPS,
    OPENERS,
    CLOSERS,
    lambda day, who, text: f"[{day.year}年{day.month}月{day.day}日] {who}：{text}",
    lambda who, day: f"{who}は{day.year}年{day.month}月に何をしましたか？",
    lambda who, day: f"{who}は{day.month}月に何をしましたか？",
    lambda who: f"{who}は先月何をしましたか？",
    lambda who, did: f"{who}が{did}後の一ヶ月で何をしましたか？",
)


def build_ja(seed: int = 14, conversations: int = 10, sessions: int = 24) -> Dataset:
    return build(seed, conversations, sessions, lang=JAPANESE)


def build_ja_time(seed: int = 14, conversations: int = 10, sessions: int = 24) -> Dataset:
    """The same dialogues' month questions asked three ways, and the anchored ones
    (benchmarks/conversation_time.py)."""
    return build_time(seed, conversations, sessions, lang=JAPANESE)


if __name__ == "__main__":
    show(build_ja())
