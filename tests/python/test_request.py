"""A verb over `pNN --VARIANT...` is a Verb declaration: parse_request does the rest."""

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
