"""make install puts the package where Debian's /usr/bin/python3 finds it
(DESTDIR honoured), and make uninstall removes it."""
import os
import subprocess
import sys

import pytest

from conftest import TOP


@pytest.mark.parametrize("prefix,subdir", [
    ("/usr/local", "lib/python%d.%d/dist-packages" % sys.version_info[:2]),
    ("/usr", "lib/python3/dist-packages")])
def test_install_and_uninstall(tmp_path, prefix, subdir):
    if sys.prefix != sys.base_prefix:
        pytest.skip("make install is for Debian's interpreter, not a venv "
                    "(this runs against a pip install)")
    build = os.environ.get("BUILD", os.path.join(TOP, "build"))
    stage = tmp_path / "stage"
    make = ["make", "-s", "-C", TOP, "BUILD=" + build, "DESTDIR=" + str(stage),
            "PREFIX=" + prefix, "PYTHON=" + sys.executable]
    subprocess.run(make + ["install"], check=True, stdout=subprocess.DEVNULL)
    site = str(stage) + prefix + "/" + subdir
    assert os.path.isfile(os.path.join(site, "riffle", "__init__.py"))
    # the system's own directory for that prefix is on the interpreter's path
    assert prefix + "/" + subdir in sys.path
    out = subprocess.run([sys.executable, "-c", "import riffle; print(riffle.__file__); "
                          "print(riffle.Permutation(10, 1)[0:10].tolist())"],
                         env=dict(os.environ, PYTHONPATH=site), cwd=str(tmp_path),
                         stdout=subprocess.PIPE, check=True, text=True).stdout.split("\n")
    assert out[0].startswith(site)
    assert sorted(eval(out[1])) == list(range(10))
    subprocess.run(make + ["uninstall"], check=True, stdout=subprocess.DEVNULL)
    assert not os.path.exists(os.path.join(site, "riffle"))
