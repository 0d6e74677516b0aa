"""Fit the criteria side: the encoder's top layer(s), re-tuned to read criteria, a head that turns a criterion's
embedding into signed property weights and a voice vector, and the voice projection of responses.

A frozen sentence embedding barely tells "I like emojis" from "I dislike emojis"; re-tuning the top transformer
layer on the criteria task does, and keeps the pretrained knowledge of the layers below (which the response side
shares). Token states below the tuned layers are computed once; a step runs only the tuned layers over the
phrasings it draws. Each step draws fresh rows (the paper's criteria noise, re-drawn every step):
- property rows: a phrasing of property p on a pair that differs clearly in p; the side the phrasing asks for
  must win; 30% carry an extra general criterion that says nothing about p (noise "add");
- silent rows: a general criterion, or a phrasing about a property the pair barely differs in: the decision must
  stay the criteria-free one (noise "remove": what an irrelevant criterion must not change);
- DSP rows: under a domain's phrasing, that domain's answer beats the others (voice).
Two optional direct targets: the stray penalty (a phrasing's weights on properties it is not about, and a general
criterion's on any, should be 0) and the form gate (a classifier: does this criterion speak about form at all?).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import numpy as np
import torch
from crm_core.properties import NAMES
from tqdm.auto import tqdm

from crm_train.compositional import phrasings as P
from crm_train.compositional.features import Groups

DSP_DOMAINS = ("academy", "business", "entertainment", "literature")
DSP_TRAIN = {
    "academy": ["I prefer an academic style: rigorous, precise and formal, like a scholarly text.",
                "Answer like a researcher would, with careful, well-structured reasoning.",
                "Write like a professor.", "I want a scholarly, academic answer.", "Use an academic register.",
                "explain it like a textbook would", "Be rigorous and formal, as in a research paper.",
                "I like answers written for academics."],
    "business": ["I prefer a business perspective: practical, action-oriented and focused on value.",
                 "Answer like a business professional, with concrete and pragmatic advice.",
                 "Write for a business audience.", "I care about ROI, customers and strategy.",
                 "Frame it for executives.", "give me the business angle", "Think like an entrepreneur.",
                 "I want a corporate, professional tone focused on results."],
    "entertainment": ["I prefer a fun, lively and entertaining answer.",
                      "Make it playful and engaging, like an entertainer would.", "Be funny and entertaining.",
                      "I like humorous, light-hearted answers.", "Make it fun to read!", "entertain me",
                      "Write it like a TV host would.", "I want jokes and a playful tone."],
    "literature": ["I prefer a literary, expressive and artistic style.",
                   "Answer with the flair of a writer: vivid imagery and beautiful language.",
                   "Write poetically.", "I love lyrical, literary prose.", "Use vivid, artistic language.",
                   "make it sound like a novel", "Write like a poet.", "I like rich, expressive storytelling."],
}  # fmt: skip
# More domain phrasings (trained on since the wide_dsp fit), written apart from DSP_VALIDATION and DSP_DEVELOPMENT
WIDE_DSP = {
    "academy": ["Answer as an academic paper would.", "I'm after a formal, academic treatment.",
                "Cite the theory and define your terms, like a lecturer.", "Make it sound like a university lecture.",
                "Use the careful, objective tone of scientific writing.", "I like precise, formal, academic prose.",
                "Explain it as in an encyclopedia entry.", "Write for a peer-reviewed audience.",
                "a formal, analytical, academic answer please", "Take the stance of a careful researcher.",
                "Be methodical and scholarly.", "Write in the register of academia."],
    "business": ["Focus on the bottom line.", "Explain it as a consultant would to a client.",
                 "I run a company: keep it practical and commercial.", "Think about costs, profit and market.",
                 "Give me actionable recommendations for my business.", "Use a professional, corporate voice.",
                 "Answer like an MBA.", "Write it as a business memo.", "what's the commercial angle here?",
                 "Keep it pragmatic and focused on outcomes.", "Pitch it to investors.",
                 "Frame it in terms of strategy and growth."],
    "entertainment": ["Make me laugh.", "Be witty and fun.", "I want a cheerful, entertaining answer.",
                      "Keep it light and playful.", "Add some humour!", "Write it like a stand-up comedian.",
                      "Make it as fun as a game show.", "i like silly, fun answers", "Crack a few jokes.",
                      "Be lively and charming.", "Entertain me while you explain.",
                      "Give it a fun, pop-culture vibe."],
    "literature": ["Write it beautifully, like fiction.", "Use metaphors and imagery.",
                   "I want elegant, literary language.", "Tell it as a story.", "Make the prose sing.",
                   "Write with the style of a great author.", "I love descriptive, artistic writing.",
                   "make it poetic and lyrical", "Use rich, evocative prose.", "Write it as a short story would.",
                   "Give it literary flair.", "Paint a picture with words."],
}  # fmt: skip
# Domain phrasings for choosing settings (training/experiments/criteria_shrinkage.py), never trained on: written
# apart from the training and validation phrasings, like phrasings.DEVELOPMENT_NOUNS
DSP_DEVELOPMENT = {
    "academy": ["Give it the rigour of a dissertation.", "Sound like a learned expert writing for a university."],
    "business": ["Make it useful for a startup founder.", "Speak the language of the boardroom."],
    "entertainment": ["Give it a cheeky, comic twist.", "Write it like a fun late-night show monologue."],
    "literature": ["Let it flow like a passage from a classic novel.", "Use the imagery of poetry."],
}
DSP_VALIDATION = {
    "academy": ["Write it the way a scholar would, for a journal."],
    "business": ["Frame it for a manager who cares about results and money."],
    "entertainment": ["Keep me amused: playful, showbiz energy."],
    "literature": ["Make it read like a poet's or novelist's work."],
}


class CriteriaNet(torch.nn.Module):
    """Tuned top layer(s) + mean pooling + MLP head -> (property weights, voice vector); and the voice projection
    of response embeddings."""

    def __init__(self, k: int, hidden: int, rank: int, layers: list[torch.nn.Module], form_gate: bool = False):
        super().__init__()
        self.k = k
        self.layers = torch.nn.ModuleList(layers)
        self.criteria = torch.nn.Sequential(torch.nn.Linear(384, hidden), torch.nn.GELU(),
                                            torch.nn.Linear(hidden, k + rank))  # fmt: skip
        self.voice_proj = torch.nn.Linear(384, rank, bias=False)
        # is the criterion about a measured property at all? (a serving gate: crm_core.compositional.scorer); made only
        # when fitted, so that a fit without it draws the same random numbers as before it existed
        self.form_gate = (torch.nn.Sequential(torch.nn.Linear(384, 128), torch.nn.GELU(), torch.nn.Linear(128, 1))
                          if form_gate else None)  # fmt: skip
        last = cast(torch.nn.Linear, self.criteria[2])
        torch.nn.init.zeros_(last.weight)
        torch.nn.init.zeros_(last.bias)

    def embed(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = states
        additive = (1.0 - mask[:, None, None, :]) * torch.finfo(h.dtype).min
        for layer in self.layers:
            h = layer(h, attention_mask=additive)[0]
        m = mask[..., None]
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> tuple:
        """Property weights, voice vector and form-gate logit (None without a gate) of each criterion."""
        pooled = self.embed(states, mask)
        out = self.criteria(pooled)
        gate = self.form_gate(pooled)[:, 0] if self.form_gate is not None else None
        return out[:, : self.k], out[:, self.k :], gate


@dataclass
class CriteriaData:
    """What the criteria fit draws from: answers with their features, and every phrasing's token states."""

    z: np.ndarray  # (answers, K) centred, scaled
    vec: np.ndarray  # (answers, 384)
    quality: np.ndarray  # (answers,) as property rows meet it: the reference-free term plus a stand-in draw
    clean_quality: np.ndarray  # (answers,) the reference-free term alone: what silent rows must not overturn
    clean_spread: float  # its standard deviation among answers to one prompt
    clear: dict[int, list[tuple[int, int]]]  # property -> pairs (i, j) where i has clearly more of it
    dsp: list[tuple[int, int, int]]  # (domain index, winner row, loser row)
    bank: list[P.Phrasing]
    states: torch.Tensor  # (phrasings, T, 384): bank, then general (silent) criteria, then DSP phrasings
    mask: torch.Tensor
    general: np.ndarray  # indices into states
    general_p: np.ndarray | None  # drawing probability of each general criterion (short ones and rubrics half each)
    dsp_phrasings: list[np.ndarray]  # per domain: indices into states
    bank_p: np.ndarray | None = None  # drawing probability of each bank phrasing for property rows (None: even)

    @cached_property
    def tensors(self) -> dict[str, torch.Tensor]:
        """The arrays the loss reads, as tensors (made once)."""
        return {"z": torch.tensor(self.z), "vec": torch.tensor(self.vec),
                "quality": torch.tensor(self.quality, dtype=torch.float32),
                "clean_quality": torch.tensor(self.clean_quality, dtype=torch.float32),
                "sign": torch.tensor([p.sign for p in self.bank], dtype=torch.float32)}  # fmt: skip

    @cached_property
    def bank_prop(self) -> np.ndarray:
        """Each bank phrasing's property index."""
        return np.array([NAMES.index(p.prop) for p in self.bank])

    def silent_scale(self, config) -> float:
        """Silent rows compare logits times this: config.silent_scale, or (0) 1 / the clean quality's typical
        difference, so a criterion that says nothing about a pair must not overturn even a small one."""
        return config.silent_scale or 1.0 / max(self.clean_spread, 1e-3)


