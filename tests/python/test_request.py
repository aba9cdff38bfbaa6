"""A verb over `pNN --VARIANT...` is a Verb declaration: parse_request does the rest."""

import re

import pytest

from puzzlelib.common import UsageError
from puzzlelib.request import BareUsageError, Verb, parse_request, pick

# The shape of a verb another command could add (e.g. profile): several variants, a size.
HELP = """\
usage: {prog} demo pNN [--VARIANT ...] [--solution] [--n N --tpb T]

A verb declared only here.
"""
DEMO = Verb("demo", pick("--solution", "--n", "--tpb"), HELP, missing="demo needs a puzzle, e.g. `{prog} demo p14`.")
ONE = Verb("one", pick("--solution"), HELP.replace("demo", "one"), missing="one needs a puzzle.", one_variant=True)


def test_a_declared_verb_gets_its_request(fixture_root):
    req = parse_request(fixture_root, ["p99", "--simple", "--multi-block", "--n", "9", "--tpb", "8", "--solution"],
                        DEMO)
    assert req.puzzle.name == "p99"
    assert [v.name for v in req.variants] == ["simple", "multi-block"]
    assert (req.n, req.tpb, req.solution, req.backend) == (9, 8, True, "auto")


def test_a_declared_verb_gets_the_usage_errors(fixture_root):
    with pytest.raises(UsageError, match="demo needs a puzzle"):
        parse_request(fixture_root, [], DEMO)
    with pytest.raises(UsageError, match=r"did you mean --simple\?"):
        parse_request(fixture_root, ["p99", "--simpel"], DEMO)
    with pytest.raises(UsageError, match="demo takes one puzzle, got: p99 p98"):
        parse_request(fixture_root, ["p99", "p98"], DEMO)
    with pytest.raises(BareUsageError, match="name the variant to one"):
        parse_request(fixture_root, ["p99"], ONE)


def test_help_with_a_puzzle_shows_its_variants(fixture_root, capsys):
    assert parse_request(fixture_root, ["p99", "--help"], DEMO) is None
    text = capsys.readouterr().out
    assert text.startswith("usage: python3 scripts/puzzle.py demo p99 [--VARIANT ...]")
    assert "--double-buffer" in text and "A verb declared only here." in text


def test_the_seed_is_drawn_once(fixture_root):
    req = parse_request(fixture_root, ["p99"], DEMO)
    assert not req.seed_given() and req.seed == req.seed


# ---- in Korean (issue 21): the usage errors and every --help text ----------------------------

KOREAN = {"PUZZLE_LANG": "", "LANG": "C.UTF-8", "LC_ALL": ""}


def test_an_unknown_puzzle_in_korean(cli, fixture_root):
    r = cli("run", "p15", "--lang", "ko", root=fixture_root, env=KOREAN)
    assert r.returncode == 2, r
    assert "오류: 'p15'라는 퍼즐은 없습니다" in r.stderr and "퍼즐: p98, p99" in r.stderr
    assert "(사용법은 `python3 scripts/puzzle.py run --help`)" in r.stderr
    assert "unknown puzzle" not in r.stderr and "error:" not in r.stderr and "for usage" not in r.stderr
    # English by default
    r = cli("run", "p15", root=fixture_root, env=KOREAN)
    assert "error: unknown puzzle 'p15'" in r.stderr


@pytest.mark.parametrize("args,korean,english", [
    (["run", "p99"], "오류: run할 variant를 지정하세요.", "name the variant to run"),
    (["run", "p99", "--simpel"], "p99에는 variant나 option --simpel이 없습니다 (--simple 말인가요?)", "has no variant"),
    (["run", "p99", "simple"], "simple은 option이 아닙니다: variant flag는 대시 두 개로 시작합니다", "is not an option"),
    (["run", "p99", "--simple", "--multi-block"], "run에는 variant 하나만 줄 수 있습니다", "takes one variant"),
    (["check", "--sed", "3"], "알 수 없는 option --sed (--seed 말인가요?)", "unknown option"),
    (["check", "p99", "p98"], "check에는 퍼즐을 하나까지만 줄 수 있습니다", "takes at most one"),
    (["run"], "run에는 퍼즐이 필요합니다. 예: `python3 scripts/puzzle.py run p14 --simple`.", "needs a puzzle"),
    (["run", "p99", "--simple", "--backend", "tpu"], "--backend는 auto, cpu, gpu 중 하나여야 합니다", "must be auto"),
    (["run", "p99", "--simple", "--seed"], "--seed에는 값이 필요합니다", "needs a value"),
    (["run", "p99", "--simple", "--seed", "x"], "--seed: 잘못된 값 'x'", "invalid value"),
    (["list", "--no-status=1"], "--no-status에는 값을 줄 수 없습니다", "does not take a value"),
    (["chek"], "오류: 'chek'라는 명령은 없습니다 (check 말인가요?)", "unknown command"),
    (["new", "15"], "퍼즐 이름은 p 뒤에 숫자가 오는 형식입니다(p15). 받은 이름: '15'", "puzzle names are"),
])
def test_usage_errors_in_korean(cli, fixture_root, args, korean, english):
    r = cli("--lang", "ko", *args, root=fixture_root, env=KOREAN)  # before the command: for all that follows
    assert r.returncode == 2, r
    assert korean in r.stderr, r.stderr
    assert english not in r.stderr, r.stderr


def test_the_overview_and_every_commands_help_in_korean(cli, fixture_root):
    from puzzlelib import cli as cli_module

    r = cli("--help", "--lang", "ko", root=fixture_root, env=KOREAN)
    assert r.returncode == 0 and r.stdout.startswith("사용법: python3 scripts/puzzle.py <command> [options]"), r
    assert "  run        variant 하나를 build하고 show 입력으로 실행" in r.stdout
    assert "build and run one variant" not in r.stdout and "describes a command's options" not in r.stdout
    for command in cli_module.COMMANDS:
        r = cli(command, "--help", "--lang", "ko", root=fixture_root, env=KOREAN)
        assert r.returncode == 0, (command, r)
        first = r.stdout.splitlines()[0]
        assert first.startswith("사용법: python3 scripts/puzzle.py %s" % command), (command, first)
        english = cli(command, "--help", root=fixture_root, env=KOREAN).stdout
        assert english.startswith("usage: "), (command, english)
        # every flag of the English help is in the Korean one, verbatim
        flags = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", english))
        assert flags <= set(re.findall(r"(?<![\w-])--[a-z][\w-]*", r.stdout)), (command, flags)
        # and no English sentence of it: the first line of its description
        description = english.split("\n\n")[1].splitlines()[0]
        assert description not in r.stdout, (command, description)


def test_a_puzzles_usage_in_korean(cli, fixture_root):
    r = cli("run", "p99", "--help", "--lang", "ko", root=fixture_root, env=KOREAN)
    assert r.returncode == 0, r
    assert r.stdout.startswith("사용법: python3 scripts/puzzle.py run p99 --VARIANT")
    assert "퍼즐 p99: Fixture scan\nvariant:\n  --simple" in r.stdout
    assert "--solution         여러분의 파일 대신 참고 답안을 실행" in r.stdout


def test_every_verbs_help_has_a_korean_form():
    """Each command's help is a catalogue msgid: a command whose help text changed without its
    Korean form would show English under --lang ko."""
    from puzzlelib import bench, commands, profile, trace
    from puzzlelib.messages import KO

    for verb in (commands.RUN, commands.CHECK, trace.TRACE, profile.PROFILE, bench.BENCH):
        assert verb.english_help in KO, verb.name
        assert verb.missing is None or verb.missing in KO, verb.name
