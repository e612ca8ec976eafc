"""The README's two commands are the ones that work: CI runs the test command verbatim, and the first opens a
sample that is bundled. The README and the JSON schema name every format (and the schema every policy)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    """The fenced one-line commands of the README's "Try it" section, in order."""
    section = ROOT.joinpath("README.md").read_text().split("## Try it", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```\n(.*?)```", section, re.S)]


def test_the_readme_has_exactly_two_commands_and_ci_runs_the_second():
    install_and_open, install_and_test = readme_commands()
    ci = ROOT.joinpath(".ci", "run").read_text().splitlines()
    assert install_and_test in ci
    assert "pytest" in install_and_test and "[test]" in install_and_test


def test_the_first_command_opens_a_bundled_sample():
    install_and_open = readme_commands()[0]
    sample = install_and_open.rsplit(" ", 1)[1]
    assert ROOT.joinpath(sample).is_file()
    assert "\n" not in install_and_open


def test_the_readme_and_the_json_schema_name_every_format_and_policy():
    from inspector.core.limits import POLICIES
    from inspector.core.model import FORMATS

    readme = (ROOT / "README.md").read_text()
    schema = (ROOT / "docs" / "report-json.md").read_text()
    for fmt in FORMATS:
        assert f"`{fmt}`" in readme and f"`{fmt}`" in schema, fmt
    for policy in POLICIES:
        assert f"`{policy}`" in schema, policy
