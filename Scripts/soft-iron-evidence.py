#!/usr/bin/env python3
"""Whether broad-dev's magnetometers show soft iron (scale and cross-axis errors) that a fit could remove: the figures
behind "No soft-iron correction" in Docs/Attitude.md. Needs numpy. Usage:

    Scripts/soft-iron-evidence.py ../shared/datasets/broad-dev [corrected-traces-directory]

For every recording it prints:
- sphere: the RMS distance of all raw readings from the best sphere (hard iron only), in µT;
- ellipsoid: the same for the best general ellipsoid (hard and soft iron, 9 parameters), and the ratio of its longest to
  its shortest axis ("degenerate" when the fit is not an ellipsoid: the readings do not cover enough directions);
- truth: with the optical ground truth, the reading modelled as m = K·(Rᵀe) + b (R the true attitude, e a constant
  earth field): the RMS residual with K = identity and with K a general 3×3 matrix, and the eigenvalues of K's
  symmetric part (K = rotation · symmetric, by the SVD). A soft-iron error of k % shows as eigenvalues k % apart.

With a second argument it writes each recording that covers all directions (02, 05, 07) with the readings corrected
by the inverse of that symmetric part (the best soft-iron correction the truth allows), for scoring against the
original recordings with the same estimator. It never writes over a file: a directory that already holds one of
those traces (the dataset's own, say) is refused by name."""
import glob, os, sys
import numpy as np

data = sys.argv[1]
out = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.join(data, "..", "..", "tools"))
import score_attitude as S  # noqa: E402  (the scoring tool's readers of the ground truth)


def rotation_matrices(q):
    w, x, y, z = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


trials = {t["name"]: t for t in S.load_dataset(data)}
for path in sorted(glob.glob(os.path.join(data, "*.trace.csv"))):
    name = os.path.basename(path)[: -len(".trace.csv")]
    lines = open(path).read().splitlines()
    comments = [l for l in lines if l.startswith("#")]
    header, rows = [l for l in lines if not l.startswith("#")][0], [l for l in lines if not l.startswith("#")][1:]
    table = np.array([[float(v) for v in r.split(",")] for r in rows])
    m = table[:, 7:10]
    finite = np.isfinite(m).all(1)
    x, y, z = m[finite].T

    # Sphere |m − c| = r, linear in (c, r² − |c|²).
    A = np.stack([2 * x, 2 * y, 2 * z, np.ones_like(x)], 1)
    s = np.linalg.lstsq(A, x * x + y * y + z * z, rcond=None)[0]
    radius = np.sqrt(s[3] + s[:3] @ s[:3])
    sphere = np.sqrt(np.mean((np.linalg.norm(m[finite] - s[:3], axis=1) - radius) ** 2))

    # Ellipsoid (m − c)ᵀM(m − c) = 1, linear in the 9 coefficients of xᵀAx + 2bᵀx = 1.
    D = np.stack([x * x, y * y, z * z, 2 * x * y, 2 * x * z, 2 * y * z, 2 * x, 2 * y, 2 * z], 1)
    v = np.linalg.lstsq(D, np.ones_like(x), rcond=None)[0]
    Q = np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])
    centre = -np.linalg.solve(Q, v[6:9])
    M = Q / (1 + centre @ Q @ centre)
    eigenvalues, vectors = np.linalg.eigh(M)
    if (eigenvalues > 0).all():
        half = vectors @ np.diag(np.sqrt(eigenvalues)) @ vectors.T
        scaled = np.linalg.norm((m[finite] - centre) @ half.T, axis=1) * np.sqrt(np.mean(1 / eigenvalues))
        ellipsoid = "%.2f µT, axes %.3f" % (np.sqrt(np.mean((scaled - scaled.mean()) ** 2)),
                                            np.sqrt(eigenvalues.max() / eigenvalues.min()))
    else:
        ellipsoid = "degenerate"

    # With the ground truth.
    gt = S.load_gt(data, trials[name])
    use = gt["valid"] & finite
    Rt = np.transpose(rotation_matrices(gt["quat"][use]), (0, 2, 1))
    mm = m[use]
    B = np.zeros((len(mm) * 3, 6))
    B[:, :3] = Rt.reshape(-1, 3)
    B[:, 3:] = np.tile(np.eye(3), (len(mm), 1))
    hard = np.linalg.lstsq(B, mm.reshape(-1), rcond=None)[0]
    residual_hard = np.sqrt(np.mean((mm.reshape(-1) - B @ hard) ** 2))
    u = np.einsum("nij,j->ni", Rt, hard[:3])
    C = np.hstack([u, np.ones((len(mm), 1))])
    K = np.linalg.lstsq(C, mm, rcond=None)[0]
    residual_soft = np.sqrt(np.mean((mm - C @ K) ** 2))
    U, sigma, Vt = np.linalg.svd(K[:3].T)
    symmetric = Vt.T @ np.diag(sigma) @ Vt  # K = (U·Vt)·symmetric
    print("%-42s sphere %.2f µT | ellipsoid %s | truth: %.2f → %.2f µT, symmetric part %s" % (
        name, sphere, ellipsoid, residual_hard, residual_soft,
        " ".join("%.4f" % e for e in np.linalg.eigvalsh(symmetric))))

    if out and name[:2] in ("02", "05", "07"):
        offset = K[3]
        corrected = (m - offset) @ np.linalg.inv(symmetric).T + offset
        os.makedirs(out, exist_ok=True)
        target = os.path.join(out, name + ".trace.csv")
        try:
            f = open(target, "x")  # never over a file that exists: the recordings themselves, say
        except FileExistsError:
            sys.exit(f"soft-iron-evidence: {target} exists; give a directory without corrected traces in it")
        with f:
            f.write("\n".join(comments + [header]) + "\n")
            for row, c in zip(rows, corrected):
                cells = row.split(",")
                cells[7:10] = ["%.4f" % value for value in c]
                f.write(",".join(cells) + "\n")