def phrase_table(encoder, bank: list[P.Phrasing], general: list[str], tuned_layers: int) -> tuple:
    """Token states below the tuned layers for the bank, the general criteria and the DSP phrasings (with
    WIDE_DSP)."""
    texts = [p.text for p in bank] + general
    dsp = []
    for domain in DSP_DOMAINS:
        domain_texts = DSP_TRAIN[domain] + WIDE_DSP[domain]
        dsp.append(np.arange(len(texts), len(texts) + len(domain_texts)))
        texts += domain_texts
    after = encoder.model.config.num_hidden_layers - tuned_layers
    states, mask = encoder.hidden_states(texts, after)
    return states, mask, np.arange(len(bank), len(bank) + len(general)), dsp


def clear_pairs(groups: Groups, z: np.ndarray, gap: float, per_property: int, rng: np.random.Generator) -> dict:
    """Per property, up to `per_property` within-prompt pairs (more, less) whose scaled values differ by `gap`."""
    out: dict[int, list[tuple[int, int]]] = {k: [] for k in range(z.shape[1])}
    for rows in groups.members():
        if len(rows) < 2:
            continue
        a, b = np.triu_indices(len(rows), 1)
        ra, rb = rows[a], rows[b]
        diff = z[ra] - z[rb]
        for k in range(z.shape[1]):
            hit = np.abs(diff[:, k]) >= gap
            for i, j, d in zip(ra[hit], rb[hit], diff[hit, k], strict=True):
                out[k].append((int(i), int(j)) if d > 0 else (int(j), int(i)))
    for k in out:
        if len(out[k]) > per_property:
            keep = rng.choice(len(out[k]), per_property, replace=False)
            out[k] = [out[k][i] for i in sorted(keep)]
    return out


