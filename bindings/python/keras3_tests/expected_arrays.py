"""The arrays of one case in an expected.npz of these checks: NAME/KIND0, NAME/KIND1, ...
(shared by the Keras 3 side and kbackend's, each run by its own Python)."""


def arrays(expected, name, kind):
    out, i = [], 0
    while "%s/%s%d" % (name, kind, i) in expected:
        out.append(expected["%s/%s%d" % (name, kind, i)])
        i += 1
    return out
