"""pytest's JUnit XML report as TAP: one "ok" / "not ok" / "ok ... # skip
reason" line per test case, failures' messages as diagnostics.

Usage: junit_tap.py REPORT [PREFIX]
  With PREFIX, the lines are unnumbered and unplanned, each test's name
  after PREFIX (for a check that prints other results too and numbers them
  all at the end); without it, a plan "1..N" and numbered lines."""
import sys
import xml.etree.ElementTree as ET


def lines(report, prefix):
    try:
        cases = list(ET.parse(report).getroot().iter("testcase"))
    except (OSError, ET.ParseError) as e:
        return ["not ok - %spytest wrote no report: %s" % (prefix, e)]
    out = []
    for c in cases:
        name = "%s%s::%s" % (prefix, c.get("classname", "").rsplit(".", 1)[-1], c.get("name"))
        skip = c.find("skipped")
        bad = c.find("failure") if c.find("failure") is not None else c.find("error")
        if bad is not None:
            out.append("not ok - %s" % name)
            out += ["#   " + line for line in (bad.get("message") or "").splitlines()[:5]]
        elif skip is not None:
            reason = (skip.get("message") or "skipped").replace("\n", " ")
            out.append("ok - %s # skip %s" % (name, reason))
        else:
            out.append("ok - %s" % name)
    return out


def main():
    bare = len(sys.argv) > 2
    out = lines(sys.argv[1], sys.argv[2] if bare else "")
    if bare:
        print("\n".join(out))
        return
    results = [l for l in out if not l.startswith("#")]
    print("1..%d" % len(results))
    n = 0
    for line in out:
        if line.startswith("#"):
            print(line)
            continue
        n += 1
        ok, rest = line.split(" - ", 1)
        print("%s %d - %s" % (ok, n, rest))


if __name__ == "__main__":
    main()
