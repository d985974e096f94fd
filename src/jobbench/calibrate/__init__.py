"""jobbench.calibrate: how far judges agree, with each other and with known verdicts.

Public API:
    statistics (:mod:`._metrics`): :func:`percent_agreement`, :func:`cohen_kappa`,
    :func:`krippendorff_alpha`, :func:`coincidence_matrix`, :func:`all_agree_rate`,
    :func:`confusion` / :class:`Confusion`, :func:`score_deviation` / :class:`ScoreDeviation`
    / :class:`ScorePoint`;
    reading grades: :func:`read_run_grades`, :func:`read_judge_dir`, :class:`JudgeGrades`,
    :func:`tasks_of_runs`, :class:`CalibrateInputError`;
    expected verdicts: :func:`discover_sets`, :func:`sets_in_folder`, :func:`load_expected`,
    :func:`expected_score`, :class:`ExpectedSet`, :class:`ExpectedFileError`;
    grading sets: :func:`grade_sets`;
    figures and output: :func:`calibrate` → :class:`CalibrationReport`,
    :func:`write_calibration`, :func:`render_markdown`, :func:`plot_cost_vs_agreement`.
"""

from ._analysis import (
    CalibrationReport,
    ChecksVsLlm,
    ExpectedSummary,
    Flip,
    JudgeSummary,
    OverallAgreement,
    PairSummary,
    calibrate,
)
from ._expected import (
    ExpectedFileError,
    ExpectedSet,
    discover_sets,
    expected_by_trial,
    expected_score,
    load_expected,
    sets_in_folder,
)
from ._grades import (
    CalibrateInputError,
    JudgeGrades,
    check_same_deliverables,
    criterion_map,
    read_judge_dir,
    read_run_grades,
    tasks_of_runs,
    verdict_label,
)
from ._metrics import (
    Confusion,
    ScoreDeviation,
    ScorePoint,
    all_agree_rate,
    cohen_kappa,
    coincidence_matrix,
    confusion,
    krippendorff_alpha,
    percent_agreement,
    score_deviation,
)
from ._write import plot_cost_vs_agreement, render_markdown, write_calibration

__all__ = [
    "CalibrateInputError",
    "CalibrationReport",
    "ChecksVsLlm",
    "Confusion",
    "ExpectedFileError",
    "ExpectedSet",
    "ExpectedSummary",
    "Flip",
    "JudgeGrades",
    "JudgeSummary",
    "OverallAgreement",
    "PairSummary",
    "ScoreDeviation",
    "ScorePoint",
    "all_agree_rate",
    "calibrate",
    "check_same_deliverables",
    "coincidence_matrix",
    "cohen_kappa",
    "confusion",
    "criterion_map",
    "discover_sets",
    "expected_by_trial",
    "expected_score",
    "krippendorff_alpha",
    "load_expected",
    "percent_agreement",
    "plot_cost_vs_agreement",
    "read_judge_dir",
    "read_run_grades",
    "render_markdown",
    "score_deviation",
    "sets_in_folder",
    "tasks_of_runs",
    "verdict_label",
    "write_calibration",
]
