"""Exported scripts run as programs, several in one separate Python process (which imports
TensorFlow once, not once per script). Each runs as its own program would: as ``__main__``
in a fresh namespace, with its own ``sys.argv`` and its own standard output, after Keras's
session is cleared and its dtype policy is float32 again. The runner itself imports no Layer
Studio code, so nothing of the app is loaded unless a script imports it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

RUN_AS_MAIN = "import runpy, sys\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
"""A job's code that runs the script ``argv[0]`` as ``python script args...`` would."""

_RUNNER = """
import contextlib, json, os, sys, traceback
import keras

for job in json.loads(open(sys.argv[1], encoding="utf-8").read()):
    keras.backend.clear_session()
    keras.mixed_precision.set_global_policy("float32")
    os.chdir(job["cwd"])
    sys.argv = list(job["argv"])
    error = ""
    with open(job["stdout"], "w", encoding="utf-8") as out, contextlib.redirect_stdout(out):
        try:
            exec(compile(job["code"], job["argv"][0], "exec"), {"__name__": "__main__"})
        except BaseException:
            error = traceback.format_exc()
    with open(job["error"], "w", encoding="utf-8") as file:
        file.write(error)
"""


@dataclass(frozen=True)
class Job:
    """``code`` run with ``argv`` as ``sys.argv``, from the folder ``cwd``."""

    argv: list[str]
    cwd: Path
    code: str = RUN_AS_MAIN


@dataclass(frozen=True)
class Ran:
    """What a job printed, and its error: a traceback, or what the process said if it died
    before the job was done ("" when the job ran to its end)."""

    stdout: str
    error: str


def run_jobs(jobs: dict[str, Job], folder: Path, timeout: float = 600) -> dict[str, Ran]:
    """Run ``jobs`` one after the other in one new Python process; their outputs go to
    ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: (folder / f"{name}.out", folder / f"{name}.err") for name in jobs}
    plan = [{"argv": [str(a) for a in job.argv], "cwd": str(job.cwd), "code": job.code,
             "stdout": str(files[name][0]), "error": str(files[name][1])}
            for name, job in jobs.items()]
    (folder / "jobs.json").write_text(json.dumps(plan), encoding="utf-8")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    process = subprocess.run([sys.executable, "-c", _RUNNER, str(folder / "jobs.json")],
                             capture_output=True, text=True, timeout=timeout, env=env,
                             check=False, cwd=folder)
    ran = {}
    for name, (out, err) in files.items():
        done = err.is_file()
        ran[name] = Ran(out.read_text(encoding="utf-8") if out.is_file() else "",
                        err.read_text(encoding="utf-8") if done else
                        f"exit code {process.returncode}: {process.stderr[-3000:]}")
    return ran