def dsp_pairs(groups: Groups) -> list[tuple[int, int, int]]:
    out = []
    for rows in groups.members():
        by_domain = {groups.names[r].removeprefix("dsp:"): r for r in rows if groups.names[r].startswith("dsp:")}
        for d, domain in enumerate(DSP_DOMAINS):
            if domain not in by_domain:
                continue
            out += [(d, by_domain[domain], r) for name, r in by_domain.items() if name != domain]
    return out


def stray_weights(w: torch.Tensor, about: np.ndarray) -> torch.Tensor:
    """Mean square of the weights rows give to properties they are not about: a bank phrasing's other properties
    (`about`: its property's index), and every property of a general criterion (`about` -1)."""
    stray = torch.ones_like(w)
    rows = np.flatnonzero(about >= 0)
    stray[torch.tensor(rows), torch.tensor(about[rows])] = 0.0
    return (w * stray).pow(2).mean()


@dataclass
class CriteriaBatch:
    """One step's draw: the phrasings read (property rows', general, silent bank, DSP, in that order, with the
    offsets where each kind starts) and the answer pairs each row judges."""

    phrasings: np.ndarray  # indices into CriteriaData.states
    general_from: int
    silent_from: int
    dsp_from: int
    rows: np.ndarray  # property rows: the phrasing (0 .. general_from) each row reads
    pairs: np.ndarray  # (rows, 2): the answer with more of the phrasing's property, the one with less
    extra: np.ndarray  # (rows,) bool: the row also carries a general criterion ...
    extra_pick: np.ndarray  # (rows,) ... this one (an index into phrasings)
    silent_rows: np.ndarray  # silent rows: the phrasing each reads (general ones, then the silent bank's)
    silent_pairs: np.ndarray  # (silent rows, 2)
    dsp_rows: np.ndarray  # (DSP rows, 3): domain, its answer, another domain's answer


