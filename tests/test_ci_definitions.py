"""The CI definitions parse and every command they run exists in the repository."""

from __future__ import annotations

import re
import shlex

import yaml
from testdata import REPO


def _commands(script_lines: list[str]) -> list[str]:
    """The program each script line starts (after `bash`, env assignments)."""
    out = []
    for line in script_lines:
        words = [w for w in shlex.split(line) if not re.match(r'^[A-Z_]+=', w)]
        if words and words[0] == 'bash':
            words = words[1:]
        if words:
            out.append(words[0])
    return out


def _exists(cmd: str) -> bool:
    if cmd.startswith('.venv/bin/'):
        name = cmd.removeprefix('.venv/bin/')
        pyproject = (REPO / 'pyproject.toml').read_text()
        return name in ('reframe', 'python') or f'{name} = ' in pyproject
    return (REPO / cmd).is_file()


def test_gitlab_ci_parses_and_references_existing_commands():
    ci = yaml.safe_load((REPO / '.gitlab-ci.yml').read_text())
    jobs = {k: v for k, v in ci.items() if isinstance(v, dict) and 'script' in v}
    assert set(jobs) == {'unit-tests', 'suite-and-gate'}
    for job in jobs.values():
        assert job['stage'] in ci['stages']
        for cmd in _commands(job['script'] + job.get('after_script', [])):
            assert _exists(cmd), f'{cmd} does not exist in the repository'


def test_github_workflow_runs_ci_entry_point():
    wf = yaml.safe_load((REPO / '.github/workflows/ci.yml').read_text())
    steps = wf['jobs']['ci']['steps']
    assert any('bash .ci/run' in s.get('run', '') for s in steps)
    assert (REPO / '.ci/run').is_file()


def test_ci_run_calls_the_readme_test_command():
    readme = (REPO / 'README.md').read_text()
    ci_run = (REPO / '.ci/run').read_text()
    assert 'bash scripts/run-tests.sh' in readme and 'bash scripts/run-tests.sh' in ci_run
    assert 'bash scripts/quickstart.sh' in readme and 'bash scripts/quickstart.sh' in ci_run
