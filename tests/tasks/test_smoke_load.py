import json
from pathlib import Path

from jobbench.tasks import load_dataset


def test_raw_hf_layout_splits(tmp_path: Path) -> None:
    for top, n in (("dataset", 2), ("dataset_easy", 1)):
        d = tmp_path / top / "lawyers" / "task1"
        (d / "task_folder").mkdir(parents=True)
        (d / "task_folder" / "TASK_INSTRUCTIONS.txt").write_text("x")
        (d / "task_card.md").write_text("c")
        rubrics = [{"rubric": "q", "weight": 2, "criterion": ["a"] * n}]
        (d / "RUBRICS.json").write_text(json.dumps({"rubrics": rubrics}))
    ds = load_dataset(tmp_path)
    assert [(t.id, t.criterion_count) for t in ds.tasks] == [
        ("easy/lawyers/task1", 1),
        ("main/lawyers/task1", 2),
    ]
