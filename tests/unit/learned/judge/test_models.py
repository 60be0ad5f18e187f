"""Judge model folders: round trip, contributions that sum to the score, feature-set mismatch refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lightgbm as lgb  # noqa: E402 - pinned: a missing package fails here, it never skips

from retrieval.learned.judge.features import (
    CANDIDATE_NAMES,
    feature_set_version,
    GATE_NAMES,
    GATE_SIGNS,
    SENTENCE_NAMES,
)
from retrieval.learned.judge.models import (
    BoosterModel,
    JudgeModelError,
    JudgeModels,
    LogisticModel,
    load_judge,
    read_models,
)

PARAMS = {"objective": "lambdarank", "num_leaves": 4, "min_data_in_leaf": 5, "verbose": -1, "deterministic": True,
          "force_col_wise": True, "num_threads": 1, "seed": 7}


def _data(width: int, rows: int = 200, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((rows, width))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.8).astype(float)
    return X, y


def _models() -> JudgeModels:
    Xc, yc = _data(len(CANDIDATE_NAMES))
    Xs, ys = _data(len(SENTENCE_NAMES), seed=1)
    Xg, yg = _data(len(GATE_NAMES), seed=2)
    rank = lgb.train(PARAMS, lgb.Dataset(Xc, yc, group=[20] * 10), 20)
    ev = lgb.train(PARAMS, lgb.Dataset(Xs, ys, group=[20] * 10), 20)
    return JudgeModels(BoosterModel(rank), LogisticModel.fit(Xg, yg, signs=GATE_SIGNS), BoosterModel(ev), 0.42)


def test_folder_round_trips(tmp_path):
    models = _models()
    models.manifest = {"training": {"seed": 7}}
    models.save(tmp_path / "m", "# card\n")
    loaded = read_models(tmp_path / "m")
    X, _ = _data(len(CANDIDATE_NAMES), 30, seed=3)
    Xs, _ = _data(len(SENTENCE_NAMES), 30, seed=4)
    Xg, _ = _data(len(GATE_NAMES), 30, seed=6)
    assert np.allclose(loaded.rerank(X).raw, models.rerank(X).raw)
    assert np.allclose(loaded.support_proba(Xg)[0], models.support_proba(Xg)[0])
    assert np.allclose(loaded.evidence_scores(Xs).raw, models.evidence_scores(Xs).raw)
    assert loaded.threshold == 0.42
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["feature_set_version"] == feature_set_version()
    assert manifest["candidate_features"] == list(CANDIDATE_NAMES)
    assert manifest["gate_features"] == list(GATE_NAMES)
    assert manifest["files"] == {"reranker": "reranker.txt", "support": "support.json", "evidence": "evidence.txt"}
    assert (tmp_path / "m" / "model_card.md").read_text() == "# card\n"


def test_contributions_sum_to_the_raw_score():
    models = _models()
    X, _ = _data(len(CANDIDATE_NAMES), 25, seed=5)
    ex = models.rerank(X)
    booster_raw = models.reranker.booster.predict(X, raw_score=True)
    assert np.allclose([sum(c.values()) for c in ex.contributions], booster_raw)
    assert set(ex.contributions[0]) == {*CANDIDATE_NAMES, "bias"}
    p, sup = models.support_proba(_data(len(GATE_NAMES), 25, seed=8)[0])
    assert set(sup.contributions[0]) == {*GATE_NAMES, "bias"}
    logits = np.array([sum(c.values()) for c in sup.contributions])
    assert np.allclose(p, 1 / (1 + np.exp(-logits)))


def test_logistic_regression_learns_a_separable_rule():
    X, y = _data(3, 400)
    model = LogisticModel.fit(X, y, l2=0.1)
    p = 1 / (1 + np.exp(-model.raw(X)))
    assert ((p > 0.5) == (y == 1)).mean() > 0.95


def test_sign_bounded_logistic_keeps_each_coefficient_on_its_side():
    # y depends on column 0 only; column 1 is a noisy copy of column 0 and column 2 is its negation plus
    # noise. Unbounded, the correlated columns share the weight with any sign; bounded, column 2 (declared
    # −1) may not get a positive coefficient and column 1 (declared +1) no negative one.
    rng = np.random.default_rng(3)
    a = rng.random(500)
    X = np.column_stack([a, a + rng.normal(0, 0.05, 500), -a + rng.normal(0, 0.05, 500)])
    y = (a + rng.normal(0, 0.1, 500) > 0.5).astype(float)
    bounded = LogisticModel.fit(X, y, l2=1.0, signs=(1, 1, -1))
    assert bounded.coef[0] >= 0 and bounded.coef[1] >= 0 and bounded.coef[2] <= 0
    p = 1 / (1 + np.exp(-bounded.raw(X)))
    assert ((p > 0.5) == (y == 1)).mean() > 0.85
    wrong = LogisticModel.fit(X, y, l2=1.0, signs=(-1, -1, 1))  # every declared side is wrong: all zero
    assert np.allclose(wrong.coef, 0.0, atol=1e-6)


def test_feature_set_mismatch_is_refused(tmp_path):
    _models().save(tmp_path / "m")
    path = tmp_path / "m" / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "feature_set_version": "judge-features-0"}))
    models, reason = load_judge(tmp_path / "m")
    assert models is None and "feature set 'judge-features-0'" in reason.text() and "retrain" in reason.text()
    path.write_text(json.dumps({**manifest, "candidate_features": list(CANDIDATE_NAMES[::-1])}))
    with pytest.raises(JudgeModelError, match="other features"):
        read_models(tmp_path / "m")


def test_missing_or_broken_folder_gives_a_reason(tmp_path):
    models, reason = load_judge(tmp_path / "nowhere")
    assert models is None and "manifest.json missing" in reason.text()
    _models().save(tmp_path / "m")
    (tmp_path / "m" / "reranker.txt").write_text("not a model")
    models, reason = load_judge(tmp_path / "m")
    assert models is None and "unreadable" in reason.text()


def test_a_damaged_model_folder_is_refused_before_lightgbm_reads_it(tmp_path):
    """A truncated LightGBM file aborted or crashed the process; NaN values loaded and then refused everything."""
    import json
    import shutil

    from retrieval.core.paths import PROJECT_ROOT
    from retrieval.learned.judge.models import load_judge

    shipped = PROJECT_ROOT / "models" / "judge"
    cases = {}
    for name, damage in {
        "truncated": lambda f: (f / "reranker.txt").write_bytes((shipped / "reranker.txt").read_bytes()[:2000]),
        "nan threshold": lambda f: _edit_json(f / "manifest.json", support_threshold=float("nan")),
        "threshold 5": lambda f: _edit_json(f / "manifest.json", support_threshold=5.0),
    }.items():
        folder = tmp_path / name.replace(" ", "-")
        shutil.copytree(shipped, folder)
        damage(folder)
        cases[name] = load_judge(folder)
    assert load_judge(shipped)[1].text() == "loaded"
    assert cases["truncated"][0] is None and "differs from the file the manifest records" in cases["truncated"][1].text()
    assert all(m is None and "support_threshold" in why.text() for m, why in (cases["nan threshold"], cases["threshold 5"]))
    unhashed = tmp_path / "unhashed"
    shutil.copytree(shipped, unhashed)
    _edit_json(unhashed / "manifest.json", sha256=None)
    whole = (shipped / "reranker.txt").read_bytes()
    (unhashed / "reranker.txt").write_bytes(whole[:len(whole) * 2 // 3])   # cut inside its trees
    assert "not a complete LightGBM text model" in load_judge(unhashed)[1].text()
    (unhashed / "reranker.txt").write_bytes((shipped / "reranker.txt").read_bytes())
    support = json.loads((unhashed / "support.json").read_text(encoding="utf-8"))
    support["mean"][0] = float("nan")
    (unhashed / "support.json").write_text(json.dumps(support), encoding="utf-8")
    assert "finite number" in load_judge(unhashed)[1].text()


def _edit_json(path, **changes):
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data), encoding="utf-8")


def test_damaged_support_values_and_manifest_shapes_are_refused(tmp_path):
    """Values that parsed before and broke every request (NaN P, a flipped sign, a list for a manifest)."""
    good = _models()
    good.save(tmp_path / "good")
    support = json.loads((tmp_path / "good" / "support.json").read_text())
    manifest = json.loads((tmp_path / "good" / "manifest.json").read_text())
    j = GATE_NAMES.index("g_focus_missing")  # declared −1: a positive coefficient contradicts it
    cases = {
        "tiny scale": ({**support, "scale": [1e-320] + support["scale"][1:]}, None, "positive standard deviation"),
        "huge coefficient": ({**support, "coef": [1e308] + support["coef"][1:]}, None, "beyond ±1e4"),
        "flipped sign": ({**support, "coef": [*support["coef"][:j], 3.0, *support["coef"][j + 1:]]}, None,
                         "g_focus_missing push against"),
        "threshold true": (None, {**manifest, "support_threshold": True}, "is not a number"),
        "threshold string": (None, {**manifest, "support_threshold": "0.5"}, "is not a number"),
    }
    import hashlib

    for name, (sup, man, why) in cases.items():
        folder = tmp_path / name.replace(" ", "-")
        folder.mkdir()
        for f in (tmp_path / "good").iterdir():
            (folder / f.name).write_bytes(f.read_bytes())
        m = dict(man or manifest)
        if sup is not None:
            (folder / "support.json").write_text(json.dumps(sup))
            m["sha256"] = {**m["sha256"], "support.json": hashlib.sha256((folder / "support.json").read_bytes()).hexdigest()}
        (folder / "manifest.json").write_text(json.dumps(m))
        models, reason = load_judge(folder)
        assert models is None and why in reason.text(), (name, reason)
    for shape in ("[]", "null", "3"):
        folder = tmp_path / f"shape-{len(shape)}-{shape[0]}"
        folder.mkdir()
        (folder / "manifest.json").write_text(shape)
        models, reason = load_judge(folder)
        assert models is None and reason.text().endswith("manifest.json is not a JSON object"), reason


def test_a_model_retrained_into_the_same_folder_is_loaded_anew(tmp_path):
    """Models were cached by their folder's path: "judge more, train again" then compared against the first
    model. The caches key on the folder's content (manifest hash and model files), so the new one loads."""
    from retrieval.learned.judge.models import folder_fingerprint
    from retrieval.pipeline.workbench import Workbench
    from retrieval.settings import Settings

    folder = tmp_path / "judge"
    _models().save(folder)
    s = Settings(_env_file=None, chroma_path=tmp_path / "chroma", judge_path=folder)
    bench = Workbench(s, embedder=None, progress=False)
    no_rerank = s.with_overrides(reranker_model="none")
    first = folder_fingerprint(folder)
    for spec in ("ltr", f"ltr:{folder}"):
        assert bench.reranker(spec)[0].models.threshold == 0.42
    old_ranker, old_judge = bench.reranker("ltr")[0], bench.judge(no_rerank)[0]
    assert bench.reranker("ltr")[0] is old_ranker and bench.judge(no_rerank)[0] is old_judge  # unchanged: cached
    retrained = _models()
    retrained.threshold = 0.3
    retrained.save(folder)
    assert folder_fingerprint(folder) != first
    for spec in ("ltr", f"ltr:{folder}"):
        new = bench.reranker(spec)[0]
        assert new is not old_ranker and new.models.threshold == 0.3, spec
    assert bench.judge(no_rerank)[0].threshold == 0.3
    assert bench.judge(s)[0].threshold == 0.3  # the ltr reranker's own models


def test_one_request_takes_its_model_folders_fingerprint_once(tmp_path):
    from retrieval.learned.judge.models import folder_fingerprint, one_version_per_request

    folder = tmp_path / "judge"
    _models().save(folder)
    first = folder_fingerprint(folder)
    retrained = _models()
    retrained.threshold = 0.3
    with one_version_per_request():
        assert folder_fingerprint(folder) == first
        retrained.save(folder)
        assert folder_fingerprint(folder) == first      # the request keeps the version it began with
    assert folder_fingerprint(folder) != first          # the next request sees the new one
