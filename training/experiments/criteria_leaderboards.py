"""What typed criteria do to the full default leaderboard (805 queries x 40 models), with the shipped CRM:

- detailed vs concise: Kendall tau between the two boards for each of the five phrasing pairs never trained on
  (crm_train.compositional.phrasings.LENGTH_VALIDATION_PAIRS);
- "I dislike emojis": how the models whose answers use emoji move against the general board;
- "Prefer short, concise answers.": the top 10 (concise AND good?), with average words.

    uv run python training/experiments/criteria_leaderboards.py --data ../shared/data/usl/alpaca_eval \\
        --output training/experiments/results/criteria_leaderboards.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the bench (AlpacaEval folder or usl-data bench)")
    parser.add_argument("--model", help="compositional CRM folder (default: the shipped one)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.agreement import kendall_tau
    from crm_core.properties import EMOJI
    from crm_train.compositional.phrasings import LENGTH_VALIDATION_PAIRS
    from emit import emit
    from usl_space.loading import load_engine

    engine = load_engine(args.data, args.model, topics=False)
    engine.response_table(progress=True)

    def rates(criteria: list[str], dislikes: list[str] = ()) -> dict[str, dict]:
        board = engine.rank(criteria, dislikes)
        return {row["model"]: row for row in board.rows}

    others = [m for m in engine.models if m != engine.baseline]
    pairs = []
    for detailed, concise in LENGTH_VALIDATION_PAIRS:
        a, b = rates([detailed]), rates([concise])
        tau = kendall_tau([a[m]["win_rate"] for m in others], [b[m]["win_rate"] for m in others])
        pairs.append({"detailed": detailed, "concise": concise, "tau": round(tau, 3)})
    general = rates([])
    emoji_share = {m: sum(bool(EMOJI.search(t)) for (i, n), t in engine.output.items() if n == m) / 805 for m in others}
    users = sorted((m for m in others if emoji_share[m] >= 0.02), key=lambda m: -emoji_share[m])
    for criteria, dislikes, name in (
        (["I dislike emojis."], [], "I dislike emojis."),
        ([], ["emojis"], "dislikes: emojis"),
    ):
        board = rates(criteria, dislikes)
        moves = [{"model": m, "emoji_share": round(emoji_share[m], 3), "general_rank": general[m]["rank"],
                  "rank": board[m]["rank"]} for m in users]  # fmt: skip
        pairs_emoji = {"criteria": name, "models_using_emoji": moves}
        pairs.append(pairs_emoji)
    concise = rates(["Prefer short, concise answers."])
    top = sorted(concise.values(), key=lambda r: r["rank"])[:10]
    result = {"length_pairs_tau": [p for p in pairs if "tau" in p], "emoji": [p for p in pairs if "criteria" in p],
              "concise_top10": [{"rank": r["rank"], "model": r["model"], "win_rate": r["win_rate"],
                                 "avg_words": r["avg_words"], "general_rank": general[r["model"]]["rank"]}
                                for r in top]}  # fmt: skip
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