class CriteriaSampler:
    """Draws each step's rows (the paper's criteria noise, re-drawn every step) from the data, with one generator."""

    def __init__(self, data: CriteriaData, config, rng: np.random.Generator):
        self.data, self.config, self.rng = data, config, rng
        self.pairs = {p: np.array(v) for p, v in data.clear.items() if len(v)}
        self.usable = np.flatnonzero([p in self.pairs for p in data.bank_prop])
        self.usable_p = None if data.bank_p is None else data.bank_p[self.usable] / data.bank_p[self.usable].sum()
        self.dsp = np.array(data.dsp)

    def _pairs_of(self, props: np.ndarray) -> np.ndarray:
        return np.stack([self.pairs[p][int(x * len(self.pairs[p]))]
                         for p, x in zip(props, self.rng.random(len(props)), strict=True)])  # fmt: skip

    def draw(self) -> CriteriaBatch:
        data, rng, n, per = self.data, self.rng, self.config.criteria_phrasings, self.config.rows_per_phrasing
        prop_phr = rng.choice(self.usable, n, p=self.usable_p)  # property rows: `per` pairs for each drawn phrasing
        gen_phr = rng.choice(data.general, max(4, n // 4), p=data.general_p)
        silent_bank = rng.choice(len(data.bank), n // 2)
        dsp_rows = self.dsp[rng.integers(len(self.dsp), size=n // 2 * per)]
        dsp_phr = np.array([rng.choice(data.dsp_phrasings[d]) for d in range(len(DSP_DOMAINS))])
        o1, o2 = n, n + len(gen_phr)
        o3 = o2 + len(silent_bank)
        rows = np.repeat(np.arange(n), per)
        pairs = self._pairs_of(data.bank_prop[prop_phr][rows])
        extra = rng.random(len(rows)) < 0.3  # 30% of property rows carry an extra general criterion
        pick = o1 + rng.integers(len(gen_phr), size=len(rows))
        s_rows = np.concatenate([rng.integers(o1, o2, size=len(gen_phr) * per), np.repeat(np.arange(o2, o3), per)])
        s_pairs = self._pairs_of(rng.choice(list(self.pairs), len(s_rows)))
        return CriteriaBatch(np.concatenate([prop_phr, gen_phr, silent_bank, dsp_phr]), o1, o2, o3, rows, pairs,
                             extra, pick, s_rows, s_pairs, dsp_rows)  # fmt: skip


def criteria_loss(net: CriteriaNet, batch: CriteriaBatch, data: CriteriaData, config) -> dict[str, torch.Tensor]:
    """The criteria readers' loss, term by term ("total" is what the fit minimises). What each term teaches:
    - property: under a phrasing of property p, the answer with the side of p it asks for wins (a pairwise logistic
      loss on quality + the criteria's term), also with a general criterion added (noise "add");
    - silent_kl: a general criterion, or a phrasing about a property the pair barely differs in, leaves the
      criteria-free decision as it was (KL to it, 0 at best; noise "remove");
    - dsp: under a domain's phrasing, that domain's answer beats the others' (the voice);
    - size: the least weights that do the job (nothing else holds back a property no drawn row tests);
    - stray (with config.stray_penalty): every weight a phrasing gives a property it is not about is 0, and every
      weight of a general or domain criterion;
    - form_gate (with config.form_gate_weight): the gate tells sentences about form (the bank, the domains) from
      general criteria, both classes weighed the same."""
    z, vec = data.tensors["z"], data.tensors["vec"]
    q, q_silent, sign = data.tensors["quality"], data.tensors["clean_quality"], data.tensors["sign"]
    bank_prop = data.bank_prop
    phr, o1, o2, o3 = batch.phrasings, batch.general_from, batch.silent_from, batch.dsp_from
    width = int(data.mask[phr].sum(1).max())  # pad only to this draw's longest phrasing
    w_all, u_all, gate = net(data.states[phr, :width], data.mask[phr, :width])
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def term(w, u, ia, ib):
        return (w * (z[ia] - z[ib])).sum(1) + (u * (net.voice_proj(vec[ia]) - net.voice_proj(vec[ib]))).sum(1)

    rows = batch.rows
    extra = torch.tensor(batch.extra, dtype=torch.float32)[:, None]
    w = w_all[rows] + extra * w_all[batch.extra_pick]
    u = u_all[rows] + extra * u_all[batch.extra_pick]
    ia, ib = torch.tensor(batch.pairs[:, 0]), torch.tensor(batch.pairs[:, 1])
    terms = {"property": bce(q[ia] - q[ib] + term(w, u, ia, ib), (sign[phr[:o1][rows]] > 0).float())}
    # silent rows: general criteria on any clear pair; a bank phrasing on a pair barely differing in its property
    s_rows = batch.silent_rows
    sa, sb = torch.tensor(batch.silent_pairs[:, 0]), torch.tensor(batch.silent_pairs[:, 1])
    from_bank = s_rows >= o2
    about_np = np.full(len(s_rows), -1)
    about_np[from_bank] = bank_prop[phr[s_rows[from_bank]]]
    about = torch.tensor(about_np)
    gap = (z[sa, about.clamp(min=0)] - z[sb, about.clamp(min=0)]).abs()
    keep = (about < 0) | (gap < config.silent_gap)
    dq = q_silent[sa] - q_silent[sb]
    scale = data.silent_scale(config)
    s_logit = scale * (dq + term(w_all[s_rows], u_all[s_rows], sa, sb))
    target = torch.sigmoid(scale * dq)
    terms["silent_kl"] = bce(s_logit[keep], target[keep]) - bce(target[keep].logit(), target[keep])
    d_idx = o3 + torch.tensor(batch.dsp_rows[:, 0])
    da, db = torch.tensor(batch.dsp_rows[:, 1]), torch.tensor(batch.dsp_rows[:, 2])
    terms["dsp"] = bce(q[da] - q[db] + term(w_all[d_idx], u_all[d_idx], da, db), torch.ones(len(batch.dsp_rows)))
    terms["size"] = config.weight_penalty * w_all.pow(2).mean()
    total = terms["property"] + config.silent_weight * terms["silent_kl"] + terms["dsp"] + terms["size"]
    if config.stray_penalty:  # what each drawn phrasing is about is known: every other weight should be 0
        # general criteria (rows o1:o2) and domain criteria (o3:) are about no property: a register keeps only
        # the weights DSP strongly needs (left free, DSP's chance correlations became readings)
        drawn_about = np.full(len(phr), -1)
        drawn_about[:o1], drawn_about[o2:o3] = bank_prop[phr[:o1]], bank_prop[phr[o2:o3]]
        terms["stray"] = stray_weights(w_all, drawn_about)
        total = total + config.stray_penalty * terms["stray"]
    if config.form_gate_weight:  # bank phrasings and domain criteria (their register) speak about form;
        about_form = torch.ones(len(phr), dtype=torch.bool)  # general criteria do not
        about_form[o1:o2] = False  # the two classes weigh the same
        terms["form_gate"] = (bce(gate[about_form], torch.ones(int(about_form.sum())))
                              + bce(gate[~about_form], torch.zeros(int((~about_form).sum())))) / 2  # fmt: skip
        total = total + config.form_gate_weight * terms["form_gate"]
    return terms | {"total": total}


def fit_criteria(data: CriteriaData, encoder, config) -> tuple[CriteriaNet, list[dict]]:
    """The fit, read top to bottom: the tuned layers and heads, then each step a fresh draw, its loss (criteria_loss)
    and one AdamW step; returns the net and a loss log (every 100 steps)."""
    torch.manual_seed(config.seed)
    sampler = CriteriaSampler(data, config, np.random.default_rng(config.seed))
    n_layers = encoder.model.config.num_hidden_layers
    tuned = [copy.deepcopy(encoder.model.encoder.layer[i]).float() for i in range(n_layers - config.criteria_layers,
                                                                                   n_layers)]  # fmt: skip
    net = CriteriaNet(data.z.shape[1], config.criteria_hidden, config.voice_rank, tuned,
                      form_gate=bool(config.form_gate_weight))  # fmt: skip
    opt = torch.optim.AdamW([
        {"params": net.layers.parameters(), "lr": config.criteria_layer_lr},
        {"params": [p for m in (net.criteria, net.voice_proj, net.form_gate) if m is not None for p in m.parameters()],
         "lr": config.criteria_lr},
    ], weight_decay=config.weight_decay)  # fmt: skip
    log: list[dict] = []
    for step in tqdm(range(config.criteria_steps), desc="criteria", unit="step"):
        terms = criteria_loss(net, sampler.draw(), data, config)
        if step % 100 == 0 or step == config.criteria_steps - 1:
            shown = {name: round(float(terms[name]), 4) if name in terms else None
                     for name in ("property", "silent_kl", "dsp", "form_gate")}  # fmt: skip
            log.append({"step": step, **shown})
        opt.zero_grad()
        terms["total"].backward()
        opt.step()
    return net, log
