"""The standard task prompt every agent receives (DESIGN §2), per run protocol.

Both versions carry the instructions of the public JobBench runners (read
TASK_INSTRUCTIONS.txt, read the listed reference files with suitable tools, do the task,
write only the final deliverables to the output directory, analyse and justify any conflict
between sources), in our own words, with the paths the agent sees inside its sandbox. They
differ in one rule: under the ``jobbench`` protocol the agent works only inside the task
folder and the output directory; under ``public`` it may also search online for reference
files it needs, as the published runners allow (Job-Bench/job-bench-eval,
``eval/run_benchmark_*.sh``; see :mod:`jobbench.agents._protocol`).
"""

from __future__ import annotations

PROMPT_VERSION = "1"
"""Version of the ``jobbench`` prompt (recorded in ``lock.json``)."""
PUBLIC_PROMPT_VERSION = "public-1"
"""Version of the ``public`` prompt."""


def prompt_version(protocol: str = "jobbench") -> str:
    """The prompt version of ``protocol`` (:data:`PROMPT_VERSION` or
    :data:`PUBLIC_PROMPT_VERSION`)."""
    return PUBLIC_PROMPT_VERSION if protocol == "public" else PROMPT_VERSION


def standard_prompt(
    task_folder: str, output_dir: str, *, search_tool: bool = False, protocol: str = "jobbench"
) -> str:
    """The prompt for one trial.

    Args:
        task_folder: the task folder as the agent sees it (e.g. ``/workspace/task_folder``).
        output_dir: the output directory as the agent sees it (``/workspace/output``).
        search_tool: mention the offline ``search`` tool (builtin agent only).
        protocol: ``jobbench`` (work only inside the workspace) or ``public`` (online
            search for reference files allowed).

    Returns:
        The prompt text (stable for a given :func:`prompt_version`).
    """
    lines = [
        f"Task folder: {task_folder}",
        f"Output directory: {output_dir}",
        "",
        "How to work:",
        f"1. Read {task_folder}/TASK_INSTRUCTIONS.txt first.",
        "2. Open the reference files it lists (they are in the task folder). Use tools or code that suit each "
        "format; spreadsheets, documents, PDFs, databases and notebooks usually need a parser rather than a plain "
        "text read.",
        "3. Do the task exactly as the instructions ask.",
        f"4. Save only the final deliverables in {output_dir}, with the file names and formats the instructions "
        "ask for. Do not leave drafts, scratch files or intermediate data there.",
        "",
        "Rules:",
    ]
    if protocol == "public":
        lines.append(
            "- Use only the files in the task folder and the output directory. If the task needs "
            "reference material that is not there, you may look for it online and download it; "
            "touch nothing else on this machine."
        )
    else:
        lines.append("- Work only inside the task folder and the output directory.")
    lines.append(
        "- When sources disagree or information is ambiguous, examine the conflict, decide, and "
        "state in the deliverable which source you relied on and why."
    )
    if search_tool:
        lines.append(
            "- Some reference material may not be in the task folder; use the search tool to look for it."
        )
    return "\n".join(lines) + "\n"
