"""jobbench.interop.harbor: run JobBench tasks on Harbor and bring Harbor's jobs back.

* :func:`export_harbor` (``jobbench export harbor DATASET OUT_DIR``): one Harbor task per
  JobBench task, with a separate verifier environment that grades with our judge.
* :func:`import_harbor_job` (``jobbench import harbor JOB_DIR RUN_DIR``): a Harbor job's
  trials as a JobBench run directory, graded, so ``report``, ``compare``, ``calibrate``
  and ``gate`` work on it.
* :mod:`jobbench.interop.harbor.verify`: the verifier entry point inside Harbor.

Nothing here imports ``harbor``: the files are written and read in Harbor's documented
layout (tested against the versions in :data:`HARBOR_RANGE`, the ``jobbench[harbor]``
extra), so the bridge works where Harbor itself cannot be installed (Harbor needs
Python ≥ 3.12).
"""

from ..._lazy import lazy_attributes

_LAZY: dict[str, str] = {
    "ExportError": "._export",
    "ExportResult": "._export",
    "ExportedTask": "._export",
    "export_harbor": "._export",
    "HARBOR_RANGE": "._layout",
    "HarborImportError": "._import",
    "ImportResult": "._import",
    "import_harbor_job": "._import",
    "register_cli": "._cli",
}

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)

__all__ = sorted(_LAZY)
