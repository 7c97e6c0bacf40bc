"""Shared fixtures: the riffle program of the build under test."""
import os
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_env(**more):
    """The environment for a child Python that must import the riffle under
    test -- the tree's or a pip install's, whichever this process imported."""
    import riffle
    where = os.path.dirname(os.path.dirname(os.path.abspath(riffle.__file__)))
    return dict(os.environ, PYTHONPATH=where, **more)


@pytest.fixture(scope="session")
def riffle_bin():
    """Path of the riffle program ($RIFFLE, else build/riffle)."""
    path = os.environ.get("RIFFLE") or os.path.join(TOP, "build", "riffle")
    if not os.access(path, os.X_OK):
        pytest.skip("no riffle program at %s" % path)
    return path


@pytest.fixture(scope="session")
def cli(riffle_bin):
    """cli(*args, input=None) -> stdout bytes of the riffle program."""
    def run(*args, input=None):
        return subprocess.run([riffle_bin] + [str(a) for a in args], input=input,
                              stdout=subprocess.PIPE, check=True).stdout
    return run


def numbers(out):
    """The decimal lines of a program's output as a list of ints."""
    return [int(x) for x in out.split()]
