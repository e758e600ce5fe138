"""The table renderings: numeric CSV columns, escaped booktabs LaTeX that compiles and fits the page."""

import io
import re
import shutil
import subprocess

import pandas as pd
import pytest

from src.presentation.tables import latex_escape, numeric_table, paper_table, summarize, to_csv, to_latex
from test_report import fake_results

ODD = ["K_Means", "A&B", "50% NMF", "C#", "x^2 {y} ~z", "$cost", r"back\slash"]


def test_numeric_table_has_a_mean_and_a_std_column_per_method_in_percent():
    frame = fake_results("toy", ["KMeans", "NMF"])
    table = numeric_table(frame, ["NMF", "KMeans"])
    assert list(table.columns) == ["metric", "k", "NMF mean", "NMF std", "KMeans mean", "KMeans std"]
    assert list(zip(table["metric"], table["k"])) == [("AC", "2"), ("AC", "3"), ("AC", "Avg"),
                                                      ("NMI", "2"), ("NMI", "3"), ("NMI", "Avg")]
    mean, std = summarize(frame, "nmi")
    row = table[(table["metric"] == "NMI") & (table["k"] == "Avg")].iloc[0]
    assert row["KMeans mean"] == pytest.approx(mean.loc["Avg", "KMeans"])
    assert row["KMeans std"] == pytest.approx(std.loc["Avg", "KMeans"])


def test_csv_table_reads_back_as_numbers():
    frame = fake_results("toy", ["KMeans", "NMF"])
    back = pd.read_csv(io.StringIO(to_csv(frame, ["KMeans", "NMF"])))
    numbers = back.drop(columns=["metric", "k"])
    assert all(pd.api.types.is_float_dtype(numbers[c]) for c in numbers)
    assert not numbers.isna().any().any() and (numbers >= 0).all().all()
    expected = frame[frame.k == 2].query("method == 'NMF'")["acc"].mean() * 100
    assert back.loc[0, "NMF mean"] == pytest.approx(expected, rel=1e-5)


def test_latex_escape_covers_every_special_character():
    assert latex_escape("50% of a_b & c # $1 {x} ~ ^") == \
        r"50\% of a\_b \& c \# \$1 \{x\} \textasciitilde{} \textasciicircum{}"
    assert latex_escape(r"a\b") == r"a\textbackslash{}b"
    assert latex_escape("1 ± 2") == r"1 \ensuremath{\pm} 2"


def odd_table():
    return paper_table(fake_results("toy", ODD, ks=(2, 3, 4)), ODD)


def test_latex_table_is_escaped_booktabs_and_shrinks_to_the_text_width():
    text = to_latex(odd_table(), "Results on toy_set (mean ± std, %)")
    assert text.startswith("%") and "booktabs" in text.splitlines()[0] and "graphicx" in text.splitlines()[0]
    body = "\n".join(text.splitlines()[1:])
    for rule in (r"\toprule", r"\midrule", r"\bottomrule", r"\resizebox"):
        assert rule in body
    assert r"\hline" not in body and "±" not in body
    plain = re.sub(r"\\[%&_#${}]", "", body.replace("{%\n", "\n").replace(" & ", " "))
    assert re.search(r"[%&_#]", plain) is None  # every special character left is escaped
    assert r"toy\_set" in body and r"A\&B" in body and r"50\% NMF" in body


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_table_compiles_and_fits_the_page(tmp_path):
    wide = paper_table(fake_results("toy", ODD + [f"Method_{i}(alpha=100.0)" for i in range(6)]), None)
    (tmp_path / "table.tex").write_text(to_latex(wide, "A wide table: 13 methods, 100% escaped & fitted"))
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
                                      "\\begin{document}\n\\input{table.tex}\n\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    log = (tmp_path / "doc.log").read_text(errors="replace")
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0
    assert "Overfull \\hbox" not in log
