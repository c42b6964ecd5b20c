"""The project loader on thousands of generated files: only its own error comes out, in one
short line. bench/loader_fuzz.py runs the same generator on 20,000 files."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from studio.core.project.document import ProjectFileError, load_project
from tests.project_documents import file_bytes

EXAMPLES = 2_000


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=file_bytes())
def test_the_loader_raises_only_project_file_errors_in_one_short_line(tmp_path_factory, data):
    path = tmp_path_factory.getbasetemp() / "fuzzed.studio.json"
    path.write_bytes(data)
    try:
        load_project(path)
    except ProjectFileError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) <= 400, message
