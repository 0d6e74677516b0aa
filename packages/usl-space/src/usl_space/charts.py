"""Charts for the app: win rates with their 95% CI whiskers, and how ranks move between two criteria sets."""

from __future__ import annotations

import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: the Space has no display

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from usl_space.engine import Leaderboard


def literal(texts) -> None:
    """Draw these matplotlib Text objects as they are: a model name like `$\\undefinedcmd{x}$` (visitor text, from
    an upload) is never parsed as mathtext, which would fail or render markup."""
    for text in texts:
        text.set_parse_math(False)


def bar_chart(board: Leaderboard | None, top: int | None = None) -> Figure | None:
    """Horizontal bars, best at the top, with bootstrap 95% CI whiskers and the 50% line (= the baseline). Every
    model is drawn unless `top` is given; then the title says how many are left out."""
    if board is None or not board.rows:
        return None
    ranked = [r for r in board.rows if r["win_rate"] is not None]
    rows = ranked[:top][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2))
    rates = [100 * r["win_rate"] for r in rows]
    low = [100 * (r["win_rate"] - r["ci_low"]) for r in rows]
    high = [100 * (r["ci_high"] - r["win_rate"]) for r in rows]
    colors = ["#999999" if r["baseline"] else "#3b6ea8" for r in rows]
    ax.barh(range(len(rows)), rates, xerr=[low, high], color=colors, error_kw={"elinewidth": 1, "capsize": 2})
    ax.set_yticks(range(len(rows)), [r["model"] for r in rows], fontsize=8)
    ax.axvline(50, color="black", linewidth=0.8, linestyle=":")
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"win rate vs {board.baseline} (%), 95% CI; {board.n_queries}/{board.n_selected} queries")
    if len(rows) < len(board.rows):
        unranked = len(board.rows) - len(ranked)
        ax.set_title(
            f"top {len(rows)} of {len(board.rows)} models shown"
            + (f"; {unranked} without a win rate (no answers judged)" if unranked else ""),
            fontsize=9,
        )
    literal([*ax.get_yticklabels(), ax.xaxis.label, ax.title])
    fig.tight_layout()
    plt.close(fig)
    return fig


def slope_chart(a: Leaderboard, b: Leaderboard) -> Figure:
    """Each model's rank under criteria A (left) and B (right), joined by a line: green where it ranks higher under
    B, red lower, grey the same (said in the legend under the chart)."""
    rank_a = {r["model"]: r["rank"] for r in a.rows}
    rank_b = {r["model"]: r["rank"] for r in b.rows}
    models = sorted(set(rank_a) & set(rank_b), key=lambda m: rank_a[m])
    fig, ax = plt.subplots(figsize=(7, 0.25 * len(models) + 1.5))
    for model in models:
        ra, rb = rank_a[model], rank_b[model]
        color = "#2a9d3a" if rb < ra else ("#c0392b" if rb > ra else "#777777")
        ax.plot([0, 1], [ra, rb], color=color, marker="o", markersize=3, linewidth=1)
        ax.text(-0.03, ra, model, ha="right", va="center", fontsize=7, parse_math=False)
        ax.text(1.03, rb, model, ha="left", va="center", fontsize=7, parse_math=False)
    ax.set_xlim(-0.8, 1.8)
    ax.invert_yaxis()
    ax.set_xticks([0, 1], ["criteria A", "criteria B"])
    ax.set_yticks([])
    ax.set_frame_on(False)
    ax.legend(handles=[Line2D([], [], color=c, label=t) for c, t in (("#2a9d3a", "ranks higher under B"),
              ("#c0392b", "ranks lower under B"), ("#777777", "same rank"))], loc="upper center",
              bbox_to_anchor=(0.5, 0), ncol=3, fontsize=7, frameon=False)  # fmt: skip
    fig.tight_layout()
    plt.close(fig)
    return fig


def png(fig: Figure | None, folder: Path) -> str | None:
    """The figure as a PNG file in `folder` (drawn once; the app serves the file, so a remembered view costs no
    drawing), or None."""
    if fig is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"chart-{time.time_ns()}.png"
    fig.savefig(path, dpi=100)
    return str(path)
